import { describe, expect, it } from 'vitest';
import { createSandbox, seededIds, type WallClock } from '../../src/core/index.js';
import { memoryStore } from '../../src/sandbox/store/database.js';
import { PAYMENT, useServer } from '../helpers.js';

/** Real time moves between two reads of the clock: here a millisecond each read. */
class TickingClock implements WallClock {
  private ms = Date.parse('2026-11-21T12:00:00Z');
  now(): number {
    return this.ms++;
  }
}

describe('a write reads the clock once', () => {
  it('a payment, its transfer, its cash-in and the events they raise carry one instant each, however the clock ticks', () => {
    const account = createSandbox({ storage: memoryStore(), clock: new TickingClock(), ids: seededIds(3) }).account(
      'sk_account',
    );
    const payment = account.write(() =>
      account.vaPayments.createVaPayment({
        paymentHubId: 1,
        currency: 'ARS',
        lockMode: 'time',
        amount: 1500,
        callbackUrl: 'http://127.0.0.1:9/h',
      }),
    );
    const transfer = account.write(() => account.transfers.createTransfer({ to: payment.cvu, total: 1500 }));
    const events = account.events
      .listEvents({ vaPaymentId: payment.id })
      .data.map((event) => [event.eventType, event.createdAt]);
    expect(events.reverse()).toEqual([
      ['created', payment.createdAt],
      ['cash_in_received', transfer.createdAt],
      ['succeeded', transfer.createdAt],
    ]);
    expect(account.vaPayments.getVaPayment(payment.id)).toMatchObject({
      completedAt: transfer.createdAt,
      updatedAt: transfer.createdAt,
    });
  });
});

describe('a write route reads the clock once', () => {
  it("the payment a create makes and its `created` event carry one instant, however the clock ticks (routes/kit.ts's write)", async () => {
    const { app } = await useServer({ clock: new TickingClock() }, 'test');
    const headers = { authorization: 'Bearer sk_route', host: '127.0.0.1', 'content-type': 'application/json' };
    const body = JSON.stringify({ ...PAYMENT, amount: 1500, callbackUrl: 'http://127.0.0.1:9/h' });
    const { data: payment } = (await (
      await app.request('/api/v1/va-payments', { method: 'POST', headers, body })
    ).json()) as { data: { id: string; createdAt: string } };
    const { data: events } = (await (
      await app.request(`/sandbox/v1/events?vaPaymentId=${payment.id}`, { headers })
    ).json()) as { data: { createdAt: string }[] };
    expect(events.map((event) => event.createdAt)).toEqual([payment.createdAt]);
  });
});
