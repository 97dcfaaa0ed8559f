import type { Account } from '../../core/index.js';

/**
 * Pacing: a write that raised callbacks is answered once its account has at most this many deliveries waiting for a
 * first attempt, so a caller cannot raise them faster than they go out, and a callback waits for about this many
 * before it plus those under way. Measured (1,000 transfers at 32 connections, 50 receivers answering 200, a busy
 * 2-core machine): with 16, transfer → callback p50 30-55 ms at 670-1,140 callbacks/s; with 32, 45-133 ms at
 * 370-1,170; with 8, 45-72 ms at 340-640 (no lower latency, and fewer callbacks a second). Runs on a machine shared
 * with other work: the pace varies with the CPU left, and the wait with it, about this many callbacks' worth. With a
 * pump a turn of the event loop, 8 was tried again: no lower latency, fewer transfers a second (159-169 against
 * 180-215).
 */
export const PACED_BACKLOG = 16;
/**
 * The longest a write waits for that (ms of real time). And a write does not wait when none of its account's attempts
 * started for as long: its receivers hang (an attempt holds its slot up to the attempt timeout) and waiting would not
 * shorten the queue, so the API answers at its usual pace instead of a second late each time.
 */
const PACE_WAIT_MS = 1000;

/** The writes waiting for their account's backlog (`backlogOf`) to shrink, let go as attempts start. */
export function createPacing(backlogOf: (account: Account) => number) {
  /** Writes waiting, by account. */
  const pacing = new Map<string, Set<() => void>>();
  /** When each account's last attempt started (performance.now()). */
  const lastStart = new Map<string, number>();
  let closed = false;

  /**
   * Lets the account's waiting writes go, first come first, as many as there is room for under `PACED_BACKLOG`: all at
   * once, their callers' next writes would overshoot it by as many.
   */
  function release(account: Account): void {
    const waiting = pacing.get(account.key);
    if (!waiting) return;
    let room = PACED_BACKLOG - backlogOf(account);
    for (const resolve of waiting) {
      if (room-- < 0) return;
      waiting.delete(resolve);
      resolve();
    }
  }

  return {
    /** An attempt of the account started: its backlog shrank. */
    started(account: Account): void {
      const now = performance.now();
      // Only starts within PACE_WAIT_MS matter to `paced`: older ones go, so accounts long quiet cost nothing here.
      for (const [key, at] of lastStart) if (now - at > PACE_WAIT_MS) lastStart.delete(key);
      lastStart.set(account.key, now);
      release(account);
    },
    /**
     * Waits, at most `PACE_WAIT_MS`, until the account's backlog is down to `PACED_BACKLOG`: a write that raised
     * callbacks is answered then. No wait when it is, or when the account's queue is not moving (see `PACE_WAIT_MS`).
     */
    async paced(account: Account): Promise<void> {
      if (closed || backlogOf(account) <= PACED_BACKLOG) return;
      if (performance.now() - (lastStart.get(account.key) ?? -Infinity) > PACE_WAIT_MS) return;
      const waiting = pacing.get(account.key) ?? new Set();
      pacing.set(account.key, waiting);
      let go = () => {};
      const timer = setTimeout(() => go(), PACE_WAIT_MS);
      await new Promise<void>((resolve) => waiting.add((go = resolve)));
      clearTimeout(timer);
      waiting.delete(go);
      if (waiting.size === 0) pacing.delete(account.key);
    },
    close(): void {
      closed = true;
      for (const waiting of pacing.values()) for (const resolve of waiting) resolve();
    },
  };
}
