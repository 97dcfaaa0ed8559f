import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { mulberry32 as rng } from '../src/core/conventions/ids.js';
import { type Api, api, PAYMENT, spawnServer, useTmp } from './helpers.js';

/**
 * Hardening (b): the built server on a data file, 32 concurrent writers (VA payments and transfers to them), SIGKILL
 * at a random moment, restart on the same file. The server must start (the file is readable) and every write that
 * was acknowledged, in this round and every round before, must be there. Five rounds on the same file.
 */
const SEED = Number(process.env.CRASH_SEED ?? Math.floor(Math.random() * 2 ** 31));
const ROUNDS = 5;
const WRITERS = 32;

interface Acked {
  /** Payment id -> its amount in cents and the cents of the transfers acknowledged to it. */
  payments: Map<string, { key: string; cvu: string; transfers: number[] }>;
  transfers: Map<string, { key: string; paymentId: string }>;
}

/** Every page of a list endpoint. */
async function all(client: Api, path: string): Promise<any[]> {
  const out: any[] = [];
  for (let page = 1; ; page++) {
    const { data, pagination } = await client.list(`${path}?limit=100&page=${page}`);
    out.push(...data);
    if (page >= pagination.totalPages) return out;
  }
}

describe('crash safety: SIGKILL during concurrent writes', () => {
  it(`${ROUNDS} rounds of ${WRITERS} writers and a SIGKILL at a random moment lose no acknowledged write (seed ${SEED})`, {
    timeout: 240_000,
  }, async () => {
    console.log(`hardening-crash seed ${SEED}: replay with CRASH_SEED=${SEED}`);
    const random = rng(SEED);
    const data = join(useTmp(), 'state.db');
    const acked: Acked = { payments: new Map(), transfers: new Map() };
    const rounds: string[] = [];

    for (let round = 1; round <= ROUNDS; round++) {
      const server = await spawnServer(['--data', data]);
      // Everything acknowledged so far is there after the restart.
      await verify(server.url, acked, `round ${round}, after restart (seed ${SEED})`);

      const key = `sk_crash_${round}`;
      const client = api(server.url, key);
      let stopped = false;
      let attempted = 0;
      const writer = async (n: number) => {
        const mine: string[] = [];
        while (!stopped) {
          attempted++;
          try {
            const target = mine.length > 0 && random() < 0.5 ? mine[Math.floor(random() * mine.length)]! : null;
            if (target === null) {
              const response = await client.post('/api/v1/va-payments', {
                ...PAYMENT,
                amount: 1000,
                externalReference: `w${n}`,
              });
              if (response.status === 201) {
                acked.payments.set(response.body.data.id, { key, cvu: response.body.data.cvu, transfers: [] });
                mine.push(response.body.data.id);
              }
            } else {
              const payment = acked.payments.get(target)!;
              const cents = 1 + Math.floor(random() * 300);
              const response = await client.post('/sandbox/v1/transfers', { to: payment.cvu, total: cents / 100 });
              if (response.status === 201 && response.body.data.outcome === 'credited') {
                acked.transfers.set(response.body.data.id, { key, paymentId: target });
                payment.transfers.push(cents);
              }
            }
          } catch {
            // The server died under this request: it was never acknowledged.
            return;
          }
        }
      };
      const writers = Array.from({ length: WRITERS }, (_, n) => writer(n));
      const killAfter = 150 + Math.floor(random() * 1350);
      await sleep(killAfter);
      server.child.kill('SIGKILL');
      await server.exited;
      stopped = true;
      await Promise.all(writers);
      rounds.push(
        `round ${round}: killed after ${killAfter} ms, ${attempted} writes attempted, ${acked.payments.size} payments and ${acked.transfers.size} transfers acknowledged in all`,
      );
    }
    console.log(`hardening-crash seed ${SEED}:\n  ${rounds.join('\n  ')}`);

    const last = await spawnServer(['--data', data]);
    await verify(last.url, acked, `after the last round (seed ${SEED})`);
    expect(acked.payments.size).toBeGreaterThan(ROUNDS);
    last.child.kill('SIGKILL');
    await last.exited;
  });
});

/** Every acknowledged payment and transfer is there, and each payment holds exactly its acknowledged transfers' sum. */
async function verify(url: string, acked: Acked, when: string): Promise<void> {
  const keys = new Set([...acked.payments.values()].map((p) => p.key));
  for (const key of keys) {
    const client = api(url, key);
    const payments = new Map((await all(client, '/api/v1/va-payments')).map((p) => [p.id, p]));
    const transfers = new Set((await all(client, '/sandbox/v1/transfers')).map((t) => t.id));
    const missingPayments = [...acked.payments]
      .filter(([id, p]) => p.key === key && !payments.has(id))
      .map(([id]) => id);
    const missingTransfers = [...acked.transfers]
      .filter(([id, t]) => t.key === key && !transfers.has(id))
      .map(([id]) => id);
    expect(missingPayments, `${when}: acknowledged payments of ${key} missing`).toEqual([]);
    expect(missingTransfers, `${when}: acknowledged transfers of ${key} missing`).toEqual([]);
    for (const [id, p] of acked.payments) {
      if (p.key !== key) continue;
      const stored = payments.get(id)!;
      const acknowledgedCents = p.transfers.reduce((sum, cents) => sum + cents, 0);
      // A transfer sent when the server died may have landed without its answer: the stored sum may be larger, never smaller.
      expect(
        Math.round(stored.totalReceived * 100),
        `${when}: payment ${id} lost an acknowledged transfer`,
      ).toBeGreaterThanOrEqual(acknowledgedCents);
    }
  }
}
