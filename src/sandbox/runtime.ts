import { randomUUID, randomInt } from 'node:crypto';
import { createSandbox, defaultDeliveryPolicy, emptyAccountState, type Account, type IdSource, type WallClock } from '../core/index.js';
import { createDeliverer, type Transport } from './delivery.js';
import type { Store } from './store/persistence.js';

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
  log?: (line: string) => void;
  version?: string;
}

export const systemClock: WallClock = { now: () => Date.now() };
export const systemIds: IdSource = { uuid: () => randomUUID(), int: (max) => randomInt(max) };

/**
 * Reading ahead (see `warm`): slices of this many milliseconds, this far apart, and only while requests left the event
 * loop busy less than this share of the time between slices.
 */
const WARM_SLICE_MS = 10;
const WARM_GAP_MS = 5;
const WARM_WHILE_BUSY_BELOW = 0.5;

/** Real time a clock move waits for the callback attempts of its instants, at most (see `moveClock`). */
const WALK_WAIT_MS = 10_000;

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
  const state = await options.store.load();
  const sandbox = createSandbox({
    state,
    clock,
    ids,
    policy: { ...defaultDeliveryPolicy, retryDelays: options.retryDelays ?? defaultDeliveryPolicy.retryDelays },
    strictTaxId: options.strictTaxId,
    hubIds: options.hubIds,
    onChange: (account, change) => options.store.changed(account, change),
    indexes: options.store.indexes,
  });
  // A write the store could not keep is undone: the account as the files hold it, its lookups rebuilt.
  options.store.onUndo((key, last) => sandbox.account(key).replace(last ?? emptyAccountState()));
  let timer: NodeJS.Timeout | null = null;
  let timerAt: number | null = null;
  let closed = false;

  const deliverer = createDeliverer(() => sandbox.accounts(), {
    timeoutMs: options.callbackTimeoutMs ?? 10_000,
    transport: options.transport,
    concurrency: 32,
    // The next attempts start at once (the order rule asks that the previous one finished, not that it is on disk), and
    // the record joins the next group commit: waiting for the disk first halved the callbacks' pace.
    onAttempt: () => {
      schedule(deliverer.pump());
      return options.store.save();
    },
    log,
    now: () => clock.now(),
  });

  /** Persists the state as it is now, then lets due work run and sets the timer for the next. */
  async function commit(): Promise<void> {
    await options.store.save();
    if (closed) return;
    schedule(deliverer.pump());
  }

  /** Sets the timer for the next expiry, delayed CVU or retry (`nextDelivery`, real time, from the deliverer). */
  function schedule(nextDelivery: number | null): void {
    let next = nextDelivery;
    for (const account of sandbox.accounts()) {
      const due = account.nextDueAt();
      if (due !== null) {
        const at = due - (account.nowMs() - clock.now());
        if (next === null || at < next) next = at;
      }
    }
    if (next === timerAt && timer) return;
    if (timer) clearTimeout(timer);
    timer = null;
    timerAt = next;
    if (next === null || closed) return;
    timer = setTimeout(tick, Math.min(Math.max(next - clock.now(), 0), MAX_TIMER));
    timer.unref();
  }

  function tick(): void {
    timer = null;
    timerAt = null;
    let changed = false;
    for (const account of sandbox.accounts()) changed = account.runDue() || changed;
    if (!changed) return schedule(deliverer.pump());
    commit().catch(() => {
      // Not stored (a full disk; the store said why) and undone: the same work falls due again, tried a second later.
      if (closed || timer) return;
      timer = setTimeout(tick, STORE_RETRY_MS);
      timer.unref();
    });
  }

  /** Each account's clock move under way: moves of one account run one after the other. */
  const walks = new Map<string, Promise<unknown>>();

  /**
   * Moves an account's clock (contract part 4, time order) as if it lived through the time: it stands at each instant
   * something falls due, in order (expiries, delayed CVUs, retries), does that work there and waits for the
   * attempts it starts (and the next events of the same payments they let go) before the next instant. After
   * `WALK_WAIT_MS` of it, attempts under way finish in the background, and the remaining instants' expiries and CVUs are still done in order, but no more attempts are
   * made in the walk: what is left to send goes out after it, as the deliverer sends any due callback. So a jump of
   * years over thousands of callbacks, or over a receiver that hangs, still answers in seconds.
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
    const move = account.clockMove(kind, body);
    const deadline = performance.now() + WALK_WAIT_MS;
    const clock = await deliverer.walk(account, async () => {
      // What is due now goes first, and attempts already under way finish: their outcome sets the retries to come.
      account.standAt(account.nowMs());
      for (;;) {
        const attempting = performance.now() < deadline;
        if (attempting) await deliverer.deliverDue(account, deadline);
        const at = account.nextInstant(move.until(), attempting ? deliverer.inFlightOf(account) : null);
        if (at === null) break;
        account.standAt(at);
      }
      return move.finish();
    });
    await commit();
    return clock;
  }

  /**
   * After a quick start the indexes and record places are read when first used; this reads them ahead, a slice at a
   * time, so that a few seconds after the start no request waits for one. It gives way to requests: while they keep
   * the event loop busy it waits (reading ahead all of 300,000 payments' indexes is seconds of CPU, which took a third
   * of the creates right after a start), and a request needing a part not read yet reads just that part.
   */
  const warming = options.store.warming()[Symbol.iterator]();
  let sinceSlice = performance.eventLoopUtilization();
  function warm(): void {
    if (closed) return;
    if (performance.eventLoopUtilization(sinceSlice).utilization < WARM_WHILE_BUSY_BELOW) {
      const until = performance.now() + WARM_SLICE_MS;
      do if (warming.next().done) return;
      while (performance.now() < until);
    }
    sinceSlice = performance.eventLoopUtilization();
    setTimeout(warm, WARM_GAP_MS).unref();
  }

  // What fell due while the server was down (expiries, retries, unsent deliveries) happens now. The log says so when
  // expiries or delayed CVUs are among it: each is an event and a callback, and a large state that all fell due takes
  // a while to start (300,000 time-locked payments: about a minute).
  const started = performance.now();
  let behind = false;
  for (const account of sandbox.accounts()) behind ||= (account.nextDueAt() ?? Infinity) <= account.nowMs();
  if (behind) log('doing what fell due while the server was stopped (expiries, delayed client CVUs) before answering');
  tick();
  await options.store.save().catch(() => {}); // if it could not be stored, `tick` tries again
  if (behind) log(`done what fell due while the server was stopped in ${Math.round(performance.now() - started)} ms`);
  setTimeout(warm, WARM_GAP_MS).unref();

  return {
    sandbox,
    store: options.store,
    log,
    version: options.version ?? '0.0.0',
    commit,
    deliverer,
    moveClock,
    async close(): Promise<void> {
      closed = true;
      if (timer) clearTimeout(timer);
      await deliverer.close();
      await options.store.close();
    },
  };
}

export type Runtime = Awaited<ReturnType<typeof createRuntime>>;
