import { Account, emptyAccountState, type LiveEvent } from './account.js';
import type { WallClock } from './clock.js';
import { defaultDeliveryPolicy, type DeliveryPolicy } from './deliveries.js';
import type { IdSource } from './ids.js';
import type { Storage } from './repository.js';
import { accountHead } from './state.js';

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
}

/** The one core factory: the server, the CLI's embedded mode and the msw handlers all use it. */
export function createSandbox(options: SandboxOptions) {
  /** Each listener and the types it listens for (null: all). */
  const listeners = new Map<(event: LiveEvent) => void, ReadonlySet<LiveEvent['type']> | null>();
  const deps = {
    clock: options.clock,
    ids: options.ids,
    policy: options.policy ?? defaultDeliveryPolicy,
    strictTaxId: options.strictTaxId ?? false,
    ...(options.hubIds ? { hubIds: options.hubIds } : {}),
    storage: options.storage,
    notify: (event: LiveEvent) => {
      for (const [listener, types] of listeners) if (!types || types.has(event.type)) listener(event);
    },
    hears: (type: LiveEvent['type']) => {
      for (const types of listeners.values()) if (!types || types.has(type)) return true;
      return false;
    },
  };
  const accounts = new Map<string, Account>();

  return {
    clock: options.clock,
    /**
     * The account of an API key, read from the store when first used. A key the store holds nothing of gets an empty
     * account, which the store keeps only once something is written to it: a key that only reads makes no account.
     */
    account(key: string): Account {
      let account = accounts.get(key);
      if (!account) {
        account = new Account(key, options.storage.head(key) ?? accountHead(emptyAccountState()), deps);
        accounts.set(key, account);
        if (options.keepMs !== undefined) account.prune(options.keepMs);
      }
      return account;
    },
    /** The accounts used since the start. */
    accounts: (): Account[] => [...accounts.values()],
    /** Subscribes to what happens in every account (of these types only, if given); returns the unsubscribe function. */
    on(listener: (event: LiveEvent) => void, types?: LiveEvent['type'][]): () => void {
      listeners.set(listener, types ? new Set(types) : null);
      return () => listeners.delete(listener);
    },
  };
}

export type Sandbox = ReturnType<typeof createSandbox>;
