import type { AccountState, Delivery, Key, Row, TableName } from '../records/index.js';

export type { Key, Row } from '../records/index.js';

/** Both ends included; an end left out is open. */
export interface Range {
  from?: Key;
  to?: Key;
}

/** Records whose columns hold these values (one value, any of several, or a range). */
export type Where = Record<string, Key | readonly Key[] | Range>;

export interface Query {
  where?: Where;
  /** Ordered by this column first (then by when made); default: by when made (by a range's column, if one is asked). */
  by?: string;
  /** Newest first (`by`'s largest first). */
  descending?: boolean;
  /** How many of the records found to pass over first (a page's offset). */
  skip?: number;
  /** At most this many. */
  limit?: number;
}

/**
 * How the core reads and writes an account's records (a store implements it: the server's is SQLite). Records are
 * replaced whole; lookups and lists go by the columns `COLUMNS` (records/columns.ts) declares, each of which the store indexes, so a
 * lookup costs its record and a page its page however many records the account holds.
 */
export interface Repository {
  get<T extends TableName>(table: T, id: string): Row<T> | undefined;
  put<T extends TableName>(table: T, id: string, record: Row<T>): void;
  drop(table: TableName, id: string): void;
  /** The first record a query finds, or undefined. */
  find<T extends TableName>(table: T, query: Query): Row<T> | undefined;
  /** Whether any record matches any of these lookups (by `COLUMNS` or `id`), asked at once; reads none. */
  has(lookups: readonly (readonly [TableName, Where])[]): boolean;
  /** The first record a query finds with its id (a record such as an idempotency key's does not hold it), or undefined. */
  findEntry<T extends TableName>(table: T, query: Query): [string, Row<T>] | undefined;
  /** Every record a query finds, read a batch at a time as they are asked for. */
  each<T extends TableName>(table: T, query?: Query): Generator<Row<T>>;
  /** How many records match. */
  count(table: TableName, where?: Where): number;
  /** The smallest (or largest) value of a column among the records matching, or null. */
  min(table: TableName, column: string, where?: Where): Key;
  max(table: TableName, column: string, where?: Where): Key;
  /**
   * The highest value a column (or `id`) holds in a range, for numbering: asked once, then kept with the account's
   * writes, so asking again reads nothing. A value dropped or moved out of the range may still count until the account
   * is read again (a restart, a rolled-back write, a replace): a number past it is still a new one.
   */
  highest(table: TableName, column: string, range: Range): Key;
  /**
   * Stores a delivery's next attempts (`next`: `before` with attempts added and its status, next attempt and update
   * time moved on) without writing the rest of it again; `before` is the delivery as it was read. False, and nothing
   * written, when the stored delivery is no longer `before` (replaced, dropped, or attempted since).
   */
  appendAttempt(before: Delivery, next: Delivery): boolean;
}

/** An account's fields other than its records: its clock offset, forwarding and faults (see `AccountState`). */
export type AccountHead = Omit<AccountState, TableName>;

/** Where accounts are kept (the server's SQLite store): each one's head and records, read when first used. */
export interface Storage {
  /** An account's head, or undefined when nothing of it is kept. */
  head(key: string): AccountHead | undefined;
  writeHead(key: string, head: AccountHead): void;
  records(key: string): Repository;
  /**
   * An account whole (an export, a recording), or undefined. A record that cannot be read (a damaged database) fails
   * the read, or, given `unreadable`, is left out and named there.
   */
  read(key: string, unreadable?: string[]): AccountState | undefined;
  /**
   * An account's records of one table (`where`: only those, by `COLUMNS` or `id`) in the order `read` lists them (ids
   * that are array indices first, by value, as a JS object keeps them; then the rest in the order made), read a batch
   * at a time as they are asked for: an export streams them. A record that cannot be read fails the read, or, given
   * `unreadable`, is left out and named there. It fails if the account is replaced whole (a reset, an import) meanwhile.
   */
  rows<T extends TableName>(key: string, table: T, where?: Where, unreadable?: string[]): Generator<[string, Row<T>]>;
  /**
   * Replaces an account whole (a reset, an import): resolves once the new state is stored, written a slice at a time
   * so other accounts' requests go on meanwhile; the account's requests see the old state until then.
   */
  replace(key: string, state: AccountState): Promise<void>;
}

/** The field of a record that is its id, which a store may keep beside the record rather than in it. */
export const ID_FIELDS: Partial<Record<TableName, string>> = {
  pool: 'cvu',
  vaPayments: 'id',
  transfers: 'id',
  events: 'id',
  deliveries: 'id',
  clients: 'id',
  entries: 'id',
  invoices: 'id',
};

/** The columns whose lists a store keeps counts of (besides each table's), so a page's total costs no scan. */
export const COUNTED: Partial<Record<TableName, readonly string[]>> = {
  // A client's, a tax id's or a reference's payments are few enough to count when listed: counting them at every write cost more.
  vaPayments: ['status'],
  events: ['dropped'],
  deliveries: ['status', 'event_type'],
};
