import { describe, expect, it } from 'vitest';
import { createSandbox, FakeClock, seededIds } from '../../src/core/index.js';
import { memoryStore } from '../../src/sandbox/store/database.js';
import { PAYMENT } from '../helpers.js';

/** An account whose payments all call back to one URL, with a sandbox clock the test moves. */
function setup() {
  const clock = new FakeClock(Date.parse('2026-11-21T12:00:00Z'));
  const storage = memoryStore();
  const sandbox = createSandbox({ storage, clock, ids: seededIds(7) });
  const account = sandbox.account('sk_queue');
  const create = (amount: number) =>
    account.vaPayments.createVaPayment({ ...PAYMENT, amount, callbackUrl: 'http://127.0.0.1:9/hook' });
  const due = (inFlight = new Set<string>()) =>
    [...account.deliveries.dueDeliveries(inFlight)].map(({ delivery }) => delivery);
  const fail = (id: string) =>
    account.deliveries.recordAttempt(storage.records('sk_queue').get('deliveries', id)!, {
      startedAt: account.now(),
      durationMs: 1,
      responseStatus: 500,
      responseBody: '',
      error: 'http_status',
      errorMessage: 'HTTP 500',
    });
  return { clock, account, create, due, fail };
}

describe('the delivery queue', () => {
  it('gives first attempts in the order they were raised, one event of a payment at a time', () => {
    const { account, create, due } = setup();
    const first = create(10);
    const second = create(20);
    account.vaPayments.cancelVaPayment(first.id);
    // The first payment's `cancelled` waits until its `created` has had its first attempt, in flight or not.
    const [createdOfFirst, createdOfSecond] = due();
    expect(due().map((d) => [d.eventType, d.id])).toEqual([
      ['created', createdOfFirst!.id],
      ['created', createdOfSecond!.id],
    ]);
    expect(due(new Set([createdOfFirst!.id])).map((d) => d.id)).toEqual([createdOfSecond!.id]);
    account.deliveries.recordAttempt(createdOfFirst!, {
      startedAt: account.now(),
      durationMs: 1,
      responseStatus: 200,
      responseBody: '',
      error: null,
      errorMessage: null,
    });
    expect(due().map((d) => d.eventType)).toEqual(['created', 'cancelled']);
    expect(second.status).toBe('waiting');
  });

  it('gives a retry only once its time comes, earliest first, and tells when the next one is due', () => {
    const { clock, account, create, due, fail } = setup();
    const ids = [10, 20, 30].map((amount) => {
      create(amount);
      return due().at(-1)!.id;
    });
    fail(ids[0]!);
    clock.advance(1000);
    fail(ids[1]!);
    fail(ids[2]!);
    expect(due()).toEqual([]);
    const firstRetry = Date.parse(account.now()) - 1000 + 5000;
    expect(account.deliveries.nextRetryAt(new Set())).toBe(firstRetry);
    clock.advance(4000);
    expect(due().map((d) => d.id)).toEqual([ids[0]]);
    // Under way, it is not given again: nothing else is due until the next retry.
    expect(due(new Set([ids[0]!]))).toEqual([]);
    clock.advance(1000);
    expect(due(new Set([ids[0]!])).map((d) => d.id)).toEqual([ids[1], ids[2]]);
    expect(account.deliveries.nextRetryAt(new Set(ids))).toBeNull();
  });

  it('a retry the deliverer had no room for stays queued', () => {
    const { clock, account, create, due, fail } = setup();
    create(10);
    const id = due()[0]!.id;
    fail(id);
    clock.advance(5000);
    const generator = account.deliveries.dueDeliveries(new Set());
    expect(generator.next().value?.delivery.id).toBe(id);
    generator.return(undefined); // slots full: not started
    expect(due().map((d) => d.id)).toEqual([id]);
  });
});
