import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { api, CLIENT, PAYMENT, stored, useServer, useTmp } from './helpers.js';

/** `start --keep D`: ended payments, their events, deliveries and transfers go after D days of sandbox clock; clients, the ledger and invoices stay. */
describe('retention (--keep)', () => {
  it('a clock move past D days removes what ended before, and only that; /health says the setting', async () => {
    const server = await useServer({ keepDays: 1 }, 'test');
    expect(await (await fetch(`${server.url}/health`)).json()).toMatchObject({ keepDays: 1 });
    const a = api(server.url, 'sk_keep');
    const client = await a.data('POST', '/api/v1/clients', { ...CLIENT, name: 'Kept SA', taxId: '20-11111111-1' });
    const cashIn = await a.data('POST', '/sandbox/v1/transfers', { to: client.cvu, total: 100 });
    const old = await a.data('POST', '/api/v1/va-payments', {
      ...PAYMENT,
      amount: 10,
      clientId: client.id,
      callbackUrl: 'http://127.0.0.1:9/hooks',
    });
    await a.data('POST', `/api/v1/va-payments/${old.id}/cancel`);
    const returned = await a.data('POST', '/sandbox/v1/transfers', { to: old.cvu, total: 10 });
    expect(returned.outcome).toBe('returned');
    await a.data('POST', '/sandbox/v1/clock/advance', { seconds: 25 * 3600 });
    const recent = await a.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 11 });
    await a.data('POST', `/api/v1/va-payments/${recent.id}/cancel`);
    const balance = await a.data('GET', `/api/v1/clients/${client.id}/balance`);
    const ledger = await a.data('GET', `/api/v1/clients/${client.id}/transactions`);

    // Another move: the payment cancelled 25 h ago goes with its events, deliveries and returned transfer.
    await a.data('POST', '/sandbox/v1/clock/advance', { seconds: 60 });
    expect((await a.get(`/api/v1/va-payments/${old.id}`)).status).toBe(404);
    expect((await a.list('/api/v1/va-payments')).data.map((p: { id: string }) => p.id)).toEqual([recent.id]);
    expect((await a.list(`/sandbox/v1/events?vaPaymentId=${old.id}`)).pagination.total).toBe(0);
    expect(
      (await a.list('/sandbox/v1/deliveries?limit=100')).data.filter(
        (d: { eventType: string }) => d.eventType === 'created',
      ),
    ).toHaveLength(1);
    const transfers = (await a.list('/sandbox/v1/transfers')).data.map((t: { id: string }) => t.id);
    expect(transfers).toContain(cashIn.id);
    expect(transfers).not.toContain(returned.id);
    // The client, its ledger (the cash-in, whose payment is gone too) and its balance stay.
    expect(await a.data('GET', `/api/v1/clients/${client.id}`)).toMatchObject({ id: client.id, name: 'Kept SA' });
    expect(await a.data('GET', `/api/v1/clients/${client.id}/transactions`)).toEqual(ledger);
    expect(await a.data('GET', `/api/v1/clients/${client.id}/balance`)).toEqual(balance);
  });

  it('an account read after a start with --keep is pruned at once, in the database too; without --keep nothing goes', async () => {
    const data = join(useTmp(), 'state.db');
    const first = await useServer({ data }, 'test');
    const a = api(first.url, 'sk_keep_later');
    const payment = await a.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 12 });
    await a.data('POST', `/api/v1/va-payments/${payment.id}/cancel`);
    await a.data('POST', '/sandbox/v1/clock/advance', { seconds: 3 * 24 * 3600 });
    expect((await a.get(`/api/v1/va-payments/${payment.id}`)).status).toBe(200); // no --keep: kept
    await first.close();

    const second = await useServer({ data, keepDays: 2 }, 'test');
    expect((await api(second.url, 'sk_keep_later').get(`/api/v1/va-payments/${payment.id}`)).status).toBe(404);
    await second.close();
    expect(stored(data, 'sk_keep_later').vaPayments).toEqual({});
  });
});
