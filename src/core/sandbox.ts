import { Account, emptyAccountState, type LiveEvent } from './account.js';
import type { WallClock } from './clock.js';
import { defaultDeliveryPolicy, type DeliveryPolicy } from './deliveries.js';
import type { IdSource } from './ids.js';
import { keyedByCaller, normalizeState, type SandboxState, type StateChange } from './state.js';
import { memoryIndexes, type IndexesOf } from './store.js';

export interface SandboxOptions {
  /** The state to work on (as loaded from the store); mutated in place. */
  state?: SandboxState;
  clock: WallClock;
  ids: IdSource;
  policy?: DeliveryPolicy;
  /** `--strict-tax-id`: client taxIds must pass the CUIT check digit. */
  strictTaxId?: boolean;
  /** `--hubs`: the payment hub ids accepted; any positive id when absent. */
  hubIds?: readonly number[];
  /** Told of every change to the state, so a store can persist just those. */
  onChange?: (account: string, change: StateChange) => void;
  /** Where each account's indexes live (the store's, when it keeps them); plain Maps by default. */
  indexes?: IndexesOf;
}

export const emptyState = (): SandboxState => ({ version: 1, accounts: keyedByCaller() });

/** The one core factory: the server, the CLI's embedded mode and the msw handlers all use it. */
export function createSandbox(options: SandboxOptions) {
  const state = normalizeState(options.state ?? emptyState());
  /** Each listener and the types it listens for (null: all). */
  const listeners = new Map<(event: LiveEvent) => void, ReadonlySet<LiveEvent['type']> | null>();
  const deps = {
    clock: options.clock,
    ids: options.ids,
    policy: options.policy ?? defaultDeliveryPolicy,
    strictTaxId: options.strictTaxId ?? false,
    ...(options.hubIds ? { hubIds: options.hubIds } : {}),
    changed: options.onChange ?? (() => {}),
    indexes: options.indexes ?? memoryIndexes,
    notify: (event: LiveEvent) => {
      for (const [listener, types] of listeners) if (!types || types.has(event.type)) listener(event);
    },
    hears: (type: LiveEvent['type']) => {
      for (const types of listeners.values()) if (!types || types.has(type)) return true;
      return false;
    },
  };
  const accounts = new Map<string, Account>();
  for (const [key, accountState] of Object.entries(state.accounts)) accounts.set(key, new Account(key, accountState, deps));

  return {
    state,
    clock: options.clock,
    /** The account of an API key, opened on first use. */
    account(key: string): Account {
      let account = accounts.get(key);
      if (!account) {
        state.accounts[key] = emptyAccountState();
        deps.changed(key, { all: true });
        account = new Account(key, state.accounts[key], deps);
        accounts.set(key, account);
      }
      return account;
    },
    accounts: (): Account[] => [...accounts.values()],
    /** Subscribes to what happens in every account (of these types only, if given); returns the unsubscribe function. */
    on(listener: (event: LiveEvent) => void, types?: LiveEvent['type'][]): () => void {
      listeners.set(listener, types ? new Set(types) : null);
      return () => listeners.delete(listener);
    },
  };
}

export type Sandbox = ReturnType<typeof createSandbox>;
