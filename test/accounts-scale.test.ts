import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { fileStore } from '../src/sandbox/store/database.js';
import { api, PAYMENT, useServer, useTmp } from './helpers.js';

/**
 * Accounts cost what they hold: 25,000 accounts in the database, and a start, a create and another account's request
 * read and write only the accounts they touch. (How long each takes is the bench's business: docs/benchmarks.md.)
 */
const ACCOUNTS = 25_000;

describe('with 25,000 accounts in the database', () => {
  it('a start reads none of them, a write touches only its own, and a key that only reads makes no account', async () => {
    const data = join(useTmp(), 'state.db');
    await fileStore(data).close(); // the schema
    const db = new DatabaseSync(data);
    db.exec('BEGIN');
    const insert = db.prepare('INSERT INTO accounts (key, head, crc) VALUES (?, ?, ?)');
    const head = JSON.stringify({ clockOffsetMs: 0 });
    for (let i = 0; i < ACCOUNTS; i++) insert.run(`sk_many_${i}`, head, crc32(head));
    db.exec('COMMIT');
    db.close();

    const server = await useServer({ data }, 'test');
    const { sandbox, store } = server.runtime;
    expect(sandbox.accounts()).toEqual([]);
    const written: string[] = [];
    const records = store.records.bind(store);
    store.records = (key) => {
      const repository = records(key);
      return { ...repository, put: (table, id, record) => (written.push(key), repository.put(table, id, record)) };
    };

    const one = api(server.url, 'sk_many_17');
    const payment = await one.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 10 });
    expect(new Set(written)).toEqual(new Set(['sk_many_17']));
    expect(sandbox.accounts().map((account) => account.key)).toEqual(['sk_many_17']);

    const other = api(server.url, 'sk_many_24999');
    expect((await other.list('/api/v1/va-payments')).pagination.total).toBe(0);
    expect(await one.data('GET', `/api/v1/va-payments/${payment.id}`)).toMatchObject({
      id: payment.id,
      status: 'waiting',
    });
    expect(new Set(written)).toEqual(new Set(['sk_many_17']));
    expect(
      sandbox
        .accounts()
        .map((account) => account.key)
        .sort(),
    ).toEqual(['sk_many_17', 'sk_many_24999']);

    const check = new DatabaseSync(data, { readOnly: true });
    const count = () => (check.prepare('SELECT count(*) AS n FROM accounts').get() as { n: number }).n;
    expect(count()).toBe(ACCOUNTS);
    expect((await api(server.url, 'sk_new_reader').list('/sandbox/v1/deliveries')).pagination.total).toBe(0);
    expect(count()).toBe(ACCOUNTS);
    check.close();
  });
});
