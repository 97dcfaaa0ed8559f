import type { Agent } from 'undici';
import type { Account, Attempt, AttemptError, DueDelivery } from '../core/index.js';

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

/** One attempt's request: the event's JSON body, as text, and its callback headers. */
export type Transport = (request: { url: string; headers: Record<string, string>; body: string }) => Promise<AttemptResult>;

/**
 * Fair shares: one account's attempts take at most half the slots, so other accounts (parallel CI jobs) always find
 * room; and one receiver (its origin) gets at most as many attempts at once as it has connections, so none waits
 * in the HTTP client's queue with its timeout running before it is even sent.
 */
const ACCOUNT_SHARE = 0.5;
const PER_RECEIVER = 8;

/**
 * Pacing: a write that raised callbacks is answered once its account has at most this many deliveries waiting for a
 * first attempt, so a caller cannot raise them faster than they go out, and a callback waits for about this many
 * before it plus those under way. Measured (1,000 transfers at 32 connections, 50 receivers answering 200, a busy
 * 2-core machine): with 16, transfer → callback p50 30-55 ms at 670-1,140 callbacks/s; with 32, 45-133 ms at
 * 370-1,170; with 8, 45-72 ms at 340-640 (no lower latency, and fewer callbacks a second). Runs on a machine shared
 * with other work: the pace varies with the CPU left, and the wait with it, about this many callbacks' worth.
 */
export const PACED_BACKLOG = 16;
/**
 * The longest a write waits for that (ms of real time). And a write does not wait when none of its account's attempts
 * started for as long: its receivers hang (an attempt holds its slot up to the attempt timeout) and waiting would not
 * shorten the queue, so the API answers at its usual pace instead of a second late each time.
 */
const PACE_WAIT_MS = 1000;

const NO_FLIGHT: ReadonlyMap<string, Promise<void>> = new Map();

const READ_LIMIT = 64 * 1024;
/** With the `shuffle` fault, how long a first attempt may be held back, at most (ms of real time). */
const SHUFFLE_HOLD_MS = 250;
const KEEP_LIMIT = 2 * 1024;

/**
 * Sends due deliveries over real HTTP, beside request handling and bounded in concurrency, so a slow,
 * hanging or huge receiver never slows the API. The core decides what is due and what an attempt means.
 */
