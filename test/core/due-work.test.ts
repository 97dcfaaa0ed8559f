import { describe, expect, it } from 'vitest';
import { DueWork } from '../../src/core/clock/due-work.js';
import { iso } from '../../src/core/conventions/index.js';
import { IDEMPOTENCY_TTL_MS } from '../../src/core/records/index.js';
import type { Client, VaPayment } from '../../src/core/records/state.js';
import { moduleContext } from './context.js';

/** Records that fall due at `at` (ms from the start): a waiting payment's expiry, a delayed CVU, an idempotency key. */
function dueRecords(ctx: ReturnType<typeof moduleContext>['ctx'], start: number) {
  return {
    expiry: (id: string, at: number) =>
      ctx.put('vaPayments', id, {
        id,
        status: 'waiting',
        lockMode: 'time',
        cvu: `cvu_${id}`,
        expiresAt: iso(start + at),
        createdAt: iso(start),
        clientId: null,
        clientTaxId: null,
        externalReference: null,
      } as unknown as VaPayment),
    cvu: (id: string, at: number) =>
      ctx.put('clients', id, {
        id,
        taxId: id,
        cvu: null,
        alias: null,
        cvuReadyAt: iso(start + at),
        createdAt: iso(start),
        externalReference: null,
      } as unknown as Client),
    idempotency: (key: string, at: number) =>
      ctx.put('idempotency', key, {
        fingerprint: '',
        status: 201,
        body: null,
        createdAt: iso(start + at - IDEMPOTENCY_TTL_MS),
      }),
  };
}

function setup() {
  const { clock, ctx } = moduleContext();
  const done: string[] = [];
  const table = { expiry: 'vaPayments', cvu: 'clients', idempotency: 'idempotency' } as const;
  // Each handler does its work as the account's would: the record no longer falls due.
  const handler = (kind: keyof typeof table) => (id: string, at: number) => (
    done.push(`${kind}:${id}@${at - start}`), ctx.records.drop(table[kind], id), true
  );
  const due = new DueWork(
    ctx,
    { expiry: handler('expiry'), cvu: handler('cvu'), idempotency: handler('idempotency') },
    () => null,
  );
  const start = ctx.nowMs();
  return { clock, ctx, due, done, start, make: dueRecords(ctx, start) };
}

describe('the clock and due work', () => {
  it('does what falls due in time order, at one instant expiries, then CVUs, then idempotency keys, each once, when the clock reaches it', () => {
    const { clock, due, done, make } = setup();
    make.idempotency('key:with:colons', 2000);
    make.expiry('p1', 2000);
    make.cvu('c1', 1000);
    make.expiry('p0', 1000);
    expect(due.nextDueAt()! - due.view().offsetSeconds * 1000).toBe(clock.now() + 1000);
    expect(due.runDue()).toBe(false);
    clock.advance(1000);
    expect(due.runDue()).toBe(true);
    expect(done).toEqual(['expiry:p0@1000', 'cvu:c1@1000']);
    clock.advance(5000);
    due.runDue();
    expect(done.slice(2)).toEqual(['expiry:p1@2000', 'idempotency:key:with:colons@2000']);
    expect(due.nextDueAt()).toBe(null);
  });

  it('work found overdue (a server that was down) is done as at the instant it fell due', () => {
    const { clock, ctx } = moduleContext();
    const start = ctx.nowMs();
    const make = dueRecords(ctx, start);
    const seen: number[] = [];
    const record = (table: 'vaPayments' | 'clients') => (id: string) => (
      seen.push(ctx.nowMs() - start), ctx.records.drop(table, id), true
    );
    const due = new DueWork(
      ctx,
      { expiry: record('vaPayments'), cvu: record('clients'), idempotency: () => true },
      () => null,
    );
    make.expiry('p1', 1000);
    make.cvu('c1', 4000);
    clock.advance(600_000);
    due.runDue();
    expect(seen).toEqual([1000, 4000]);
    expect(ctx.nowMs() - start).toBe(600_000);
  });

  it('a clock move walks to its end, standing at each due instant; set goes forward only', () => {
    const { ctx, due, done, start, make } = setup();
    make.expiry('p1', 60_000);
    const move = due.move('advance', { seconds: 120 });
    const at = due.nextInstant(move.until(), null)!;
    expect(at).toBe(start + 60_000);
    due.standAt(at);
    expect([ctx.nowMs() - start, done]).toEqual([60_000, ['expiry:p1@60000']]);
    expect(due.nextInstant(move.until(), null)).toBe(null);
    expect(move.finish().offsetSeconds).toBe(120);
    expect(() => due.move('set', { at: new Date(start).toISOString() })).toThrow(/only moves forward/);
  });
});
