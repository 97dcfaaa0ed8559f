import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ACCOUNT_CACHE } from '../src/core/index.js';
import { PAYMENT, spawnServer, useReceiver, useServer } from './helpers.js';

/**
 * A key costs what it holds (issue 38, finding 5): before, every key ever seen kept its account in memory, 100,000
 * keys that each read once grew the server from 111 to 840 MiB, never given back. Now the accounts in memory are
 * bounded and dropped when idle, and read again from the database (the truth) when used. The 100,000-key figure is
 * `bench/keys.js`'s (docs/benchmarks.md).
 */
const bearer = (key: string) => ({ authorization: `Bearer ${key}`, host: '127.0.0.1' });

describe('the accounts kept in memory', () => {
  it('stay within the bound whatever the number of keys, and one dropped is read back as the database holds it', async () => {
    let now = Date.parse('2026-11-27T12:00:00Z');
    const server = await useServer(
      { clock: { now: () => now }, accountCache: { accounts: 50, idleMs: 60_000 } },
      'test',
    );
    const { app, runtime } = server;
    const post = (key: string, path: string, body: unknown) =>
      app.request(path, {
        method: 'POST',
        headers: { ...bearer(key), 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });

    // One account with a payment and its clock moved an hour ahead: its head and its records.
    expect((await post('sk_kept', '/api/v1/va-payments', { ...PAYMENT, amount: 100 })).status).toBe(201);
    expect((await post('sk_kept', '/sandbox/v1/clock/advance', { seconds: 3600 })).status).toBe(200);
    // Keys with something stored: the least recently used go past the bound.
    for (let i = 0; i < 200; i++) {
      now += 1;
      expect((await post(`sk_writer_${i}`, '/api/v1/va-payments', { ...PAYMENT, amount: 100 })).status).toBe(201);
      expect(runtime.sandbox.accounts().length).toBeLessThanOrEqual(50);
    }
    // Keys that only read: none stays once its request is over.
    for (let i = 0; i < 1_000; i++) {
      expect((await app.request('/api/v1/va-payments', { headers: bearer(`sk_reader_${i}`) })).status).toBe(200);
    }
    const inMemory = runtime.sandbox.accounts().map((account) => account.key);
    expect(inMemory.filter((key) => key.startsWith('sk_reader_'))).toEqual([]);
    expect(inMemory).not.toContain('sk_kept');

    const list = (await (await app.request('/api/v1/va-payments', { headers: bearer('sk_kept') })).json()) as {
      data: { createdAt: string }[];
    };
    expect(list.data).toHaveLength(1);
    const clock = (await (await app.request('/sandbox/v1/clock', { headers: bearer('sk_kept') })).json()) as {
      data: { now: string };
    };
    expect(Date.parse(clock.data.now) - now).toBeGreaterThanOrEqual(3600_000);
  });

  it('are dropped once unused for the idle time, other keys or not', async () => {
    let now = Date.parse('2026-11-27T12:00:00Z');
    const server = await useServer(
      { clock: { now: () => now }, accountCache: { accounts: 1_000, idleMs: 60_000 } },
      'test',
    );
    const post = (key: string) =>
      server.app.request('/api/v1/va-payments', {
        method: 'POST',
        headers: { ...bearer(key), 'content-type': 'application/json' },
        body: JSON.stringify({ ...PAYMENT, amount: 100 }),
      });
    for (let i = 0; i < 100; i++) expect((await post(`sk_idle_${i}`)).status).toBe(201);
    expect(server.runtime.sandbox.accounts()).toHaveLength(100);
    now += 59_000;
    server.runtime.sandbox.forgetIdle();
    expect(server.runtime.sandbox.accounts()).toHaveLength(100);
    now += 1_000;
    server.runtime.sandbox.forgetIdle();
    expect(server.runtime.sandbox.accounts()).toHaveLength(0);
  });

  it('keep an account a request holds, or one with a callback under way, past the bound: one object per key', async () => {
    const receiver = await useReceiver(() => 'hang');
    const server = await useServer(
      { accountCache: { accounts: 10, idleMs: 60_000 }, callbackTimeoutMs: 5_000 },
      'test',
    );
    const { sandbox } = server.runtime;
    const create = (key: string, fields: Record<string, unknown> = {}) =>
      server.app.request('/api/v1/va-payments', {
        method: 'POST',
        headers: { ...bearer(key), 'content-type': 'application/json' },
        body: JSON.stringify({ ...PAYMENT, amount: 100, ...fields }),
      });
    expect((await create('sk_held')).status).toBe(201);
    const held = sandbox.hold('sk_held');
    expect((await create('sk_sending', { callbackUrl: receiver.url })).status).toBe(201);
    await receiver.waitFor(1);
    const sending = sandbox.account('sk_sending');
    for (let i = 0; i < 50; i++) expect((await create(`sk_other_${i}`)).status).toBe(201);
    // Used with no commit between (no pump of the deliverer touches the sending one meanwhile).
    for (let i = 0; i < 50; i++) sandbox.account(`sk_other_${i}`);
    expect(sandbox.accounts().length).toBeLessThanOrEqual(12);
    expect(sandbox.account('sk_held')).toBe(held.account);
    expect(sandbox.account('sk_sending')).toBe(sending);
    held.release();
    for (let i = 0; i < 20; i++) expect((await create(`sk_more_${i}`)).status).toBe(201);
    expect(sandbox.accounts().map((account) => account.key)).not.toContain('sk_held');
  });

  it('by default: 1,000 accounts, each dropped after a minute unused', () => {
    expect(ACCOUNT_CACHE).toEqual({ accounts: 1000, idleMs: 60_000 });
  });
});

describe('a real server', () => {
  it('10,000 keys that each read once cost it no more memory than 10,000 reads of one key', async () => {
    // Without the request journal: it makes the one key a stored account, whose reads then make no account each, which
    // lowers the baseline (both end near the same RSS: docs/benchmarks.md); a key's journal is bounded by --journal.
    const server = await spawnServer(['--memory', '--quiet', '--rate-limit', '0', '--journal', '0']);
    const rss = () =>
      Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${server.child.pid}/status`, 'utf8'))![1]) / 1024;
    const reads = async (keyOf: (i: number) => string) => {
      let next = 0;
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          while (next < 10_000) {
            const response = await fetch(`${server.url}/api/v1/va-payments`, {
              headers: { authorization: `Bearer ${keyOf(next++)}` },
            });
            expect(response.status).toBe(200);
            await response.arrayBuffer();
          }
        }),
      );
      return rss();
    };
    // The same requests from one key first: what the server grows by for the traffic alone (its heap finding its size).
    const oneKey = await reads(() => 'sk_one');
    const manyKeys = await reads((i) => `sk_many_${i}`);
    // Unbounded, each key kept its account: about 70 MiB more for these 10,000.
    expect(
      manyKeys - oneKey,
      `RSS ${Math.round(oneKey)} MiB after one key, ${Math.round(manyKeys)} MiB after 10,000`,
    ).toBeLessThan(30);
  }, 120_000);
});
