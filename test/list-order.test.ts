import { describe, expect, it } from 'vitest';
import { memoryStore } from '../src/sandbox/store/database.js';
import { api, PAYMENT, useServer } from './helpers.js';

/**
 * Issue 39 point 2: lists go by the order records were written (`seq`), which is the order made, so no table keeps
 * `created_at` to order by. An import's file may hold its records in any order: they are written sorted by `createdAt`.
 */
const server = await useServer();

describe('lists newest first', () => {
  it("an import whose payments and clients are out of order lists them by when they were made, a filter's list too", async () => {
    const source = api(server.url, 'sk_order_source');
    const made: string[] = [];
    const clients: string[] = [];
    for (let i = 0; i < 3; i++) {
      made.push((await source.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 100 + i })).id);
      clients.push(
        (
          await source.data('POST', '/api/v1/clients', {
            paymentHubId: 1,
            name: `Client ${i}`,
            taxId: `20-1111111${i}-1`,
          })
        ).id,
      );
      await source.data('POST', '/sandbox/v1/clock/advance', { seconds: 60 });
    }
    const doc = await source.data('GET', '/sandbox/v1/export');
    const reversed = (records: Record<string, unknown>) => Object.fromEntries(Object.entries(records).reverse());
    doc.account.vaPayments = reversed(doc.account.vaPayments);
    doc.account.clients = reversed(doc.account.clients);
    expect(Object.keys(doc.account.vaPayments)).toEqual([...made].reverse());

    const target = api(server.url, 'sk_order_target');
    expect((await target.post('/sandbox/v1/import', doc)).status).toBe(200);
    const ids = async (path: string) => (await target.list(path)).data.map((record: { id: string }) => record.id);
    expect(await ids('/api/v1/va-payments')).toEqual([...made].reverse());
    expect(await ids('/api/v1/va-payments?status=waiting')).toEqual([...made].reverse());
    expect(await ids('/api/v1/clients')).toEqual([...clients].reverse());
    // A payment made after the import is the newest.
    const next = (await target.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 5 })).id;
    expect(await ids('/api/v1/va-payments?limit=2')).toEqual([next, made[2]]);
  });
});

describe('Repository.has: several lookups asked at once (a new CVU or alias checked against every holder)', () => {
  it('is true when any one lookup matches, of any table, by id or by column, and false when none does', async () => {
    const store = memoryStore();
    const records = store.records('sk_has');
    const pool = { cvu: '0000000000000000000001', alias: 'UNO.DOS.TRES', vaPaymentId: null, releasedAt: null };
    records.put('pool', pool.cvu, pool);
    records.put('hubs', '1', { collectionCvu: '0000000000000000000002', collectionAlias: 'Hub.Alias' } as never);
    records.put('clients', 'c1', {
      id: 'c1',
      taxId: '20-1',
      externalReference: null,
      cvu: '0000000000000000000003',
      alias: 'Client.Alias',
      cvuReadyAt: null,
      createdAt: '2026-01-01T00:00:00.000Z',
    } as never);
    await store.save();
    const taken = (value: string) =>
      records.has([
        ['pool', { id: value }],
        ['pool', { alias: value.toUpperCase() }],
        ['clients', { alias: value.toUpperCase() }],
        ['clients', { cvu: value }],
        ['hubs', { alias: value.toUpperCase() }],
        ['hubs', { cvu: value }],
      ]);
    for (const value of [
      '0000000000000000000001',
      'uno.dos.tres',
      '0000000000000000000002',
      'HUB.ALIAS',
      '0000000000000000000003',
      'client.alias',
    ])
      expect(taken(value), value).toBe(true);
    for (const value of ['0000000000000000000004', 'OTRO.ALIAS']) expect(taken(value), value).toBe(false);
    expect(records.has([['hubs', { cvu: '0000000000000000000003' }]])).toBe(false);
    await store.close();
  });
});

describe('an order known empty (the next free pool CVU) is forgotten when its group is rolled back', () => {
  it('a CVU lent, then the group failing, is found free again', async () => {
    const store = memoryStore();
    const records = store.records('sk_empty');
    const pool = { cvu: '0000000000000000000001', alias: 'UNO.DOS.TRES', vaPaymentId: null, releasedAt: null };
    records.put('pool', pool.cvu, pool);
    await store.save();
    expect(records.find('pool', { by: 'free' })?.cvu).toBe(pool.cvu);
    records.put('pool', pool.cvu, { ...pool, vaPaymentId: 'p1' });
    expect(records.find('pool', { by: 'free' })).toBeUndefined(); // now known empty
    // A write that fails (its columns cannot be computed) rolls the whole group back, the lending with it.
    expect(() => records.put('pool', 'broken', {} as never)).toThrow();
    await expect(store.save()).rejects.toThrow();
    expect(records.find('pool', { by: 'free' })?.cvu).toBe(pool.cvu);
    await store.close();
  });
});

describe('Repository.highest: the highest value of a range, asked once and then kept with the writes (pool numbers)', () => {
  it('reads the database once, raises it by the writes, and forgets it when a group is rolled back', async () => {
    const store = memoryStore();
    const records = store.records('sk_highest');
    const range = { from: 'POOL.000000000000', to: 'POOL.999999999999' };
    const pool = (n: number) => ({
      cvu: `000000000000000000${1000 + n}`,
      alias: `POOL.${String(n).padStart(12, '0')}`,
      vaPaymentId: null,
      releasedAt: null,
    });
    expect(records.highest('pool', 'alias', range)).toBeNull();
    records.put('pool', pool(4).cvu, pool(4));
    records.put('pool', pool(2).cvu, pool(2));
    records.put('pool', 'x', { ...pool(9), alias: 'UNO.DOS.TRES' }); // out of the range
    expect(records.highest('pool', 'alias', range)).toBe(pool(4).alias);
    await store.save();
    // Asked again, it is answered from memory: a row written by another repository of the same account is not seen...
    const other = store.records('sk_highest');
    other.put('pool', pool(7).cvu, pool(7));
    await store.save();
    expect(records.highest('pool', 'alias', range)).toBe(pool(4).alias);
    expect(other.highest('pool', 'alias', range)).toBe(pool(7).alias);
    // ...until a rolled-back group makes every account's be read again.
    expect(() => records.put('pool', 'broken', {} as never)).toThrow();
    await expect(store.save()).rejects.toThrow();
    expect(records.highest('pool', 'alias', range)).toBe(pool(7).alias);
    expect(records.highest('pool', 'id', { from: pool(0).cvu, to: pool(5).cvu })).toBe(pool(4).cvu);
    await store.close();
  });
});
