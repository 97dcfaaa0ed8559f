import type { AccountState, TableName } from './state.js';

/**
 * What the core sees of storage. An account's records live in its state's tables: read as `state[table][id]`,
 * iterated in the order they were made, written whole through the account's `put`, which tells the store of the
 * change (`StateChange`). A store may fill a table lazily behind that shape. An account's lookups live in its
 * `Indexes`, which a store may keep between runs so a large account need not be read whole before it answers.
 */

/**
 * An index by key: a plain Map in memory; a store's may read its entries from storage as keys are asked, and keep
 * only what changed since it last wrote them: a value changed in place (a list) is set again.
 */
export interface Index<K extends string | number, V> {
  get(key: K): V | undefined;
  has(key: K): boolean;
  set(key: K, value: V): unknown;
  delete(key: K): boolean;
  entries(): IterableIterator<[K, V]>;
  /** Appends to the list kept under `key` (made if none); a store's may do so without reading the list first. */
  append?(key: K, item: unknown): void;
  /**
   * False when `key` is surely not there; true when it is or may be (a store's may tell without reading what it keeps,
   * wrong about one key in thousands): for picking a key no one holds, where a wrong true costs one more pick.
   */
  mayHave?(key: K): boolean;
}

/** `index.mayHave`, or `has` for an index that cannot tell without looking. */
export const mayHave = <K extends string | number>(index: Index<K, unknown>, key: K): boolean => (index.mayHave ? index.mayHave(key) : index.has(key));

/**
 * A record that changed after an account's kept indexes were taken (the store replayed it from its journal): as
 * they knew it (`before`, undefined when it is new) and as it is now (`after`, undefined when it is gone).
 */
export type RecordChange = {
  [T in TableName]: { table: T; id: string; before: AccountState[T][string] | undefined; after: AccountState[T][string] | undefined };
}[TableName];

/** An account's indexes, each by its name. */
export interface Indexes {
  /** Whether they were kept from an earlier run: else they start empty and the account builds them from its records. */
  readonly kept: boolean;
  /** When kept: the records changed after they were taken, in the order they changed; the account re-indexes each. */
  readonly since: readonly RecordChange[];
  index<K extends string | number, V>(name: string): Index<K, V>;
  /**
   * A value kept beside the indexes (a queue): made by `revive` from what was kept (undefined if nothing was), kept as
   * `save(value)`, which later changes to the value must not reach (a copy: a store writes it while they go on).
   */
  value<T>(name: string, revive: (kept: unknown) => T, save: (value: T) => unknown): T;
}

/** Where an account's indexes come from; `fresh` for an account to index from its records (new, reset, imported). */
export type IndexesOf = (account: string, fresh: boolean) => Indexes;

/** Indexes in plain Maps, kept nowhere. */
export const memoryIndexes: IndexesOf = () => ({
  kept: false,
  since: [],
  index: () => new Map(),
  value: (_, revive) => revive(undefined),
});
