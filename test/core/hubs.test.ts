import { describe, expect, it } from 'vitest';
import { isValidCvu } from '../../src/core/conventions/index.js';
import { poolCvu, poolNumber } from '../../src/core/hubs/cvu.js';
import { Hubs } from '../../src/core/hubs/hubs.js';
import type { Client, VaPayment } from '../../src/core/index.js';
import { moduleContext } from './context.js';

describe('hubs and the CVU pool', () => {
  it('makes a hub on first use with a collection CVU of its own; --hubs leaves others unknown', () => {
    const { ctx } = moduleContext({ hubIds: [1, 7] });
    const hubs = new Hubs(ctx);
    const seven = hubs.hubFor(7);
    expect([seven.collectionAlias, hubs.hubFor(7)]).toEqual(['SANDBOX.HUB7.COBROS', seven]);
    expect(hubs.holdersAt(seven.collectionAlias.toLowerCase())).toEqual([
      { cvu: seven.collectionCvu, kind: 'collection', hubId: 7 },
    ]);
    expect(hubs.isTaken(seven.collectionCvu)).toBe(true);
    expect(() => hubs.hubFor(2)).toThrow(/Payment hub/);
  });

  it('lends the pool CVU released longest ago, and counts clients’ CVUs and aliases as taken', () => {
    const { clock, ctx } = moduleContext();
    const hubs = new Hubs(ctx);
    ctx.put('clients', 'c1', {
      id: 'c1',
      taxId: '1',
      cvu: '0000000000000000000001',
      alias: 'client.alias',
      createdAt: ctx.now(),
      cvuReadyAt: null,
      externalReference: null,
    } as unknown as Client);
    const lent = ['a', 'b', 'c'].map((id) => hubs.reservePoolCvu(id));
    const release = (i: number) => {
      clock.advance(1000);
      hubs.releasePoolCvu({ id: 'abc'[i]!, cvu: lent[i]!.cvu, updatedAt: ctx.now() } as VaPayment);
    };
    release(2);
    release(0);
    expect(hubs.reservePoolCvu('d').cvu).toBe(lent[2]!.cvu);
    expect(hubs.reservePoolCvu('e').cvu).toBe(lent[0]!.cvu);
    expect(new Set([lent[1]!.cvu, hubs.reservePoolCvu('f').cvu]).size).toBe(2); // a new one: b still holds its own
    expect(hubs.holdersAt(lent[1]!.alias.toLowerCase())).toMatchObject([{ kind: 'pool', cvu: lent[1]!.cvu }]);
    expect([hubs.isTaken('CLIENT.ALIAS'), hubs.isTaken('0000000000000000000001'), hubs.isTaken('OTHER.ALIAS')]).toEqual(
      [true, true, false],
    );
  });

  it('opens pool CVUs by number in a space no other CVU or alias is made in, and numbers on from the highest after a restart', async () => {
    const { ctx, store } = moduleContext();
    const hubs = new Hubs(ctx);
    const clients = Array.from({ length: 200 }, () => hubs.uniqueCvu());
    const hub = hubs.hubFor(3);
    const lent = Array.from({ length: 300 }, (_, i) => hubs.reservePoolCvu(`p${i}`));
    expect(lent.slice(0, 2)).toEqual([
      { cvu: poolCvu(0), alias: 'POOL.000000000000' },
      { cvu: poolCvu(1), alias: 'POOL.000000000001' },
    ]);
    expect(lent.every(({ cvu }) => isValidCvu(cvu))).toBe(true);
    const pool = new Set(lent.flatMap(({ cvu, alias }) => [cvu, alias]));
    expect(
      [...clients, hub.collectionCvu, hub.collectionAlias].filter((one) => pool.has(one) || poolNumber(one) !== null),
    ).toEqual([]);
    // Anything in the pool's space counts as taken: a client's alias hint there gets another one.
    expect([hubs.isTaken(poolCvu(5_000)), hubs.isTaken('pool.000000005000'), hubs.isTaken('POOL.5000')]).toEqual([
      true,
      true,
      false,
    ]);

    // Read again after a restart: numbered on from the highest stored, and a freed one is lent first.
    hubs.releasePoolCvu({ id: 'p7', cvu: lent[7]!.cvu, updatedAt: ctx.now() } as VaPayment);
    await store.save();
    const fresh = moduleContext({ state: store.read(ctx.key), seed: 9 });
    await fresh.stored;
    const again = new Hubs(fresh.ctx);
    expect(again.reservePoolCvu('q1').cvu).toBe(lent[7]!.cvu);
    expect(again.reservePoolCvu('q2')).toEqual({ cvu: poolCvu(300), alias: 'POOL.000000000300' });
  });

  it('numbers past a CVU or alias an older release or an import left in the pool space', async () => {
    const { ctx } = moduleContext();
    const client = {
      id: 'c1',
      taxId: '1',
      cvu: poolCvu(41),
      alias: 'POOL.000000000077',
      createdAt: ctx.now(),
      cvuReadyAt: null,
      externalReference: null,
    };
    ctx.put('clients', 'c1', client as unknown as Client);
    const hubs = new Hubs(ctx);
    expect(hubs.reservePoolCvu('a')).toEqual({ cvu: poolCvu(78), alias: 'POOL.000000000078' });
    // Asked once: a client written later with a higher one is still passed (the store keeps the highest with its writes).
    ctx.put('clients', 'c2', { ...client, id: 'c2', cvu: poolCvu(90), alias: 'X.Y.Z' } as unknown as Client);
    expect(hubs.reservePoolCvu('b').cvu).toBe(poolCvu(91));
  });
});
