import { randomInt, randomUUID } from 'node:crypto';
import { DAY_MS } from '../../core/clock/retention.js';
import {
  ACCOUNT_CACHE,
  type AccountCache,
  createSandbox,
  defaultDeliveryPolicy,
  type IdSource,
  type Sandbox,
  type WallClock,
} from '../../core/index.js';
import { createDeliverer, type Transport } from '../delivery/delivery.js';
import type { Store } from '../store/database.js';
import type { JournalStore } from '../store/journal.js';
import { clockWalks, retain } from './clock-walks.js';
import { type ProgressBoard, progressBoard, SERVER, type Work } from './progress.js';

export interface RuntimeOptions {
  store: Store;
  clock?: WallClock;
  ids?: IdSource;
  /** Sandbox seconds before each callback retry (default 5, 25). */
  retryDelays?: number[];
  /** Per-attempt callback timeout, in ms. */
  callbackTimeoutMs?: number;
  /** Callbacks go here instead of over HTTP (the msw handlers' `onCallback`). */
  transport?: Transport;
  strictTaxId?: boolean;
  hubIds?: number[];
  /** `--keep`: days of sandbox clock after which ended payments are removed (see `pruned`); absent: kept. */
  keepDays?: number;
  log?: (line: string) => void;
  version?: string;
  /** Where long work says how it stands (a clock move, an import, a retention sweep); a board of its own when absent. */
  progress?: ProgressBoard;
  /** How many accounts are kept in memory, and how long unused (`ACCOUNT_CACHE` when absent). */
  accountCache?: AccountCache;
}

const systemClock: WallClock = { now: () => Date.now() };
const systemIds: IdSource = { uuid: () => randomUUID(), int: (max) => randomInt(max) };

/** How often the accounts in use are pruned with `--keep`, in ms of real time. */
const PRUNE_EVERY_MS = 3600_000;

/** After due work could not be stored, it is tried again this much later. */
const STORE_RETRY_MS = 1000;

/** The largest delay setTimeout accepts; a later deadline is simply re-checked when the timer fires. */
const MAX_TIMER = 2 ** 31 - 1;

/**
 * The running sandbox: the core over a store, a timer that fires when the next expiry, delayed CVU or retry is due
 * (by each account's clock), and the deliverer that sends callbacks.
 */
export async function createRuntime(options: RuntimeOptions) {
  const clock = options.clock ?? systemClock;
  const ids = options.ids ?? systemIds;
  const log = options.log ?? (() => {});
  const { store } = options;
  const progress = options.progress ?? progressBoard();
  const keepMs = options.keepDays === undefined ? undefined : options.keepDays * DAY_MS;
  const sandbox = createSandbox({
    storage: store,
    clock,
    ids,
    policy: { ...defaultDeliveryPolicy, retryDelays: options.retryDelays ?? defaultDeliveryPolicy.retryDelays },
    strictTaxId: options.strictTaxId,
    hubIds: options.hubIds,
    ...(keepMs === undefined ? {} : { keepMs }),
    cache: options.accountCache ?? ACCOUNT_CACHE,
    // Callbacks to send (or an attempt under way) and a clock move keep their account in memory: they use it later.
    busy: (key) => sending.has(key) || walks.walking(key),
  });
  /** The accounts with deliveries to send (first attempts or retries): the only ones the deliverer looks at. */
  const sending = new Set<string>();
  store.attach({
    // A write the store could not keep was rolled back: the account's head is read again as the database holds it.
    undo: (key) => sandbox.account(key).reload(),
    // Told at each save of the accounts it wrote: so no pump or timer ever walks every account.
    wake: (key) => {
      const account = sandbox.account(key);
      const wake = account.wake();
      // An attempt under way keeps it there too: its outcome may be a retry, which the pump after it must see.
      if (wake.sending || deliverer.inFlightOf(account).size > 0) sending.add(key);
      else sending.delete(key);
      return wake;
    },
  });
  const due = dueTimer({ store, sandbox, clock, pump: () => deliverer.pump() });
  const { commit } = due;
  const deliverer = createDeliverer(() => [...sending].map((key) => sandbox.account(key)), {
    timeoutMs: options.callbackTimeoutMs ?? 10_000,
    transport: options.transport,
    concurrency: 32,
    // The next attempts start at once (the order rule asks that the previous one finished, not that it is on disk), and
    // the record joins the next group commit: waiting for the disk first halved the callbacks' pace.
    onAttempt: () => {
      due.pumpSoon();
      return store.save();
    },
    log,
    now: () => clock.now(),
  });
  const walks = clockWalks({ deliverer, progress, keepMs, journal: store.journal, commit });

  await catchUp({ store, clock, log, progress, tick: due.tick });
  // Accounts unused for a while leave memory (the store keeps them), whether or not other keys come.
  const forgetting = setInterval(() => sandbox.forgetIdle(), (options.accountCache ?? ACCOUNT_CACHE).idleMs).unref();
  /** Retention while running: the accounts in use are pruned once an hour of real time, saying how far it got. */
  const sweep = (): void => {
    if (keepMs !== undefined && prune(sandbox, keepMs, progress, store.journal)) void commit().catch(() => {});
  };
  const pruning = keepMs === undefined ? null : setInterval(sweep, PRUNE_EVERY_MS).unref();

  return {
    sandbox,
    store,
    keepDays: options.keepDays ?? null,
    log,
    version: options.version ?? '0.0.0',
    commit,
    deliverer,
    moveClock: walks.moveClock,
    progress,
    sweep,
    async close(): Promise<void> {
      due.close();
      if (pruning) clearInterval(pruning);
      clearInterval(forgetting);
      await deliverer.close();
      await store.close();
    },
  };
}

