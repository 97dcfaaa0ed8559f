import type { Account, DueDelivery } from '../../core/index.js';
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
export function createDeliverer(accounts: () => Account[], options: DelivererOptions): Deliverer {
  return new Deliverer(accounts, options);
}

export class Deliverer {
  private readonly sender;
  private readonly flights;
  private readonly pacing;
  /** Accounts whose clock is being walked: only the walk starts their attempts, an instant at a time. */
  private readonly walking = new Set<string>();
  /** Where the next pump starts among the accounts: each pump starts one further, round robin. */
  private turn = 0;
  private closed = false;

  constructor(
    private readonly accounts: () => Account[],
    private readonly options: DelivererOptions,
  ) {
    this.sender = createSender(options.timeoutMs, options.transport);
    this.flights = new Flights(options.concurrency);
    this.pacing = createPacing((account) => this.backlogOf(account));
  }

  /** How many of the account's deliveries wait for their first attempt, those under way aside. */
  backlogOf(account: Account): number {
    return account.deliveries.waitingFirst(this.flights.firstsOf(account.key));
  }

  /**
   * Starts every due attempt there is room for, and tells the real time of the next retry (null when none, or
   * when every slot is taken: a finishing attempt pumps again). Accounts being walked are left to their walk.
   */
  pump(): number | null {
    if (this.closed) return null;
    let next: number | null = null;
    const all = this.accounts();
    this.turn = all.length === 0 ? 0 : (this.turn + 1) % all.length;
    for (const account of [...all.slice(this.turn), ...all.slice(0, this.turn)]) {
      if (this.walking.has(account.key)) continue;
      const started = this.startDue(account);
      if (started === 'full') return null;
      if (started === 'held') continue;
      const wall = this.nextRetryOf(account);
      if (wall !== null && (next === null || wall < next)) next = wall;
    }
    return next;
  }

  /** Runs `walk` with the account's attempts left to it (`deliverDue`), not to `pump`. */
  async walk<T>(account: Account, walk: () => Promise<T>): Promise<T> {
    this.walking.add(account.key);
    try {
      return await walk();
    } finally {
      this.walking.delete(account.key);
    }
  }

  /**
   * A walk's work at one instant: starts every attempt due in the account and waits for them and for those they let
   * start (the next event of the same payment), until none is due or under way, or until `deadline` (performance.now()).
   */
  async deliverDue(account: Account, deadline: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>(
      (resolve) => (timer = setTimeout(resolve, Math.max(deadline - performance.now(), 0), 'late')),
    );
    try {
      while (!this.closed) {
        const started = this.startDue(account);
        if (this.flights.of(account.key).size === 0 && started === 'done') return;
        if ((await Promise.race([this.flights.next(), late])) === 'late') return;
      }
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Waits, at most a second, until the account's backlog is short (`PACED_BACKLOG`): a write that raised callbacks is
   * answered then.
   */
  paced(account: Account): Promise<void> {
    return this.closed ? Promise.resolve() : this.pacing.paced(account);
  }

  /** The ids of the account's attempts under way (a live view). */
  inFlightOf(account: Account): ReadonlySet<string> {
    return this.flights.of(account.key);
  }

  inFlight(): number {
    return this.flights.running;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.flights.wake();
    this.pacing.close();
    await this.sender.close();
  }

  /**
   * Starts the account's due attempts while slots are free, up to its share. `full`: one was left for want of a
   * slot; `held`: one was left because the account has its share under way or its receiver is busy (the rest stay
   * due, and a finishing attempt pumps again); `done`: nothing due is left. The due deliveries are not read at all
   * when there is no room: a pump comes at every turn of the event loop with attempts ending.
   */
  private startDue(account: Account): 'full' | 'held' | 'done' {
    const { flights } = this;
    const room = flights.roomFor(account.key);
    if (room) return room;
    for (const due of account.deliveries.dueDeliveries(flights.of(account.key))) {
      const left = flights.roomFor(account.key) ?? (flights.busy(due.url) ? 'held' : null);
      if (left) return left;
      this.start(account, due);
    }
    return 'done';
  }

  private start(account: Account, due: DueDelivery): void {
    this.flights.add(account.key, due);
    void this.attempt(account, due).then(() =>
      this.closed
        ? undefined
        : this.options
            .onAttempt()
            .catch((error: Error) => this.options.log(`saving a delivery attempt failed: ${error.message}`)),
    );
    this.pacing.started(account);
  }

  /**
   * One attempt, with the account's delivery faults: `delayMs` waits before each send, `shuffle` holds a first attempt
   * back a random moment (so other payments' events overtake it), `duplicate` sends a 2xx attempt once more, logged
   * as an attempt of its own marked `fault`. Out of flight as soon as its outcome is recorded.
   */
  private async attempt(account: Account, due: DueDelivery): Promise<void> {
    const { delivery, event, headers, url } = due;
    const body = JSON.stringify(event.body);
    const forwardedTo = url === delivery.url ? null : url;
    const faults = account.deliveries.faults();
    try {
      if (faults.shuffle && delivery.attempts.length === 0) await wait(Math.random() * SHUFFLE_HOLD_MS);
      await wait(faults.delayMs);
      const sent = await this.sendOnce(account, url, headers, body);
      let again = null;
      if (faults.duplicate && sent.error === null) {
        await wait(faults.delayMs);
        again = await this.sendOnce(account, url, headers, body);
      }
      if (this.closed) return;
      // Recorded on the delivery as it was started (no read back), the duplicate on the one that attempt left.
      const recorded = account.deliveries.recordAttempt(delivery, { ...sent, forwardedTo });
      if (again) account.deliveries.recordAttempt(recorded, { ...again, forwardedTo, fault: 'duplicate' });
    } catch (error) {
      this.options.log(`delivery ${delivery.id} could not be recorded: ${(error as Error).message}`);
    } finally {
      // Out of flight before anything looks for more work: a retry of a delivery in flight is not queued.
      this.flights.remove(account.key, due);
    }
  }

  /** One send of an attempt's request: what it got and how long it took, from when it started (the account's clock). */
  private async sendOnce(account: Account, url: string, headers: Record<string, string>, body: string) {
    const startedAt = account.now();
    const started = performance.now();
    const result = await this.sender.send(url, headers, body);
    return { startedAt, durationMs: Math.round(performance.now() - started), ...result };
  }

  /** The real time of the account's next retry not under way, or null (the account's clock may run ahead of real time). */
  private nextRetryOf(account: Account): number | null {
    const at = account.deliveries.nextRetryAt(this.flights.of(account.key));
    return at === null ? null : at - (account.nowMs() - this.options.now());
  }
}