export function createDeliverer(accounts: () => Account[], options: DelivererOptions) {
  // undici is loaded for the first callback, not at start, where it would be a quarter of the start-up time.
  let http: Promise<Http> | null = null;
  const client = (): Promise<Http> =>
    (http ??= import('undici').then(({ Agent, request }) => ({
      request,
      // Each phase gets the attempt's timeout too: undici's own 10 s defaults would cut a longer --callback-timeout.
      agent: new Agent({
        connections: PER_RECEIVER,
        pipelining: 1,
        connectTimeout: options.timeoutMs,
        headersTimeout: options.timeoutMs,
        bodyTimeout: options.timeoutMs,
      }),
    })));
  /** Each account's attempts under way, by delivery id. */
  const inFlight = new Map<string, Map<string, Promise<void>>>();
  /** Accounts whose clock is being walked: only the walk starts their attempts, an instant at a time. */
  const walking = new Set<string>();
  /** Those waiting for a free slot (a walk whose attempts found every slot taken). */
  const slotWaiters: (() => void)[] = [];
  let running = 0;
  /** Attempts under way per receiver origin. */
  const perReceiver = new Map<string, number>();
  /** Writes waiting for their account's backlog to shrink (see `paced`), by account. */
  const pacing = new Map<string, Set<() => void>>();
  /** When each account's last attempt started (performance.now()). */
  const lastStart = new Map<string, number>();
  /** Where the next pump starts among the accounts: each pump starts one further, round robin. */
  let turn = 0;
  let closed = false;

  /** An account with none under way has no entry: an account costs nothing here once its attempts are over. */
  const flightOf = (account: Account): ReadonlyMap<string, Promise<void>> => inFlight.get(account.key) ?? NO_FLIGHT;
  const idsOf = (account: Account): ReadonlySet<string> => new Set(flightOf(account).keys());
  const backlogOf = (account: Account): number => account.waitingFirst(flightOf(account).keys());

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

  function start(account: Account, due: DueDelivery): void {
    let flight = inFlight.get(account.key);
    if (!flight) inFlight.set(account.key, (flight = new Map()));
    const receiver = originOf(due.url);
    running++;
    perReceiver.set(receiver, (perReceiver.get(receiver) ?? 0) + 1);
    const done = attempt(account, due)
      .finally(() => {
        // Out of flight before anything looks for more work: a retry of a delivery in flight is not queued.
        flight.delete(due.delivery.id);
        if (flight.size === 0 && inFlight.get(account.key) === flight) inFlight.delete(account.key);
        running--;
        const left = perReceiver.get(receiver)! - 1;
        if (left === 0) perReceiver.delete(receiver);
        else perReceiver.set(receiver, left);
        for (const resolve of slotWaiters.splice(0)) resolve();
      })
      .then(() => (closed ? undefined : options.onAttempt().catch((error: Error) => options.log(`saving a delivery attempt failed: ${error.message}`))));
    flight.set(due.delivery.id, done);
    const now = performance.now();
    // Only starts within PACE_WAIT_MS matter to `paced`: older ones go, so accounts long quiet cost nothing here.
    for (const [key, at] of lastStart) if (now - at > PACE_WAIT_MS) lastStart.delete(key);
    lastStart.set(account.key, now);
    release(account);
  }

  /** One send of an attempt's request: what it got and how long it took, from when it started (the account's clock). */
  async function sendOnce(account: Account, url: string, headers: Record<string, string>, body: string) {
    const startedAt = account.now();
    const started = performance.now();
    const result = options.transport
      ? await withTimeout(options.transport({ url, headers, body }), options.timeoutMs)
      : await send(await client(), url, headers, body, options.timeoutMs);
    return { startedAt, durationMs: Math.round(performance.now() - started), ...result };
  }

  /**
   * One attempt, with the account's delivery faults: `delayMs` waits before each send, `shuffle` holds a first attempt
   * back a random moment (so other payments' events overtake it), `duplicate` sends a 2xx attempt once more, logged
   * as an attempt of its own marked `fault`.
   */
  async function attempt(account: Account, { delivery, event, headers, url }: DueDelivery): Promise<void> {
    const body = JSON.stringify(event.body);
    const forwardedTo = url === delivery.url ? null : url;
    const faults = account.faults();
    const wait = async (ms: number) => {
      if (ms > 0) await new Promise((resolve) => setTimeout(resolve, ms));
    };
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
    }
  }

  /**
   * Starts the account's due attempts while slots are free, up to its share. `full`: one was left for want of a
   * slot; `held`: one was left because the account has its share under way or its receiver is busy (the rest stay
   * due, and a finishing attempt pumps again); `done`: nothing due is left.
   */
  function startDue(account: Account): 'full' | 'held' | 'done' {
    const share = Math.max(1, Math.floor(options.concurrency * ACCOUNT_SHARE));
    for (const due of account.dueDeliveries(idsOf(account))) {
      if (running >= options.concurrency) return 'full';
      if (flightOf(account).size >= share || (perReceiver.get(originOf(due.url)) ?? 0) >= PER_RECEIVER) return 'held';
      start(account, due);
    }
    return 'done';
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
        const at = account.nextRetryAt(idsOf(account));
        if (at === null) continue;
        const wall = at - (account.nowMs() - options.now()); // the account's clock may run ahead of real time
        if (next === null || wall < next) next = wall;
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
          const flight = flightOf(account);
          const next =
            flight.size > 0
              ? Promise.race(flight.values())
              : started !== 'done'
                ? new Promise<void>((resolve) => slotWaiters.push(resolve))
                : null;
          if (next === null || (await Promise.race([next, late])) === 'late') return;
        }
      } finally {
        clearTimeout(timer);
      }
    },
    /** How many of the account's deliveries wait for their first attempt, those under way aside. */
    backlogOf,
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
    /** The ids of the account's attempts under way. */
    inFlightOf: idsOf,
    inFlight: () => running,
    async close(): Promise<void> {
      closed = true;
      for (const resolve of slotWaiters.splice(0)) resolve();
      for (const waiting of pacing.values()) for (const resolve of waiting) resolve();
      if (http) await (await http).agent.destroy();
    },
  };
}