export type Runtime = Awaited<ReturnType<typeof createRuntime>>;

interface DueTimerOptions {
  store: Store;
  sandbox: Sandbox;
  clock: WallClock;
  /** Starts the callback attempts that are due; returns when the deliverer's next one is (real time), or null. */
  pump: () => number | null;
}

/** The timer of due work: `commit` stores the state, lets due work run and sets the timer for the next. */
function dueTimer({ store, sandbox, clock, pump }: DueTimerOptions) {
  let timer: NodeJS.Timeout | null = null;
  let timerAt: number | null = null;
  let closed = false;

  /** Persists the state as it is now, then lets due work run and sets the timer for the next. */
  async function commit(): Promise<void> {
    await store.save();
    pumpSoon();
  }

  let pumpQueued = false;
  /**
   * One pump a turn of the event loop, however many attempts finished and writes were committed in it: each pump reads
   * the due deliveries, and one a request and one an attempt took a quarter of the server's time under load.
   */
  function pumpSoon(): void {
    if (pumpQueued || closed) return;
    pumpQueued = true;
    setImmediate(() => {
      pumpQueued = false;
      if (!closed) schedule(pump());
    });
  }

  /**
   * Sets the timer for the next expiry, delayed CVU or retry of any account (the store keeps when each account's falls
   * due, so no account is walked), or the deliverer's next (`nextDelivery`, real time).
   */
  function schedule(nextDelivery: number | null): void {
    const due = store.nextDueAt();
    const next = due === null ? nextDelivery : nextDelivery === null ? due : Math.min(due, nextDelivery);
    if (next === timerAt && timer) return;
    if (timer) clearTimeout(timer);
    timer = null;
    timerAt = next;
    if (next === null || closed) return;
    timer = setTimeout(tick, Math.min(Math.max(next - clock.now(), 0), MAX_TIMER));
    timer.unref();
  }

  /** Does what fell due in every account it fell due in; `work`, at start, is told how many accounts are done. */
  function tick(work?: Work): void {
    timer = null;
    timerAt = null;
    const now = clock.now();
    const keys = store.waking(now);
    work?.report(0, keys.length);
    for (const [i, key] of keys.entries()) {
      const account = sandbox.account(key);
      account.clock.runDue();
      // Written again even if nothing changed: the store then knows when it next falls due.
      store.writeHead(key, account.head);
      work?.report(i + 1);
    }
    commit().catch(() => {
      // Not stored (a full disk; the store said why) and undone: the same work falls due again, tried a second later.
      if (closed || timer) return;
      timer = setTimeout(tick, STORE_RETRY_MS);
      timer.unref();
    });
  }

  const close = (): void => {
    closed = true;
    if (timer) clearTimeout(timer);
  };
  return { commit, schedule, pumpSoon, tick, close };
}

/**
 * What fell due while the server was down (expiries, retries, unsent deliveries) happens now, in the accounts it fell
 * due in (the others are read when first used). The log says so when there is some: each expiry is an event and a
 * callback, and a large state that all fell due takes a while to start.
 */
async function catchUp({
  store,
  clock,
  log,
  progress,
  tick,
}: {
  store: Store;
  clock: WallClock;
  log: (line: string) => void;
  progress: ProgressBoard;
  tick: (work?: Work) => void;
}) {
  const started = performance.now();
  const behind = store.waking(clock.now()).length > 0;
  if (behind)
    log(
      'doing what fell due while the server was stopped (expiries, delayed client CVUs, deliveries) before answering',
    );
  const catchingUp = behind ? progress.start(SERVER, 'catching up at start', 0, 'accounts') : undefined;
  try {
    tick(catchingUp);
    await store.save().catch(() => {}); // if it could not be stored, `tick` tries again
  } finally {
    catchingUp?.end();
  }
  if (behind) log(`done what fell due while the server was stopped in ${Math.round(performance.now() - started)} ms`);
}

/** Prunes every account in memory with `--keep`, saying how far it got; true when anything was removed. */
function prune(sandbox: Sandbox, keepMs: number, progress: ProgressBoard, journal: JournalStore): boolean {
  const accounts = sandbox.accounts();
  const work = progress.start(SERVER, 'retention sweep', accounts.length, 'accounts');
  let pruned = false;
  try {
    for (const [i, account] of accounts.entries()) {
      if (retain(account, keepMs, journal)) pruned = true;
      work.report(i + 1);
    }
  } finally {
    work.end();
  }
  return pruned;
}
