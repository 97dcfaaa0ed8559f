import { describe, expect, it } from 'vitest';
import { DueWork } from '../../src/core/due-work.js';
import { moduleContext } from './context.js';

function setup() {
  const { clock, ctx } = moduleContext();
  const done: string[] = [];
  const handler = (kind: string) => (id: string, at: number) => (done.push(`${kind}:${id}@${at - start}`), id !== 'stale');
  const due = new DueWork(ctx, { expiry: handler('expiry'), cvu: handler('cvu'), idempotency: handler('idempotency') }, () => null);
  const start = ctx.nowMs();
  return { clock, ctx, due, done, start };
}

describe('the clock and due work', () => {
  it('does what falls due in time order, ties in the order scheduled, each once, when the clock reaches it', () => {
    const { clock, due, done, start } = setup();
    due.schedule(start + 2000, 'expiry', 'p1');
    due.schedule(start + 1000, 'cvu', 'c1');
    due.schedule(start + 2000, 'idempotency', 'key:with:colons');
    due.schedule(start + 1000, 'expiry', 'stale');
    expect(due.nextDueAt()).toBe(start + 1000);
    expect(due.runDue()).toBe(false);
    clock.advance(1000);
    expect(due.runDue()).toBe(true);
    expect(done).toEqual(['cvu:c1@1000', 'expiry:stale@1000']);
    clock.advance(5000);
    due.runDue();
    expect(done.slice(2)).toEqual(['expiry:p1@2000', 'idempotency:key:with:colons@2000']);
    expect(due.nextDueAt()).toBe(null);
  });

  it('work found overdue (a server that was down) is done as at the instant it fell due', () => {
    const { clock, ctx } = moduleContext();
    const start = ctx.nowMs();
    const seen: number[] = [];
    const record = () => (seen.push(ctx.nowMs() - start), true);
    const due = new DueWork(ctx, { expiry: record, cvu: record, idempotency: record }, () => null);
    due.schedule(start + 1000, 'expiry', 'p1');
    due.schedule(start + 4000, 'cvu', 'c1');
    clock.advance(600_000);
    due.runDue();
    expect(seen).toEqual([1000, 4000]);
    expect(ctx.nowMs() - start).toBe(600_000);
  });

  it('a clock move walks to its end, standing at each due instant; set goes forward only', () => {
    const { ctx, due, done, start } = setup();
    due.schedule(start + 60_000, 'expiry', 'p1');
    const move = due.clockMove('advance', { seconds: 120 });
    const at = due.nextInstant(move.until(), null)!;
    expect(at).toBe(start + 60_000);
    due.standAt(at);
    expect([ctx.nowMs() - start, done]).toEqual([60_000, ['expiry:p1@60000']]);
    expect(due.nextInstant(move.until(), null)).toBe(null);
    expect(move.finish().offsetSeconds).toBe(120);
    expect(() => due.clockMove('set', { at: new Date(start).toISOString() })).toThrow(/only moves forward/);
  });
});