export type Deliverer = ReturnType<typeof createDeliverer>;

export type AttemptResult = Pick<Attempt, 'responseStatus' | 'responseBody' | 'error' | 'errorMessage'>;

interface Http {
  request: typeof import('undici').request;
  agent: Agent;
}

/** A callback URL's receiver, as the HTTP client pools connections: scheme, host and port. */
function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}

/** One POST: 2xx is success, a redirect is a failure (not followed), at most 64 KiB of the answer is read. */
async function send({ request, agent }: Http, url: string, headers: Record<string, string>, body: string, timeoutMs: number): Promise<AttemptResult> {
  try {
    const response = await request(url, {
      method: 'POST',
      headers,
      body,
      dispatcher: agent,
      signal: AbortSignal.timeout(timeoutMs),
    });
    const responseBody = await readSome(response.body);
    const status = response.statusCode;
    const error: AttemptError | null = status >= 200 && status < 300 ? null : status >= 300 && status < 400 ? 'redirect' : 'http_status';
    const location = response.headers.location;
    return {
      responseStatus: status,
      responseBody,
      error,
      errorMessage:
        error === 'redirect' ? `redirect to ${String(location ?? '(no location)')} not followed` : error ? `HTTP ${status}` : null,
    };
  } catch (cause) {
    return { responseStatus: null, responseBody: null, ...classify(cause) };
  }
}

/** Reads up to 64 KiB (keeping the first 2 KiB for the log) and destroys the rest of the stream. */
async function readSome(stream: AsyncIterable<Buffer> & { destroy(): void }): Promise<string> {
  const chunks: Buffer[] = [];
  let read = 0;
  try {
    for await (const chunk of stream) {
      if (read < KEEP_LIMIT) chunks.push(chunk);
      read += chunk.length;
      if (read >= READ_LIMIT) break;
    }
  } finally {
    stream.destroy();
  }
  return Buffer.concat(chunks).subarray(0, KEEP_LIMIT).toString('utf8');
}

/** A transport's attempt, cut at the attempt timeout as an HTTP one is (a handler that never settles holds no slot). */
async function withTimeout(attempt: Promise<AttemptResult>, timeoutMs: number): Promise<AttemptResult> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<AttemptResult>((resolve) => {
    timer = setTimeout(() => resolve({ responseStatus: null, responseBody: null, ...TIMED_OUT }), timeoutMs);
  });
  try {
    return await Promise.race([attempt, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

const TIMED_OUT = { error: 'timeout', errorMessage: 'no answer within the attempt timeout' } as const;

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

function classify(cause: unknown): Pick<Attempt, 'error' | 'errorMessage'> {
  const error = cause as Error & { code?: string; cause?: { code?: string } };
  const code = error.code ?? error.cause?.code ?? '';
  const message = error.message || String(cause);
  if (error.name === 'TimeoutError' || error.name === 'AbortError' || TIMEOUT_CODES.has(code)) {
    return TIMED_OUT;
  }
  if (code === 'ECONNREFUSED') return { error: 'connection_refused', errorMessage: message };
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' || code === 'EPIPE') return { error: 'connection_reset', errorMessage: message };
  return { error: 'network', errorMessage: `${code ? `${code}: ` : ''}${message}` };
}
