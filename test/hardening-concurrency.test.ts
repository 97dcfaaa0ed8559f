import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type Api, api, CLIENT, PAYMENT, useServer, useTmp } from './helpers.js';

/**
 * Hardening (d): 50 transfers at once to one time-locked VA payment, on a file-backed server. Sums are exact to the
 * cent (amounts chosen so that float addition would drift), exactly one terminal event is raised, and the status
 * agrees with the sum. Transfers that arrive after the payment ended are returned and change nothing.
 */
const server = await useServer({ data: join(useTmp(), 'state.db') });
let keyN = 0;
const account = () => api(server.url, `sk_race_${++keyN}`);

/** 50 totals in cents: 0.10, 0.20, 0.30 … — each a float that is not exact in binary. */
const TOTALS = Array.from(
  { length: 50 },
  (_, i) => [10, 20, 30, 70, 110, 1, 3, 33, 99, 7][i % 10]! * (1 + Math.floor(i / 10)),
);
const TAXES = TOTALS.map((cents, i) => (i % 3 === 0 ? Math.floor(cents / 10) : 0));
const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

async function race(client: Api, cvu: string) {
  const responses = await Promise.all(
    TOTALS.map((cents, i) =>
      client.post('/sandbox/v1/transfers', { to: cvu, total: cents / 100, taxes: TAXES[i]! / 100 }),
    ),
  );
  expect(responses.map((r) => r.status)).toEqual(TOTALS.map(() => 201));
  return responses.map((r, i) => ({ ...r.body.data, cents: TOTALS[i]!, taxCents: TAXES[i]! }));
}

async function eventsOf(client: Api, paymentId: string): Promise<any[]> {
  const events: any[] = [];
  for (let page = 1; ; page++) {
    const data = await client.list(`/sandbox/v1/events?limit=100&page=${page}`);
    events.push(...data.data.filter((e: any) => e.vaPaymentId === paymentId));
    if (page >= data.pagination.totalPages) return events;
  }
}

const cents = (ars: number) => Math.round(ars * 100);

describe('50 concurrent transfers to one time-locked VA payment', () => {
  it('summing exactly to the amount: all credited, exact sums, completed, exactly one succeeded', async () => {
    const client = account();
    const owner = await client.data('POST', '/api/v1/clients', { ...CLIENT, name: 'Race SA', taxId: '20-30405060-7' });
    const amount = sum(TOTALS);
    const payment = await client.data('POST', '/api/v1/va-payments', {
      ...PAYMENT,
      amount: amount / 100,
      lockMode: 'time',
      clientId: owner.id,
    });
    const transfers = await race(client, payment.cvu);

    expect(transfers.every((t) => t.outcome === 'credited')).toBe(true);
    const after = await client.data('GET', `/api/v1/va-payments/${payment.id}`);
    const net = sum(TOTALS) - sum(TAXES);
    expect(cents(after.totalReceived)).toBe(amount);
    expect(after.totalReceived).toBe(amount / 100);
    expect(after.receivedAmount).toBe(net / 100);
    expect(after.remainingAmount).toBe(0);
    expect(after.status).toBe('completed');
    expect(after.cashIns).toHaveLength(50);
    expect(sum(after.cashIns.map((c: any) => cents(c.total)))).toBe(amount);

    const events = await eventsOf(client, payment.id);
    const types = events.map((e) => e.eventType);
    expect(types.filter((t) => t === 'succeeded' || t === 'overpaid')).toEqual(['succeeded']);
    expect(types.filter((t) => t === 'cash_in_received')).toHaveLength(50);
    expect(types.filter((t) => t === 'underpaid')).toHaveLength(49);
    // The last cash-in event reports the final totals.
    const succeeded = events.find((e) => e.eventType === 'succeeded');
    expect(succeeded.body.payload).toMatchObject({ receivedAmount: net / 100, remainingAmount: 0 });

    // The client's ledger got each net amount once, exactly.
    const balance = await client.data('GET', `/api/v1/clients/${owner.id}/balance`);
    expect(balance.totalCashIn).toBe(net / 100);
  });

  it('crossing the amount midway: one terminal event, the rest returned, status agrees with the sum', async () => {
    const client = account();
    // Somewhere in the middle of the total, and not on a boundary any prefix sum would hit by design.
    const amount = Math.floor(sum(TOTALS) / 2) + 1;
    const payment = await client.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: amount / 100 });
    const transfers = await race(client, payment.cvu);

    const credited = transfers.filter((t) => t.outcome === 'credited');
    const returned = transfers.filter((t) => t.outcome === 'returned');
    expect(credited.length + returned.length).toBe(50);
    expect(returned.length).toBeGreaterThan(0);
    for (const t of returned) expect(t).toMatchObject({ target: null, eventIds: [] });
    const gross = sum(credited.map((t) => t.cents));
    const net = gross - sum(credited.map((t) => t.taxCents));
    const after = await client.data('GET', `/api/v1/va-payments/${payment.id}`);
    // In the order they were credited, every cash-in but the last left the payment short of its amount.
    const inOrder = after.cashIns.map((c: any) => cents(c.total));
    expect(sum(inOrder.slice(0, -1))).toBeLessThan(amount);
    expect(sum(inOrder)).toBe(gross);
    expect(gross).toBeGreaterThanOrEqual(amount);

    expect(after.totalReceived).toBe(gross / 100);
    expect(after.receivedAmount).toBe(net / 100);
    expect(after.remainingAmount).toBe(0);
    expect(after.status).toBe(gross === amount ? 'completed' : 'overpaid');
    expect(after.cashIns.map((c: any) => c.transferId).sort()).toEqual(credited.map((t) => t.id).sort());

    const types = (await eventsOf(client, payment.id)).map((e) => e.eventType);
    const terminal = types.filter((t) => t === 'succeeded' || t === 'overpaid');
    expect(terminal).toEqual([gross === amount ? 'succeeded' : 'overpaid']);
    expect(types.filter((t) => t === 'cash_in_received')).toHaveLength(credited.length);
    expect(types.filter((t) => t === 'underpaid')).toHaveLength(credited.length - 1);

    // The CVU was released: nothing later lands on the ended payment.
    const late = await client.data('POST', '/sandbox/v1/transfers', { to: payment.cvu, total: 1 });
    expect(late.outcome).toBe('returned');
    expect((await client.data('GET', `/api/v1/va-payments/${payment.id}`)).totalReceived).toBe(gross / 100);
  });
});
