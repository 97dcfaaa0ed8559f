import { describe, expect, it } from 'vitest';
import { Hubs } from '../../src/core/hubs/hubs.js';
import type { Client, VaPayment } from '../../src/core/index.js';
import { THREE_WORDS } from '../../src/core/hubs/cvu.js';
import { moduleContext } from './context.js';

describe('hubs and the CVU pool', () => {
  it('makes a hub on first use with a collection CVU of its own; --hubs leaves others unknown', () => {
    const { ctx } = moduleContext({ hubIds: [1, 7] });
    const hubs = new Hubs(ctx);
    const seven = hubs.hubFor(7);
    expect([seven.collectionAlias, hubs.hubFor(7)]).toEqual(['SANDBOX.HUB7.COBROS', seven]);
    expect(hubs.holdersAt(seven.collectionAlias.toLowerCase())).toEqual([{ cvu: seven.collectionCvu, kind: 'collection', hubId: 7 }]);
    expect(hubs.isTaken(seven.collectionCvu)).toBe(true);
    expect(() => hubs.hubFor(2)).toThrow(/Payment hub/);
  });

  it('lends the pool CVU released longest ago, and counts clients’ CVUs and aliases as taken', () => {
    const { clock, ctx } = moduleContext();
    const hubs = new Hubs(ctx);
    ctx.put('clients', 'c1', { id: 'c1', taxId: '1', cvu: '0000000000000000000001', alias: 'client.alias', createdAt: ctx.now(), cvuReadyAt: null, externalReference: null } as unknown as Client);
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
    expect([hubs.isTaken('CLIENT.ALIAS'), hubs.isTaken('0000000000000000000001'), hubs.isTaken('OTHER.ALIAS')]).toEqual([true, true, false]);
  });

  it('opens pool CVUs with three-word aliases while under half of those are lent, then with two words and four digits, as counted by a restart', async () => {
    const { ctx, store } = moduleContext();
    const hubs = new Hubs(ctx);
    const DIGITS = /^[A-Z]+\.[A-Z]+\.\d{4}$/;
    const open = (h: Hubs, n: number, from: number) => Array.from({ length: n }, (_, i) => h.reservePoolCvu(`p${from + i}`).alias);
    expect(open(hubs, 1_000, 0).filter((alias) => DIGITS.test(alias))).toEqual([]);
    open(hubs, THREE_WORDS / 2 - 1_001, 1_000);
    // The last one under half: each of its three-word tries is free about half the time.
    expect(open(hubs, 1, THREE_WORDS / 2 - 1)[0]).toMatch(/^[A-Z]+\.[A-Z]+\.[A-Z0-9]+$/);
    const after = open(hubs, 20, THREE_WORDS / 2);
    expect(after.filter((alias) => DIGITS.test(alias))).toEqual(after);

    // Counted again from the records (an account read again after a restart).
    await store.save();
    const fresh = moduleContext({ state: store.read(ctx.key), seed: 9 });
    await fresh.stored;
    expect(open(new Hubs(fresh.ctx), 1, THREE_WORDS)[0]).toMatch(DIGITS);
  });
});
