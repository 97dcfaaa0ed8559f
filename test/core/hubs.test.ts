import { describe, expect, it } from 'vitest';
import { Hubs } from '../../src/core/hubs.js';
import type { VaPayment } from '../../src/core/index.js';
import { moduleContext } from './context.js';

describe('hubs and the CVU pool', () => {
  it('makes a hub on first use with a collection CVU of its own; --hubs leaves others unknown', () => {
    const { ctx, indexes } = moduleContext({ hubIds: [1, 7] });
    const hubs = new Hubs(ctx, indexes, () => undefined);
    const seven = hubs.hubFor(7);
    expect([seven.collectionAlias, hubs.hubFor(7)]).toEqual(['SANDBOX.HUB7.COBROS', seven]);
    expect(hubs.collectionOf(seven.collectionAlias.toLowerCase())).toBe(seven);
    expect(hubs.aliasTaken(seven.collectionCvu)).toBe(true);
    expect(() => hubs.hubFor(2)).toThrow(/Payment hub/);
  });

  it('lends the pool CVU released longest ago, and counts clients’ CVUs and aliases as taken', () => {
    const { clock, ctx, indexes } = moduleContext();
    const hubs = new Hubs(ctx, indexes, (alias) => (alias === 'CLIENT.ALIAS' ? 'client-1' : undefined));
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
    expect(hubs.poolCvuAt(lent[1]!.alias.toLowerCase())).toBe(lent[1]!.cvu);
    expect(hubs.aliasTaken('CLIENT.ALIAS')).toBe(true);
  });
});
