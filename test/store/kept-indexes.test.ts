import { describe, expect, it } from 'vitest';
import { createSandbox, FakeClock, seededIds, type SandboxState } from '../../src/core/index.js';
import { KeptIndexes, type IndexSource, type StoredIndexes } from '../../src/sandbox/store/kept-indexes.js';
import { bucketOf, LazyMap } from '../../src/sandbox/store/lazy-map.js';
import { PAYMENT, CLIENT } from '../helpers.js';

/** A bucket source over `entries` that counts its reads. */
function source<K extends string | number, V>(entries: [K, V][], buckets: number) {
  const reads: number[] = [];
  const split: [K, V][][] = Array.from({ length: buckets }, () => []);
  for (const entry of entries) split[bucketOf(entry[0], buckets)]!.push(entry);
  return { reads, buckets, read: (bucket: number) => (reads.push(bucket), split[bucket]!.map(([k, v]) => [k, v] as [K, V])) };
}

describe('LazyMap', () => {
  it('reads only the bucket of the key asked, once; a key written before its bucket was read keeps the newer value', () => {
    const from = source<string, number>([['a', 1], ['b', 2], ['c', 3], ['d', 4]], 4);
    const map = new LazyMap(from);
    expect(map.get('a')).toBe(1);
    expect(map.get('a')).toBe(1);
    expect(from.reads).toEqual([bucketOf('a', 4)]);
    map.set('b', 20);
    map.delete('c');
    expect([map.get('b'), map.has('c'), map.get('zz')]).toEqual([20, false, undefined]);
    while (map.readNext());
    expect(new Set(from.reads).size).toBe(from.reads.length); // no bucket read twice
    expect(Object.fromEntries(map.entries())).toEqual({ a: 1, b: 20, d: 4 });
  });
});

/** An account with what every index covers: pool CVUs lent and free, an amount lock, a client with entries, a retry. */
function busyAccount() {
  const clock = new FakeClock(Date.parse('2026-11-21T12:00:00Z'));
  const indexes = new KeptIndexes();
  const sandbox = createSandbox({ clock, ids: seededIds(11), indexes: () => indexes });
  const account = sandbox.account('sk_indexes');
  const paid = account.createVaPayment({ ...PAYMENT, amount: 10, callbackUrl: 'http://127.0.0.1:9/hook' });
  account.createTransfer({ to: paid.alias, total: 10 });
  const waiting = Array.from({ length: 40 }, (_, i) => account.createVaPayment({ ...PAYMENT, amount: 20 + i }));
  account.cancelVaPayment(waiting[3]!.id);
  account.createVaPayment({ ...PAYMENT, amount: 15, lockMode: 'amount' });
  const client = account.createClient({ ...CLIENT, name: 'Ana', taxId: '20-12345678-3' });
  account.createTransfer({ to: client.alias, total: 5 });
  const [first] = account.dueDeliveries(new Set());
  account.recordAttempt(first!.delivery.id, { startedAt: account.now(), durationMs: 1, responseStatus: 500, responseBody: '', error: 'http_status', errorMessage: 'HTTP 500' });
  account.remember('key-1', 'f', 201, { ok: true });
  return { clock, state: sandbox.state, stored: indexes.stored(), waiting, client };
}

/** The same state with the account's indexes handed back as the file store would: bucketed, each read counted. */
function readBack(state: SandboxState, stored: StoredIndexes, clock: FakeClock) {
  const reads = new Map<string, number[]>();
  const indexes: IndexSource = {
    map(name) {
      const from = source(stored.maps[name]!.whole!, 4);
      reads.set(name, from.reads);
      return from;
    },
    value: (name) => JSON.parse(JSON.stringify(stored.values[name])),
  };
  const kept = new KeptIndexes(indexes);
  const copy = JSON.parse(JSON.stringify(state)) as SandboxState;
  return { sandbox: createSandbox({ state: copy, clock, ids: seededIds(12), indexes: () => kept }), kept, reads };
}

describe('an account read back with its kept indexes', () => {
  it('answers and writes as the account it was taken from, reading index buckets only as used; warming reads the rest', () => {
    const { clock, state, stored, waiting, client } = busyAccount();
    const { sandbox, kept, reads } = readBack(state, stored, clock);
    const twin = createSandbox({ state: JSON.parse(JSON.stringify(state)) as SandboxState, clock, ids: seededIds(12) });
    const accounts = [sandbox.account('sk_indexes'), twin.account('sk_indexes')];
    const total = () => [...reads.values()].reduce((sum, r) => sum + r.length, 0);
    expect(total()).toBe(0);

    const results = accounts.map((account) => [
      account.getVaPayment(waiting[5]!.id),
      account.createTransfer({ to: waiting[7]!.alias.toLowerCase(), total: 27 }).outcome,
      account.createVaPayment({ ...PAYMENT, amount: 99 }).cvu, // a CVU freed by the cancel or the transfer above
      catching(() => account.createVaPayment({ ...PAYMENT, amount: 15, lockMode: 'amount' })),
      catching(() => account.createClient({ ...CLIENT, name: 'Bea', taxId: '20123456783' })),
      account.clientBalance(client.id),
      account.idempotent('key-1')?.body,
      account.nextDueAt(),
      account.nextRetryAt(new Set()),
    ]);
    expect(results[0]).toEqual(results[1]);
    // Both were released at the same sandbox instant (the clock stood still), so the lower CVU is lent first.
    expect(results[0]![2]).toBe([waiting[3]!.cvu, waiting[7]!.cvu].sort()[0]);
    const used = total();
    expect(used).toBeGreaterThan(0);

    for (const _ of kept.warming());
    expect(total()).toBeGreaterThan(used);
    expect(reads.size).toBe(Object.keys(stored.maps).length);
    for (const [name, read] of reads) expect(new Set(read).size, `buckets of ${name} read`).toBe(4);
    const after = total();
    clock.advance(3600_000);
    expect(accounts[0]!.runDue()).toBe(accounts[1]!.runDue());
    for (const query of [{ limit: '100' }, { status: 'waiting,cancelled' }, { status: 'completed' }] as Record<string, string>[]) {
      expect(accounts[0]!.listVaPayments(query)).toEqual(accounts[1]!.listVaPayments(query));
    }
    expect(total()).toBe(after); // all read: nothing is read twice
  });
});

function catching(run: () => unknown): unknown {
  try {
    return run();
  } catch (error) {
    return (error as { code?: string }).code;
  }
}

describe('a create on kept indexes', () => {
  it('groups the newest record without reading any list group or order bucket, and lists it after the kept ones', () => {
    const { clock, state, stored } = busyAccount();
    const { sandbox, reads } = readBack(state, stored, clock);
    const account = sandbox.account('sk_indexes');
    const made = account.createVaPayment({ ...PAYMENT, amount: 77 });
    const listReads = [...reads].filter(([name, read]) => /(Groups|Order)$/.test(name) && read.length > 0);
    expect(listReads).toEqual([]);
    const waiting = account.listVaPayments({ status: 'waiting', limit: '100' }) as { data: { id: string }[] };
    expect(waiting.data[0]!.id).toBe(made.id);
    expect(waiting.data).toHaveLength(40 - 1 + 1 + 1); // the kept ones (one of the 40 cancelled), the amount-locked one, the new one
  });
});
