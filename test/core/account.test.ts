import { describe, expect, it } from 'vitest';
import { createSandbox, seededIds, type WallClock } from '../../src/core/index.js';
import { memoryStore } from '../../src/sandbox/store/database.js';

/** Real time moves between two reads of the clock: here a millisecond each read. */
class TickingClock implements WallClock {
  private ms = Date.parse('2026-11-21T12:00:00Z');
  now(): number {
    return this.ms++;
  }
}

describe('a write reads the clock once', () => {
  it('a payment, its transfer, its cash-in and the events they raise carry one instant each, however the clock ticks', () => {
    const account = createSandbox({ storage: memoryStore(), clock: new TickingClock(), ids: seededIds(3) }).account('sk_account');
    const payment = account.createVaPayment({ paymentHubId: 1, currency: 'ARS', lockMode: 'time', amount: 1500, callbackUrl: 'http://127.0.0.1:9/h' });
    const transfer = account.createTransfer({ to: payment.cvu, total: 1500 });
    const events = account.listEvents({ vaPaymentId: payment.id }).data.map((event) => [event.eventType, event.createdAt]);
    expect(events.reverse()).toEqual([
      ['created', payment.createdAt],
      ['cash_in_received', transfer.createdAt],
      ['succeeded', transfer.createdAt],
    ]);
    expect(account.getVaPayment(payment.id)).toMatchObject({ completedAt: transfer.createdAt, updatedAt: transfer.createdAt });
  });
});
