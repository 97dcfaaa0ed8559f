import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { api, useServer, useTmp } from './helpers.js';

/**
 * Issue 15 item 6: an Idempotency-Key is reserved before the handler runs. Concurrent requests with the key wait for
 * the first answer and replay it; another body with the key while the first is in flight is a 409; a first request
 * that fails releases the key. File-backed, so every write waits for the journal and requests really overlap.
 */
const server = await useServer({ data: join(useTmp(), 'state.db') });
let keyN = 0;
const account = () => api(server.url, `sk_idem_${++keyN}`);

const create = (amount: number, lockMode = 'amount') => ({ paymentHubId: 1, currency: 'ARS', lockMode, amount });

describe('Idempotency-Key under concurrency', () => {
  it('20 concurrent identical POSTs with one key, 30 trials: exactly one payment per key and 19 replays', {
    timeout: 60_000,
  }, async () => {
    const client = account();
    for (let trial = 0; trial < 30; trial++) {
      const key = `trial-${trial}`;
      // Time-locked: each payment gets a CVU of its own, so a duplicate is created rather than refused.
      const body = create(100 + trial, 'time');
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => client.post('/api/v1/va-payments', body, { 'Idempotency-Key': key })),
      );
      expect(answers.map((a) => a.status)).toEqual(answers.map(() => 201));
      const replayed = answers.filter((a) => a.headers.get('idempotent-replayed') === 'true');
      expect(replayed, `trial ${trial}`).toHaveLength(19);
      expect(new Set(answers.map((a) => a.body.data.id)).size, `trial ${trial}`).toBe(1);
    }
    const list = await client.get('/api/v1/va-payments?limit=100');
    expect(list.status).toBe(200);
    expect(list.body.pagination.total).toBe(30);
  });

  it('another body with the key while the first is in flight is 409 IDEMPOTENCY_KEY_CONFLICT', async () => {
    const client = account();
    // A slow disk (each save takes 50 ms longer) keeps the first request in flight while the others arrive.
    const { store } = server.runtime;
    const save = store.save;
    store.save = () => new Promise((resolve) => setTimeout(resolve, 50)).then(save);
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        client.post('/api/v1/va-payments', create(10 + i), { 'Idempotency-Key': 'mixed' }),
      ),
    ).finally(() => (store.save = save));
    expect(answers.filter((a) => a.status === 201)).toHaveLength(1);
    expect(answers.filter((a) => a.status === 409)).toHaveLength(9);
    for (const conflict of answers.filter((a) => a.status === 409)) {
      expect(conflict.body.error.code).toBe('IDEMPOTENCY_KEY_CONFLICT');
      expect(conflict.body.error.details).toEqual(['Idempotency-Key: already used with a different body or path']);
    }
    expect((await client.get('/api/v1/va-payments')).body.pagination.total).toBe(1);
  });

  it('a first request that fails releases the key: the same request succeeds once the cause is gone', async () => {
    const client = account();
    const holder = await client.data('POST', '/api/v1/va-payments', create(50));
    // Same amount, amount lock: 409 AMOUNT_LOCK_CONFLICT, twice at once; neither is remembered.
    const refused = await Promise.all(
      [1, 2].map(() => client.post('/api/v1/va-payments', create(50), { 'Idempotency-Key': 'retry-me' })),
    );
    expect(refused.map((a) => a.body.error?.code)).toEqual(['AMOUNT_LOCK_CONFLICT', 'AMOUNT_LOCK_CONFLICT']);
    expect(refused.every((a) => a.headers.get('idempotent-replayed') === null)).toBe(true);

    await client.data('POST', `/api/v1/va-payments/${holder.id}/cancel`);
    const retried = await Promise.all(
      [1, 2, 3].map(() => client.post('/api/v1/va-payments', create(50), { 'Idempotency-Key': 'retry-me' })),
    );
    expect(retried.map((a) => a.status)).toEqual([201, 201, 201]);
    expect(retried.filter((a) => a.headers.get('idempotent-replayed') === 'true')).toHaveLength(2);
    expect(new Set(retried.map((a) => a.body.data.id)).size).toBe(1);
  });
});
