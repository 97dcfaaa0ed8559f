import { join } from 'node:path';
import { DatabaseSync, StatementSync } from 'node:sqlite';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createSandbox, type Delivery, FakeClock, seededIds } from '../src/core/index.js';
import { checkDatabase } from '../src/sandbox/store/check.js';
import { fileStore, memoryStore, type Store } from '../src/sandbox/store/database.js';
import { api, eventually, PAYMENT, spawnServer, useReceiver, useTmp } from './helpers.js';

/**
 * Issue 48: an attempt is recorded from the delivery under way, as one attempt row and one update of the delivery's
 * state (its own CRC-32), never by reading the delivery back and writing it whole.
 */

const KEY = 'sk_attempts';
const OK = { durationMs: 1, responseStatus: 200, responseBody: '', error: null, errorMessage: null };

/** An account on `storage` with one payment whose `created` is due, and that delivery as the deliverer holds it. */
function withDue(storage: Store) {
  const sandbox = createSandbox({
    storage,
    clock: new FakeClock(Date.parse('2026-11-21T12:00:00Z')),
    ids: seededIds(3),
  });
  const account = sandbox.account(KEY);
  account.vaPayments.createVaPayment({ ...PAYMENT, amount: 10, callbackUrl: 'http://127.0.0.1:9/hook' });
  const [due] = account.deliveries.dueDeliveries(new Set());
  return { account, delivery: due!.delivery };
}

/** The SQL of every statement run while `act` runs that names a delivery table. */
function deliveryStatements(act: () => void): string[] {
  const statements: string[] = [];
  for (const method of ['run', 'get', 'all', 'iterate'] as const) {
    const original = StatementSync.prototype[method] as (...args: unknown[]) => unknown;
    vi.spyOn(StatementSync.prototype, method).mockImplementation(function (this: StatementSync, ...args: unknown[]) {
      statements.push(this.sourceSQL);
      return original.apply(this, args);
    } as never);
  }
  try {
    act();
  } finally {
    vi.restoreAllMocks();
  }
  return statements.filter((text) => /deliver/.test(text));
}

afterEach(() => vi.restoreAllMocks());

describe('an attempt recorded', () => {
  it('writes one attempt row and one update of the delivery, and reads nothing back', () => {
    const storage = memoryStore();
    const { account, delivery } = withDue(storage);
    let recorded: Delivery | undefined;
    const statements = deliveryStatements(
      () => (recorded = account.deliveries.recordAttempt(delivery, { ...OK, startedAt: account.now() })),
    );
    expect(statements).toHaveLength(2);
    expect(statements[0]).toMatch(
      /^UPDATE deliveries SET state = \?, state_crc = \?, status = \?, pending_at = \?, retry_at = \?, attempts = \? WHERE/,
    );
    expect(statements[1]).toMatch(/^INSERT INTO delivery_attempts /);
    expect(recorded).toMatchObject({
      status: 'delivered',
      nextAttemptAt: null,
      attempts: [{ n: 1, responseStatus: 200 }],
    });
    // What a read finds is what was recorded: the state over the JSON, the attempt from its row.
    expect(storage.records(KEY).get('deliveries', delivery.id)).toEqual(recorded);
    expect(storage.read(KEY)!.deliveries[delivery.id]).toEqual(recorded);
    expect([...account.deliveries.dueDeliveries(new Set())]).toEqual([]);
    // A fault's duplicate is recorded the same way, on what the first attempt left.
    const twice = deliveryStatements(() =>
      account.deliveries.recordAttempt(recorded!, { ...OK, startedAt: account.now(), fault: 'duplicate' }),
    );
    expect(twice).toHaveLength(2);
    expect(
      storage
        .records(KEY)
        .get('deliveries', delivery.id)!
        .attempts.map((a) => [a.n, a.fault ?? null]),
    ).toEqual([
      [1, null],
      [2, 'duplicate'],
    ]);
  });

  it('from a copy no longer stored (attempted since, or dropped) writes nothing of it: what is stored is read', () => {
    const storage = memoryStore();
    const { account, delivery } = withDue(storage);
    const failed = { ...OK, responseStatus: 500, error: 'http_status' as const, errorMessage: 'HTTP 500' };
    account.deliveries.recordAttempt(delivery, { ...failed, startedAt: account.now() });
    // The same copy again: the stored delivery has an attempt more, so the outcome goes on what is stored.
    const again = account.deliveries.recordAttempt(delivery, { ...failed, startedAt: account.now() });
    expect(again.attempts.map((a) => a.n)).toEqual([1, 2]);
    expect(storage.records(KEY).get('deliveries', delivery.id)).toEqual(again);
    storage.records(KEY).drop('deliveries', delivery.id);
    expect(() => account.deliveries.recordAttempt(again, { ...OK, startedAt: account.now() })).toThrow(
      /not found|No Delivery|Delivery/,
    );
    expect(storage.records(KEY).get('deliveries', delivery.id)).toBeUndefined();
    expect(storage.read(KEY)!.deliveries).toEqual({});
  });

  it('keeps the JSON as written and the state beside it with its own CRC-32: a changed byte of either is refused', async () => {
    const data = join(useTmp(), 'state.db');
    const storage = fileStore(data);
    const { account, delivery } = withDue(storage);
    account.deliveries.recordAttempt(delivery, { ...OK, startedAt: account.now() });
    await storage.close();

    const db = new DatabaseSync(data);
    const row = db
      .prepare('SELECT data, state, status, attempts FROM deliveries WHERE id = ?')
      .get(delivery.id) as Record<string, string>;
    expect(JSON.parse(row.data!)).toMatchObject({ status: 'pending', attempts: [] });
    expect(JSON.parse(row.state!)).toMatchObject({ status: 'delivered', nextAttemptAt: null });
    expect([row.status, row.attempts]).toEqual(['delivered', 1]);
    expect(checkDatabase(data).damaged).toEqual([]);
    // The state's text changed on disk, still sound JSON: found by check, refused by a read.
    db.prepare('UPDATE deliveries SET state = replace(state, \'"delivered"\', \'"Delivered"\') WHERE id = ?').run(
      delivery.id,
    );
    db.close();
    expect(checkDatabase(data).damaged).toEqual([expect.stringContaining(`deliveries record ${delivery.id}`)]);
    const reopened = fileStore(data);
    try {
      expect(() => reopened.records(KEY).get('deliveries', delivery.id)).toThrow(
        new RegExp(`deliveries record ${delivery.id} \\(state\\) cannot be read`),
      );
    } finally {
      await reopened.close();
    }
  });
});

