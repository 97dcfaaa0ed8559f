import type { AccountContext } from './account-context.js';
import { checkClockMove, iso, ms } from './clock.js';
import { DueQueue } from './due-queue.js';
import { SandboxError } from './errors.js';
import { clockAdvanceSchema, clockSetSchema, MAX_CLOCK_MOVE_SECONDS, parse } from './schemas.js';

/** A clock move as `DueWork.clockMove` parsed it: walk to `until()` (read at each step), then `finish` (the clock it leaves). */
export interface ClockMove {
  until: () => number;
  finish: () => { now: string; offsetSeconds: number };
}

/** What falls due: a VA payment's expiry, a client's delayed CVU, an idempotency key to forget. */
export type DueKind = 'expiry' | 'cvu' | 'idempotency';

/** Does the work of an item fallen due at `at`, if it still stands (items are never removed early); whether it changed anything. */
export type DueHandler = (id: string, at: number) => boolean;

/**
 * The account's sandbox clock (contract part 5) and what falls due by it: one queue of every expiry, delayed CVU and
 * idempotency key, done in time order by the module that owns each (`handlers`).
 */
export class DueWork {
  private readonly due = new DueQueue();

  constructor(
    private readonly ctx: AccountContext,
    private readonly handlers: Record<DueKind, DueHandler>,
    /** When the next retry not under way is due (the delivery log's), so a walk stops there too. */
    private readonly nextRetryAt: (inFlight: ReadonlySet<string>) => number | null,
  ) {}

  schedule(at: number, kind: DueKind, id: string): void {
    this.due.push(at, `${kind}:${id}`);
  }

  clock() {
    return { now: this.ctx.now(), offsetSeconds: this.ctx.state.clockOffsetMs / 1000 };
  }

  /**
   * A move of this account's clock: `advance {seconds}` grows its offset by exactly that, `set {at}` goes to a time,
   * forward only. The runtime walks to `until()`, standing at each due instant in turn (`standAt`) and doing its work
   * there, then calls `finish`, from which the clock runs on with real time.
   */
  clockMove(kind: 'advance' | 'set', body: unknown): ClockMove {
    const { ctx } = this;
    if (kind === 'advance') {
      const { seconds } = parse(clockAdvanceSchema, body);
      checkClockMove(ctx.nowMs() + seconds * 1000, 'seconds');
      const offset = ctx.state.clockOffsetMs + seconds * 1000;
      return { until: () => ctx.deps.clock.now() + offset, finish: () => this.runOn(() => offset) };
    }
    const { at: text } = parse(clockSetSchema, body);
    const at = ms(text);
    const now = ctx.nowMs();
    if (at < now) throw new SandboxError('INVALID_STATE', `The sandbox clock only moves forward: ${iso(at)} is before now (${iso(now)})`);
    checkClockMove(at, 'at');
    if (at - now > MAX_CLOCK_MOVE_SECONDS * 1000) {
      throw new SandboxError('VALIDATION_ERROR', 'Invalid request body: at: must be at most 10 years after now', ['at: must be at most 10 years after now']);
    }
    return { until: () => at, finish: () => this.runOn((wallNow) => at - wallNow) };
  }

  /**
   * The first instant, at or before `until`, when something falls due: an expiry, a delayed CVU, an old idempotency
   * key, or (unless `inFlight` is null: retries left for later) a retry not under way.
   */
  nextInstant(until: number, inFlight: ReadonlySet<string> | null): number | null {
    const retry = inFlight === null ? null : this.nextRetryAt(inFlight);
    const at = Math.min(this.due.peek()?.at ?? Infinity, retry ?? Infinity);
    return at <= until ? at : null;
  }

  /**
   * Stands the clock at an instant of a walk (never back: an overdue item is done now) and does what falls due then:
   * events raised there carry it as `createdAt`, attempts started there carry it as their time.
   */
  standAt(at: number): void {
    const { ctx } = this;
    ctx.standing = Math.max(at, ctx.nowMs());
    ctx.state.clockOffsetMs = ctx.standing - ctx.deps.clock.now();
    ctx.changedHeader();
    this.runDue();
  }

  /** Ends a walk: the clock runs on with real time, the offset ahead of it; the clock as it reads at that moment. */
  private runOn(offsetAt: (wallNow: number) => number): ReturnType<DueWork['clock']> {
    const { ctx } = this;
    const wallNow = ctx.deps.clock.now();
    ctx.standing = null;
    ctx.state.clockOffsetMs = offsetAt(wallNow);
    ctx.changedHeader();
    return { now: iso(wallNow + ctx.state.clockOffsetMs), offsetSeconds: ctx.state.clockOffsetMs / 1000 };
  }

  /**
   * Does everything due by now, in time order, each standing at its own instant: work found overdue (the server was
   * down, a timer fired late) raises its events as at the instant it fell due, as living through that time would.
   * Returns whether anything changed.
   */
  runDue(): boolean {
    const now = this.ctx.nowMs();
    let changed = false;
    for (let item = this.due.peek(); item && item.at <= now; item = this.due.peek()) {
      this.due.pop();
      const at = item.key.indexOf(':'); // `kind:id`, and an idempotency key may itself hold colons
      const handler = this.handlers[item.key.slice(0, at) as DueKind];
      if (this.ctx.at(item.at, () => handler(item.key.slice(at + 1), item.at))) changed = true;
    }
    return changed;
  }

  /** The sandbox time of the next thing due (an expiry, a delayed CVU, an idempotency key to forget), or null. */
  nextDueAt(): number | null {
    return this.due.peek()?.at ?? null;
  }
}
