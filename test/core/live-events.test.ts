import { describe, expect, it } from 'vitest';
import { createSandbox, FakeClock, type LiveEvent, seededIds } from '../../src/core/index.js';
import { memoryStore } from '../../src/sandbox/store/database.js';
import { PAYMENT } from '../helpers.js';

describe('live events (Sandbox.on)', () => {
  it('a listener for some types hears only those, one for all hears every one as it was raised, and none hears after leaving', () => {
    const sandbox = createSandbox({
      storage: memoryStore(),
      clock: new FakeClock(Date.parse('2026-11-21T12:00:00Z')),
      ids: seededIds(31),
    });
    const all: LiveEvent[] = [];
    const deliveries: LiveEvent[] = [];
    const leaveAll = sandbox.on((live) => all.push(live));
    const leaveDeliveries = sandbox.on((live) => deliveries.push(live), ['delivery']);
    const account = sandbox.account('sk_live');

    const payment = account.vaPayments.createVaPayment({
      ...PAYMENT,
      amount: 10,
      callbackUrl: 'http://127.0.0.1:9/hook',
    });
    const [due] = account.deliveries.dueDeliveries(new Set());
    account.deliveries.recordAttempt(due!.delivery, {
      startedAt: account.now(),
      durationMs: 1,
      responseStatus: 200,
      responseBody: '',
      error: null,
      errorMessage: null,
    });

    expect(all.map((live) => live.type)).toEqual(['event', 'delivery']);
    const [raised] = all as Extract<LiveEvent, { type: 'event' }>[];
    expect(raised!.event).toMatchObject({
      eventType: 'created',
      vaPaymentId: payment.id,
      body: { vaPaymentId: payment.id, status: 'waiting' },
    });
    expect(raised!.event.deliveries).toEqual([expect.objectContaining({ status: 'pending' })]);
    expect(deliveries).toEqual([all[1]]);

    leaveAll();
    account.vaPayments.createVaPayment({ ...PAYMENT, amount: 11 });
    expect(all).toHaveLength(2);
    expect(deliveries).toHaveLength(1);
    leaveDeliveries();
  });
});