describe('a SIGKILL between attempts', () => {
  it('loses no attempt that was acknowledged: a restart has each, and resumes every retry', {
    timeout: 60_000,
  }, async () => {
    const data = join(useTmp(), 'state.db');
    let up = false;
    const receiver = await useReceiver(() => ({ status: up ? 200 : 500 }));
    const first = await spawnServer(['--data', data]);
    const client = api(first.url, KEY);
    for (let i = 0; i < 5; i++)
      await client.data('POST', '/api/v1/va-payments', {
        ...PAYMENT,
        amount: 10 + i,
        callbackUrl: `${receiver.url}/p${i}`,
      });
    const attempted = async (n: number) => {
      const { data: list } = await client.list('/sandbox/v1/deliveries?status=retrying&limit=100');
      const all = await Promise.all(
        list.map((d: { id: string }) => client.data('GET', `/sandbox/v1/deliveries/${d.id}`)),
      );
      return all.length === 5 && all.every((d) => d.attempts.length === n) && all;
    };
    await eventually(() => attempted(1), 10_000, 'each first attempt');
    // The second attempts, due 5 s later by the sandbox clock.
    await client.data('POST', '/sandbox/v1/clock/advance', { seconds: 5 });
    const seen = (await eventually(() => attempted(2), 10_000, 'each second attempt')) as {
      id: string;
      nextAttemptAt: string;
      attempts: unknown[];
    }[];
    first.child.kill('SIGKILL');
    await first.exited;

    up = true;
    const second = await spawnServer(['--data', data]);
    const again = api(second.url, KEY);
    for (const delivery of seen) {
      const stored = await again.data('GET', `/sandbox/v1/deliveries/${delivery.id}`);
      expect(stored).toMatchObject({ status: 'retrying', nextAttemptAt: delivery.nextAttemptAt });
      expect(stored.attempts).toEqual(delivery.attempts);
    }
    await again.data('POST', '/sandbox/v1/clock/advance', { seconds: 25 });
    await eventually(
      async () => (await again.list('/sandbox/v1/deliveries?status=delivered')).pagination.total === 5,
      15_000,
      'every delivery delivered',
    );
    for (const delivery of seen)
      expect(
        (await again.data('GET', `/sandbox/v1/deliveries/${delivery.id}`)).attempts.map((a: { n: number }) => a.n),
      ).toEqual([1, 2, 3]);
  });
});
