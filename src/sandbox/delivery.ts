import type { Account, DueDelivery } from '../core/index.js';
import { Flights } from './delivery-flights.js';
import { createPacing } from './delivery-pace.js';
import { createSender, type Transport } from './delivery-send.js';

export { PACED_BACKLOG } from './delivery-pace.js';
export type { AttemptResult, Transport } from './delivery-send.js';

export interface DelivererOptions {
  /** Per-attempt timeout, in milliseconds of real time. */
  timeoutMs: number;
  /** Attempts in flight at once, across every account. */
  concurrency: number;
  /** Called after each recorded attempt: look for more work, and persist. */
  onAttempt: () => Promise<void>;
  log: (line: string) => void;
  /** Real time, in ms. */
  now: () => number;
  /** Sends each attempt in place of real HTTP (the msw handlers' `onCallback`); it must not throw. */
  transport?: Transport;
}

/** With the `shuffle` fault, how long a first attempt may be held back, at most (ms of real time). */
const SHUFFLE_HOLD_MS = 250;

const wait = async (ms: number) => {
  if (ms > 0) await new Promise((resolve) => setTimeout(resolve, ms));
};

/**
 * Sends due deliveries over real HTTP, beside request handling and bounded in concurrency, so a slow,
 * hanging or huge receiver never slows the API. The core decides what is due and what an attempt means.
 */
export function createDeliverer(accounts: () => Account[], options: DelivererOptions) {
  const sender = createSender(options.timeoutMs, options.transport);
  const flights = new Flights(options.concurrency);
  /** How many of the account's deliveries wait for their first attempt, those under way aside. */
  const backlogOf = (account: Account): number => account.waitingFirst(flights.firstsOf(account.key));
  const pacing = createPacing(backlogOf);
  /** Accounts whose clock is being walked: only the walk starts their attempts, an instant at a time. */
  const walking = new Set<string>();
  /** Where the next pump starts among the accounts: each pump starts one further, round robin. */
  let turn = 0;
  let closed = false;

  /** One send of an attempt's request: what it got and how long it took, from when it started (the account's clock). */
  async function sendOnce(account: Account, url: string, headers: Record<string, string>, body: string) {
    const startedAt = account.now();
    const started = performance.now();
    const result = await sender.send(url, headers, body);
    return { startedAt, durationMs: Math.round(performance.now() - started), ...result };
  }

  /**
   * One attempt, with the account's delivery faults: `delayMs` waits before each send, `shuffle` holds a first attempt
   * back a random moment (so other payments' events overtake it), `duplicate` sends a 2xx attempt once more, logged
   * as an attempt of its own marked `fault`. Out of flight as soon as its outcome is recorded.
   */
  async function attempt(account: Account, due: DueDelivery): Promise<void> {
    const { delivery, event, headers, url } = due;
    const body = JSON.stringify(event.body);
    const forwardedTo = url === delivery.url ? null : url;
    const faults = account.faults();
    try {
      if (faults.shuffle && delivery.attempts.length === 0) await wait(Math.random() * SHUFFLE_HOLD_MS);
      await wait(faults.delayMs);
      const sent = await sendOnce(account, url, headers, body);
      let again = null;
      if (faults.duplicate && sent.error === null) {
        await wait(faults.delayMs);
        again = await sendOnce(account, url, headers, body);
      }
      if (closed) return;
      account.recordAttempt(delivery.id, { ...sent, forwardedTo });
      if (again) account.recordAttempt(delivery.id, { ...again, forwardedTo, fault: 'duplicate' });
    } catch (error) {
      options.log(`delivery ${delivery.id} could not be recorded: ${(error as Error).message}`);
    } finally {
      // Out of flight before anything looks for more work: a retry of a delivery in flight is not queued.
      flights.remove(account.key, due);
    }
  }

  function start(account: Account, due: DueDelivery): void {
    flights.add(account.key, due);
    void attempt(account, due).then(() =>
      closed ? undefined : options.onAttempt().catch((error: Error) => options.log(`saving a delivery attempt failed: ${error.message}`)),
    );
    pacing.started(account);
  }

  /**
   * Starts the account's due attempts while slots are free, up to its share. `full`: one was left for want of a
   * slot; `held`: one was left because the account has its share under way or its receiver is busy (the rest stay
   * due, and a finishing attempt pumps again); `done`: nothing due is left. The due deliveries are not read at all
   * when there is no room: a pump comes at every turn of the event loop with attempts ending.
   */
  function startDue(account: Account): 'full' | 'held' | 'done' {
    const room = flights.roomFor(account.key);
    if (room) return room;
    for (const due of account.dueDeliveries(flights.of(account.key))) {
      const left = flights.roomFor(account.key) ?? (flights.busy(due.url) ? 'held' : null);
      if (left) return left;
      start(account, due);
    }
    return 'done';
  }

  /** The real time of the account's next retry not under way, or null (the account's clock may run ahead of real time). */
  function nextRetryOf(account: Account): number | null {
    const at = account.nextRetryAt(flights.of(account.key));
    return at === null ? null : at - (account.nowMs() - options.now());
  }

  return {
    /**
     * Starts every due attempt there is room for, and tells the real time of the next retry (null when none, or
     * when every slot is taken: a finishing attempt pumps again). Accounts being walked are left to their walk.
     */
    pump(): number | null {
      if (closed) return null;
      let next: number | null = null;
      const all = accounts();
      turn = all.length === 0 ? 0 : (turn + 1) % all.length;
      for (const account of [...all.slice(turn), ...all.slice(0, turn)]) {
        if (walking.has(account.key)) continue;
        const started = startDue(account);
        if (started === 'full') return null;
        if (started === 'held') continue;
        const wall = nextRetryOf(account);
        if (wall !== null && (next === null || wall < next)) next = wall;
      }
      return next;
    },
    /** Runs `walk` with the account's attempts left to it (`deliverDue`), not to `pump`. */
    async walk<T>(account: Account, walk: () => Promise<T>): Promise<T> {
      walking.add(account.key);
      try {
        return await walk();
      } finally {
        walking.delete(account.key);
      }
    },
    /**
     * A walk's work at one instant: starts every attempt due in the account and waits for them and for those they let
     * start (the next event of the same payment), until none is due or under way, or until `deadline` (performance.now()).
     */
    async deliverDue(account: Account, deadline: number): Promise<void> {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>((resolve) => (timer = setTimeout(resolve, Math.max(deadline - performance.now(), 0), 'late')));
      try {
        while (!closed) {
          const started = startDue(account);
          if (flights.of(account.key).size === 0 && started === 'done') return;
          if ((await Promise.race([flights.next(), late])) === 'late') return;
        }
      } finally {
        clearTimeout(timer);
      }
    },
    backlogOf,
    paced: (account: Account) => (closed ? Promise.resolve() : pacing.paced(account)),
    /** The ids of the account's attempts under way. */
    inFlightOf: (account: Account): ReadonlySet<string> => flights.of(account.key),
    inFlight: () => flights.running,
    async close(): Promise<void> {
      closed = true;
      flights.wake();
      pacing.close();
      await sender.close();
    },
  };
}

export type Deliverer = ReturnType<typeof createDeliverer>;
