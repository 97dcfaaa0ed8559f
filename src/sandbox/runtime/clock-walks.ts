import type { Account } from '../../core/index.js';
import type { Deliverer } from '../delivery/delivery.js';
import type { JournalStore } from '../store/journal.js';
import { giveWay } from './give-way.js';
import type { ProgressBoard } from './progress.js';

/** Real time a clock move waits for the callback attempts of its instants, at most (see `moveClock`). */
const WALK_WAIT_MS = 10_000;

export interface ClockWalkOptions {
  deliverer: Deliverer;
  progress: ProgressBoard;
  /** `--keep` in ms of sandbox clock: what ended longer ago is removed after a move. */
  keepMs: number | undefined;
  /** The request journal: its requests older than `keepMs` go too. */
  journal: JournalStore;
  /** Stores what the move did and sets the timer for what falls due next. */
  commit: () => Promise<void>;
}

/** The runtime's clock moves (`POST /sandbox/v1/clock/advance` and `/set`), one account's after the other. */
export function clockWalks({ deliverer, progress, keepMs, journal, commit }: ClockWalkOptions) {
  /** Each account's clock move under way: moves of one account run one after the other. */
  const walks = new Map<string, Promise<unknown>>();

  /**
   * Moves an account's clock (contract part 4, time order) as if it lived through the time: it stands at each instant
   * something falls due, in order (expiries, delayed CVUs, retries), does that work there and waits for the attempts it
   * starts (and the next events of the same payments they let go) before the next instant. After `WALK_WAIT_MS` of it,
   * attempts under way finish in the background, and the remaining instants' expiries and CVUs are still done in order,
   * but no more attempts are made in the walk: what is left to send goes out after it, as the deliverer sends any due
   * callback. So a jump of years over thousands of callbacks, or over a receiver that hangs, still answers in seconds.
   */
  function moveClock(account: Account, kind: 'advance' | 'set', body: unknown) {
    const previous = walks.get(account.key) ?? Promise.resolve();
    const walk = previous.catch(() => {}).then(() => walkClock(account, kind, body));
    walks.set(account.key, walk);
    return walk.finally(() => {
      if (walks.get(account.key) === walk) walks.delete(account.key);
    });
  }

  async function walkClock(account: Account, kind: 'advance' | 'set', body: unknown) {
    const move = account.clock.move(kind, body);
    const deadline = performance.now() + WALK_WAIT_MS;
    const from = account.nowMs();
    const work = progress.start(
      account.key,
      `clock ${kind}`,
      Math.round((move.until() - from) / 1000),
      'sandbox seconds',
    );
    const clock = await deliverer
      .walk(account, async () => {
        // What is due now goes first, and attempts already under way finish: their outcome sets the retries to come.
        account.clock.standAt(account.nowMs());
        // A walk over thousands of instants would hold every other request up: it lets them in between slices.
        const pause = giveWay();
        for (;;) {
          const attempting = performance.now() < deadline;
          if (attempting) await deliverer.deliverDue(account, deadline);
          const at = account.clock.nextInstant(move.until(), attempting ? deliverer.inFlightOf(account) : null);
          if (at === null) break;
          account.clock.standAt(at);
          work.report(Math.round((at - from) / 1000));
          await pause();
        }
        return move.finish();
      })
      .finally(() => work.end());
    // Time jumped: what ended longer ago than the retention is removed now (else hourly, and when an account is read).
    if (keepMs !== undefined) retain(account, keepMs, journal);
    await commit();
    return clock;
  }

  /** Whether a clock move of the account is under way: it then stays in memory. */
  const walking = (key: string): boolean => walks.has(key);
  return { moveClock, walking };
}

/**
 * Retention of one account (`--keep`): what ended longer ago, and its journal's requests older than that; whether any
 * of the account's records went.
 */
export function retain(account: Account, keepMs: number, journal: JournalStore): boolean {
  journal.prune(account.key, account.nowMs() - keepMs);
  return account.prune(keepMs);
}
