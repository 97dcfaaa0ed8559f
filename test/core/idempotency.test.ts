import { describe, expect, it } from 'vitest';
import { DueWork } from '../../src/core/clock/due-work.js';
import { Idempotency } from '../../src/core/store/index.js';
import { moduleContext } from './context.js';

describe('idempotency', () => {
  it('keeps an answer for 24 hours of the account’s clock; a key remembered again is kept from then', () => {
    const { clock, ctx } = moduleContext();
    const handlers = {
      expiry: () => false,
      cvu: () => false,
      idempotency: (key: string, at: number): boolean => keys.forget(key, at),
    };
    const due = new DueWork(ctx, handlers, () => null);
    const keys = new Idempotency(ctx);
    keys.remember('a', 'f1', 201, { n: 1 });
    keys.remember('b', 'f2', 201, { n: 2 });
    clock.advance(3600_000);
    keys.remember('b', 'f3', 201, { n: 3 });
    clock.advance(23 * 3600_000);
    due.runDue();
    expect([keys.idempotent('a'), keys.idempotent('b')?.body]).toEqual([undefined, { n: 3 }]);
    clock.advance(3600_000);
    due.runDue();
    expect(keys.idempotent('b')).toBe(undefined);
  });
});
