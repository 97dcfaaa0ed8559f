import { defaultDeliveryPolicy } from '../callbacks/index.js';
import type { IdSource, WallClock } from '../conventions/index.js';
import { accountHead } from '../records/index.js';
import type { DeliveryPolicy, Storage } from '../store/index.js';
import { Account, emptyAccountState, type LiveEvent } from './account.js';

export interface SandboxOptions {
  /** Where accounts are kept (the server's SQLite store): an account is read from it when first used. */
  storage: Storage;
  clock: WallClock;
  ids: IdSource;
  policy?: DeliveryPolicy;
  /** `--strict-tax-id`: client taxIds must pass the CUIT check digit. */
  strictTaxId?: boolean;
  /** `--hubs`: the payment hub ids accepted; any positive id when absent. */
  hubIds?: readonly number[];
  /** Retention (`start --keep D`): what ended this long ago (ms of sandbox clock) is removed when an account is read. */
  keepMs?: number;
  /** How many accounts are kept in memory, and how long one unused is kept (`ACCOUNT_CACHE` when absent). */
  cache?: AccountCache;
  /** Whether an account has work under way beyond a request (callbacks to send, a clock move): it stays in memory. */
  busy?: (key: string) => boolean;
}

/**
 * The accounts kept in memory: each is its head (clock offset, forwarding, faults) and the objects around it, a few KiB;
 * the records are in the store. Past `accounts`, the least recently used that nothing holds is dropped, and so is one
 * unused for `idleMs` (ms of the wall clock) when `forgetIdle` runs; the next request reads it from the store again.
 * Without a bound, every key ever seen stayed: 100,000 keys that each read once grew the server from 111 to 840 MiB.
 */
export interface AccountCache {
  accounts: number;
  idleMs: number;
}

export const ACCOUNT_CACHE: AccountCache = { accounts: 1000, idleMs: 60_000 };

interface Cached {
  account: Account;
  usedAt: number;
  /** Requests under way with it (`hold`). */
  holds: number;
  /** Whether the store held the account (a key that only reads has none: nothing to keep once its request is over). */
  stored: boolean;
}

/** The one core factory: the server, the CLI's embedded mode and the msw handlers all use it. */
export function createSandbox(options: SandboxOptions) {
  const live = liveListeners();
  const deps = {
    clock: options.clock,
    ids: options.ids,
    policy: options.policy ?? defaultDeliveryPolicy,
    strictTaxId: options.strictTaxId ?? false,
    ...(options.hubIds ? { hubIds: options.hubIds } : {}),
    storage: options.storage,
    notify: live.notify,
    hears: live.hears,
  };
  const cache = options.cache ?? ACCOUNT_CACHE;
  /** The accounts in memory, least recently used first. */
  const cached = new Map<string, Cached>();

  /** The account's entry, now the most recently used; read from the store when not in memory. */
  function use(key: string): Cached {
    const now = options.clock.now();
    const found = cached.get(key);
    if (found) {
      cached.delete(key);
      found.usedAt = now;
      cached.set(key, found);
      return found;
    }
    const head = options.storage.head(key);
    const account = new Account(key, head ?? accountHead(emptyAccountState()), deps);
    if (options.keepMs !== undefined) account.prune(options.keepMs);
    const entry = { account, usedAt: now, holds: 0, stored: head !== undefined };
    cached.set(key, entry);
    forget(now, key);
    return entry;
  }

  /** Drops, from the least recently used, the accounts past the bound or idle, but none held or busy, nor `keep`. */
  function forget(now: number, keep?: string): void {
    let looked = cached.size; // each entry once at most: a held one goes to the end
    for (const [key, entry] of cached) {
      if (looked-- === 0) return;
      if (cached.size <= cache.accounts && now - entry.usedAt < cache.idleMs) return;
      cached.delete(key);
      if (entry.holds > 0 || key === keep || options.busy?.(key)) cached.set(key, entry);
    }
  }

  return {
    clock: options.clock,
    /**
     * The account of an API key, read from the store when not in memory. A key the store holds nothing of gets an empty
     * account, which the store keeps only once something is written to it: a key that only reads makes no account.
     */
    account: (key: string): Account => use(key).account,
    /** The account of a key, kept in memory until `release` is called (a request under way may outlive any bound). */
    hold(key: string): { account: Account; release: () => void } {
      const entry = use(key);
      entry.holds++;
      const release = () => {
        // The account of a key that only read goes at once: it dies young, never piling up in the old heap.
        if (--entry.holds > 0 || entry.stored || cached.get(key) !== entry || options.busy?.(key)) return;
        if (options.storage.head(key) === undefined) cached.delete(key);
        else entry.stored = true;
      };
      return { account: entry.account, release };
    },
    /** Drops the accounts unused for `idleMs` (the server calls it now and then). */
    forgetIdle: (): void => forget(options.clock.now()),
    /** The accounts in memory. */
    accounts: (): Account[] => [...cached.values()].map((entry) => entry.account),
    on: live.on,
  };
}

/** Who listens to what happens in the accounts, each to the types it asked for (null: all). */
function liveListeners() {
  const listeners = new Map<(event: LiveEvent) => void, ReadonlySet<LiveEvent['type']> | null>();
  return {
    notify(event: LiveEvent): void {
      for (const [listener, types] of listeners) if (!types || types.has(event.type)) listener(event);
    },
    hears(type: LiveEvent['type']): boolean {
      for (const types of listeners.values()) if (!types || types.has(type)) return true;
      return false;
    },
    /** Subscribes to what happens in every account (of these types only, if given); returns the unsubscribe function. */
    on(listener: (event: LiveEvent) => void, types?: LiveEvent['type'][]): () => void {
      listeners.set(listener, types ? new Set(types) : null);
      return () => listeners.delete(listener);
    },
  };
}

export type Sandbox = ReturnType<typeof createSandbox>;
