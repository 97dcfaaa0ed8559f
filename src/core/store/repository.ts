import { ms } from '../clock/clock.js';
import { taxIdKey } from '../clients/clients.js';
import { invoiceSequence, type AccountState, type Delivery, type SandboxEvent, type TableName } from '../records/state.js';
import { isActive } from '../va-payments/va-payment.js';

/** A record of a table, as the core reads and writes it. */
export type Row<T extends TableName> = AccountState[T][string];

/** A value a record is looked up or listed by (`COLUMNS`); null: the record is not in that lookup. */
export type Key = string | number | null;

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
 * replaced whole; lookups and lists go by the columns `COLUMNS` declares, each of which the store indexes, so a
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
   * Replaces an account whole (a reset, an import): resolves once the new state is stored, written a slice at a time
   * so other accounts' requests go on meanwhile; the account's requests see the old state until then.
   */
  replace(key: string, state: AccountState): Promise<void>;
}

/** How long an Idempotency-Key's answer is kept, by the account's clock. */
export const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;

type Columns<T extends TableName> = Record<string, (record: Row<T>) => Key>;

/**
 * The columns a store keeps beside each record, computed from it, and indexes (by account, then the column): what
 * lookups, lists, due work and retention ask for. A new one is also a new migration of the store (ADD COLUMN, its
 * backfill, CREATE INDEX: docs/storage.md). Lists go by when a record was made, which is the order written: an
 * account's records are written as they are made and its clock only moves forward (an import's are written sorted by
 * `createdAt`), so no table keeps `created_at` to order by; a payment and a ledger entry keep it for their lists' ranges.
 */
export const COLUMNS: { [T in TableName]: Columns<T> } = {
  hubs: {
    /** The hub's collection CVU and alias (upper case): every CVU and alias of an account is unique (`Hubs.isTaken`). */
    cvu: (hub) => hub.collectionCvu,
    alias: (hub) => hub.collectionAlias.toUpperCase(),
  },
  pool: {
    alias: (cvu) => cvu.alias.toUpperCase(),
    /** Free pool CVUs are lent released longest ago first, those released at once by CVU. */
    free: (cvu) => (cvu.vaPaymentId === null ? `${cvu.releasedAt ?? ''}|${cvu.cvu}` : null),
  },
  vaPayments: {
    created_at: (p) => ms(p.createdAt),
    status: (p) => p.status,
    client_id: (p) => p.clientId,
    client_tax_id: (p) => p.clientTaxId,
    external_reference: (p) => p.externalReference,
    /** The amount an active amount-locked payment waits for on its hub (AMOUNT_LOCK_CONFLICT); a pool CVU names its payment. */
    amount_lock: (p) => (isActive(p) && p.lockMode === 'amount' ? amountLock(p.paymentHubId, p.amount!) : null),
    due_at: (p) => (isActive(p) ? ms(p.expiresAt) : null),
  },
  transfers: {
    target: (t) => t.target?.id ?? null,
    returned_at: (t) => (t.target === null ? ms(t.createdAt) : null),
  },
  events: {
    source: (e) => e.vaPaymentId ?? e.clientId,
    /** A dropped event's type: its first delivery is the event itself, never stored (`DeliveryLog`). */
    dropped: (e) => (isDropped(e) ? e.eventType : null),
  },
  deliveries: {
    event_id: (d) => d.eventId,
    status: (d) => d.status,
    event_type: (d) => d.eventType,
    /** Since when a delivery waits for its first attempt (made, or released): the order rule's queue goes by it. */
    pending_at: (d) => (d.status === 'pending' ? ms(d.updatedAt) : null),
    retry_at: (d) => (d.status === 'retrying' && d.nextAttemptAt !== null ? ms(d.nextAttemptAt) : null),
  },
  idempotency: {
    due_at: (r) => ms(r.createdAt) + IDEMPOTENCY_TTL_MS,
  },
  clients: {
    tax_id: (c) => taxIdKey(c.taxId),
    external_reference: (c) => c.externalReference,
    cvu: (c) => c.cvu,
    alias: (c) => c.alias?.toUpperCase() ?? null,
    cvu_ready_at: (c) => (c.cvuReadyAt === null ? null : ms(c.cvuReadyAt)),
  },
  entries: {
    created_at: (e) => ms(e.createdAt),
    client_id: (e) => e.clientId,
    entry_type: (e) => `${e.clientId}:${e.entryType}`,
    /** The entry that brought a client's operation in, and its reversal. */
    operation: (e) => (e.operationId === null || e.entryType === 'reversal' ? null : `${e.clientId}:${e.operationId}`),
    reversal: (e) => (e.operationId !== null && e.entryType === 'reversal' ? `${e.clientId}:${e.operationId}` : null),
  },
  invoices: {
    client_id: (i) => i.clientId,
    number: (i) => `${i.invoiceType}:${i.invoiceNumber}`,
    /** The sequence of a number of the sandbox's point of sale (`invoiceSequence`), by type. */
    sequence: (i) => (invoiceSequence(i.invoiceNumber) === null ? null : `${i.invoiceType}:${i.invoiceNumber}`),
  },
};

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

/** Whether an event's first delivery is the event itself (dropped, and not stored by an earlier release). */
export const isDropped = (event: SandboxEvent): boolean => event.url === null && !event.deliveryStored;

/** The value of an amount lock: amounts are locked per hub. */
export const amountLock = (hubId: number, amount: number): string => `amount:${hubId}:${amount}`;
