/**
 * `--idempotency-key KEY` on every CLI command that POSTs to `/api/v1` (contract part 9): sent as the
 * Idempotency-Key header, so the same command again gets the same answer and makes nothing twice.
 */
import { describe, expect, it } from 'vitest';
import { useCliSandbox } from './helpers.js';

const { account } = await useCliSandbox('sk_cli_idem');

describe('--idempotency-key', () => {
  it('payments create: the same key twice gives the same answer and one payment; another body is refused', async () => {
    const a = account();
    const args = [
      'payments',
      'create',
      '--amount',
      '1500',
      '--external-reference',
      'order-17',
      '--idempotency-key',
      'order-17',
    ];
    const first = await a.json(args);
    const again = await a.json(args);
    expect(again).toEqual(first);
    expect((await a.api.list('/api/v1/va-payments')).pagination.total).toBe(1);
    const other = await a.cli(['payments', 'create', '--amount', '99', '--idempotency-key', 'order-17']);
    expect(other.code).toBe(1);
    expect(other.stderr).toMatch(/^va-sandbox: IDEMPOTENCY_KEY_CONFLICT: /);
    // Without a key, each run makes one more.
    await a.json(['payments', 'create', '--amount', '1500']);
    expect((await a.api.list('/api/v1/va-payments')).pagination.total).toBe(2);
  });

  it('clients create, invoices create and payments cancel: one record each, the first answer replayed', async () => {
    const a = account();
    const create = [
      'clients',
      'create',
      '--name',
      'Ana',
      '--tax-id',
      '20-12345678-6',
      '--idempotency-key',
      'client-ana',
    ];
    const client = await a.json(create);
    expect(await a.json(create)).toEqual(client);
    const invoice = ['invoices', 'create', client.id, '--total-amount', '300', '--idempotency-key', 'invoice-1'];
    const made = await a.json(invoice);
    expect(await a.json(invoice)).toEqual(made);
    expect((await a.api.list(`/api/v1/clients/${client.id}/invoices`)).pagination.total).toBe(1);
    const payment = await a.json(['payments', 'create', '--amount', '10']);
    const cancel = ['payments', 'cancel', payment.id, '--idempotency-key', 'cancel-1'];
    const cancelled = await a.json(cancel);
    // A second cancel without the key is 409; with it, the first answer comes back.
    expect(await a.json(cancel)).toEqual(cancelled);
    expect((await a.cli(['payments', 'cancel', payment.id])).code).toBe(1);
    const events = await a.api.list(`/sandbox/v1/events?vaPaymentId=${payment.id}`);
    expect(events.data.map((e: { eventType: string }) => e.eventType)).toEqual(['cancelled', 'created']);
  });
});
