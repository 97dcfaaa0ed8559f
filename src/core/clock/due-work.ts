import { iso, ms, SandboxError } from '../conventions/index.js';
import { COLUMNS, clockAdvanceSchema, clockSetSchema, MAX_CLOCK_MOVE_SECONDS, parse } from '../records/index.js';
import type { AccountContext } from '../store/index.js';
import { checkClockMove } from './clock.js';

/** A clock move as `DueWork.move` parsed it: walk to `until()` (read at each step), then `finish` (the clock it leaves). */
export interface ClockMove {
  until: () => number;
  finish: () => { now: string; offsetSeconds: number };
}

/** What falls due: a VA payment's expiry, a client's delayed CVU, an idempotency key to forget. */
export type DueKind = 'expiry' | 'cvu' | 'idempotency';

/** Does the work of a record fallen due at `at`; whether it changed anything. */
export type DueHandler = (id: string, at: number) => boolean;

/** Where each kind of due work is found: the table and the column holding when it falls due (`COLUMNS`). */
const DUE: Record<DueKind, { table: 'vaPayments' | 'clients' | 'idempotency'; column: string }> = {
  expiry: { table: 'vaPayments', column: 'due_at' },
  cvu: { table: 'clients', column: 'cvu_ready_at' },
  idempotency: { table: 'idempotency', column: 'due_at' },
};

/**
 * The account's sandbox clock (contract part 5) and what falls due by it: every expiry, delayed CVU and idempotency
 * key, found by when it falls due, done in time order by the module that owns each (`handlers`).
 */
export class DueWork {
  constructor(
    private readonly ctx: AccountContext,
    private readonly handlers: Record<DueKind, DueHandler>,
    /** When the next retry not under way is due (the delivery log's), so a walk stops there too. */
    private readonly nextRetryAt: (inFlight: ReadonlySet<string>) => number | null,
  ) {}

  /** The clock as `GET /sandbox/v1/clock` answers it. */
  view() {
    return { now: this.ctx.now(), offsetSeconds: this.ctx.head.clockOffsetMs / 1000 };
  }

  /**
   * A move of this account's clock: `advance {seconds}` grows its offset by exactly that, `set {at}` goes to a time,
   * forward only. The runtime walks to `until()`, standing at each due instant in turn (`standAt`) and doing its work
   * there, then calls `finish`, from which the clock runs on with real time.
   */
  move(kind: 'advance' | 'set', body: unknown): ClockMove {
    const { ctx } = this;
    if (kind === 'advance') {
      const { seconds } = parse(clockAdvanceSchema, body);
      checkClockMove(ctx.nowMs() + seconds * 1000, 'seconds');
      const offset = ctx.head.clockOffsetMs + seconds * 1000;
      return { until: () => ctx.deps.clock.now() + offset, finish: () => this.runOn(() => offset) };
    }
    const { at: text } = parse(clockSetSchema, body);
    const at = ms(text);
    const now = ctx.nowMs();
    if (at < now)
      throw new SandboxError(
        'INVALID_STATE',
        `The sandbox clock only moves forward: ${iso(at)} is before now (${iso(now)})`,
      );
    checkClockMove(at, 'at');
    if (at - now > MAX_CLOCK_MOVE_SECONDS * 1000) {
      throw new SandboxError('VALIDATION_ERROR', 'Invalid request body: at: must be at most 10 years after now', [
        'at: must be at most 10 years after now',
      ]);
    }
    return { until: () => at, finish: () => this.runOn((wallNow) => at - wallNow) };
  }

  /**
   * The first instant, at or before `until`, when something falls due: an expiry, a delayed CVU, an old idempotency
   * key, or (unless `inFlight` is null: retries left for later) a retry not under way.
   */
  nextInstant(until: number, inFlight: ReadonlySet<string> | null): number | null {
    const retry = inFlight === null ? null : this.nextRetryAt(inFlight);
    const at = Math.min(this.nextDueAt() ?? Infinity, retry ?? Infinity);
    return at <= until ? at : null;
  }

  /**
   * Stands the clock at an instant of a walk (never back: an overdue item is done now) and does what falls due then:
   * events raised there carry it as `createdAt`, attempts started there carry it as their time.
   */
  standAt(at: number): void {
    const { ctx } = this;
    ctx.standing = Math.max(at, ctx.nowMs());
    ctx.head.clockOffsetMs = ctx.standing - ctx.deps.clock.now();
    ctx.changedHeader();
    this.runDue();
  }

  /** Ends a walk: the clock runs on with real time, the offset ahead of it; the clock as it reads at that moment. */
  private runOn(offsetAt: (wallNow: number) => number): ReturnType<DueWork['view']> {
    const { ctx } = this;
    const wallNow = ctx.deps.clock.now();
    ctx.standing = null;
    ctx.head.clockOffsetMs = offsetAt(wallNow);
    ctx.changedHeader();
    return { now: iso(wallNow + ctx.head.clockOffsetMs), offsetSeconds: ctx.head.clockOffsetMs / 1000 };
  }

  /**
   * Does everything due by now, in time order, each standing at its own instant: work found overdue (the server was
   * down, a timer fired late) raises its events as at the instant it fell due, as living through that time would.
   * Returns whether anything changed.
   */
  runDue(): boolean {
    const now = this.ctx.nowMs();
    let changed = false;
    // Most calls (one before every request) find nothing due: the earliest times alone are cheaper to read than records.
    if ((this.nextDueAt() ?? Infinity) > now) return false;
    for (let item = this.next(now); item; item = this.next(now)) {
      const { kind, id, at } = item;
      if (this.ctx.at(at, () => this.handlers[kind](id, at))) changed = true;
      else throw new Error(`due ${kind} ${id} at ${iso(at)} was not done`); // it would be found again forever
    }
    return changed;
  }

  /** The first work due by `until`: the earliest, and at one instant expiries, then CVUs, then idempotency keys. */
  private next(until: number): { kind: DueKind; id: string; at: number } | null {
    let first: { kind: DueKind; id: string; at: number } | null = null;
    for (const [kind, { table, column }] of Object.entries(DUE) as [DueKind, (typeof DUE)[DueKind]][]) {
      const found = this.ctx.records.findEntry(table, { by: column, where: { [column]: { to: until } } });
      if (!found) continue;
      const at = COLUMNS[table][column]!(found[1] as never) as number;
      if (first === null || at < first.at) first = { kind, id: found[0], at };
    }
    return first;
  }

  /** The sandbox time of the next thing due (an expiry, a delayed CVU, an idempotency key to forget), or null. */
  nextDueAt(): number | null {
    const times = Object.values(DUE).map(({ table, column }) => this.ctx.records.min(table, column) as number | null);
    return times.reduce<number | null>(
      (first, at) => (at !== null && (first === null || at < first) ? at : first),
      null,
    );
  }
}
