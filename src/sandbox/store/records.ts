/**
 * The tables of records and how they are read: each record a row of readable JSON beside its account's id, its own id,
 * the CRC-32 of its JSON (`crc`, checked at every read) and the columns the core looks it up and lists it by
 * (`COLUMNS`), each with an index (the tables are made by the migrations, `schema.ts`). The port's queries on them
 * are `repository.ts`; how records are written, `record-writes.ts`.
 */
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import { crc32 } from 'node:zlib';
import {
  type AccountState,
  type Delivery,
  keyedByCaller,
  normalizeAccount,
  SandboxError,
  TABLES,
  type TableName,
} from '../../core/index.js';
import { type AccountHead, ID_FIELDS } from '../../core/store/repository.js';

/** Prepares a statement (a store's cache of them, or a connection of its own). */
export type Sql = (text: string) => StatementSync;

/** A connection's statements, each prepared at its first use. */
export function statementCache(db: DatabaseSync): Sql {
  const statements = new Map<string, StatementSync>();
  return (text) => statements.get(text) ?? statements.set(text, db.prepare(text)).get(text)!;
}

/** The request journal's table (`store/journal.ts`): not a table of records, but an account's rows all the same. */
export const JOURNAL_TABLE = 'requests';

/** Each table of records, by the core's name for it. */
export const TABLE_NAMES: Record<TableName, string> = {
  hubs: 'hubs',
  pool: 'pool_cvus',
  vaPayments: 'va_payments',
  transfers: 'transfers',
  events: 'events',
  deliveries: 'deliveries',
  idempotency: 'idempotency_keys',
  clients: 'clients',
  entries: 'ledger_entries',
  invoices: 'invoices',
};

/**
 * The tables of records and the column each keeps its stored text in, for `va-sandbox check`: every record table has
 * `data` and `crc`, accounts `head` and `crc`, where `crc` = `zlib.crc32` of the text (`checksum`); deliveries also
 * `state` and `state_crc` (`state: true`), both NULL while a delivery has no state apart (see `putAttempt`).
 */
export const RECORD_TABLES: readonly { table: string; id: string; text: 'data' | 'head'; state?: boolean }[] = [
  { table: 'accounts', id: 'key', text: 'head' },
  ...Object.values(TABLE_NAMES).map((table) => ({
    table,
    id: 'id',
    text: 'data' as const,
    state: table === 'deliveries',
  })),
  { table: 'delivery_attempts', id: 'delivery', text: 'data' },
];

/** The checksum a row keeps of its stored text (`crc`): the CRC-32 of its UTF-8 bytes. */
export const checksum = (text: string): number => crc32(text);

/**
 * A row whose JSON does not parse (a damaged page whose structure stayed sound): 500 `INTERNAL_ERROR` naming the file,
 * the table and the record, and what to do; never served as anything else.
 */
export class UnreadableRecord extends SandboxError {
  /** Which record, and why (`deliveries record <id> cannot be read (…)`): a start refused by it says this. */
  readonly what: string;
  constructor(file: string, table: string, id: string, why: string) {
    const what = `${table} record ${id} cannot be read (${why})`;
    super(
      'INTERNAL_ERROR',
      `${file}: ${what}: the database is damaged; restore it from a backup, or export what can be read (\`va-sandbox export\` names what it leaves out); \`va-sandbox check\` names every damaged record`,
    );
    this.what = what;
  }
}

/** A row's stored text, refused unless it is what was written (its `crc`). */
function checked(file: string, table: string, id: string, text: string, crc: number): string {
  if (checksum(text) !== crc)
    throw new UnreadableRecord(file, table, id, 'its checksum does not match: it changed on disk');
  return text;
}

/** An account's head (`accounts.head`), held to its shape: a damaged one would set its clock to NaN, or worse. */
export function headOf(file: string, key: string, stored: { head: string; crc: number }): AccountHead {
  const text = checked(file, 'accounts', key, stored.head, stored.crc);
  let head: Partial<AccountHead> | null;
  try {
    head = JSON.parse(text);
  } catch (error) {
    throw new UnreadableRecord(file, 'accounts', key, (error as Error).message);
  }
  const isObject = (value: unknown) => typeof value === 'object' && value !== null && !Array.isArray(value);
  const sound =
    isObject(head) &&
    Number.isFinite(head!.clockOffsetMs) &&
    (head!.forwarding == null || typeof head!.forwarding.url === 'string') &&
    (head!.faults === undefined || isObject(head!.faults));
  if (!sound) throw new UnreadableRecord(file, 'accounts', key, 'not an account head');
  return head as AccountHead;
}

/** A record's row as read (`rowColumns`): its JSON and checksum, and a delivery's state over them (`putAttempt`). */
export interface StoredRow {
  data: string;
  crc: number;
  state?: string | null;
  state_crc?: number | null;
}

/** The columns a table's record is read from (`StoredRow`). */
export const rowColumns = (table: TableName): string =>
  table === 'deliveries' ? 'data, crc, state, state_crc' : 'data, crc';

/**
 * A row's record: its id put back first where the row keeps it beside the JSON (`ID_FIELDS`), and a delivery's state
 * over it, each refused unless it is what was written (`crc`, `state_crc`). `file` names the database.
 */
export function recordOf<T>(file: string, table: TableName, id: string, row: StoredRow): T {
  const field = ID_FIELDS[table];
  const record = objectOf(file, TABLE_NAMES[table], id, row);
  // A state lost to damage (its text NULL, its checksum not) is found too: the CRC-32 of nothing is 0.
  const state =
    row.state == null && row.state_crc == null
      ? {}
      : objectOf(file, TABLE_NAMES[table], `${id} (state)`, { data: row.state ?? '', crc: row.state_crc ?? 0 });
  return (field === undefined ? { ...record, ...state } : { [field]: id, ...record, ...state }) as T;
}

/** A row's JSON object, refused (`UnreadableRecord`) unless it is what was written (`crc`) and an object. */
function objectOf(file: string, table: string, id: string, row: { data: string; crc: number }): object {
  const text = checked(file, table, id, row.data, row.crc);
  let record: unknown;
  try {
    record = JSON.parse(text);
  } catch (error) {
    throw new UnreadableRecord(file, table, id, (error as Error).message);
  }
  if (typeof record !== 'object' || record === null || Array.isArray(record))
    throw new UnreadableRecord(file, table, id, 'not a JSON object');
  return record;
}

/**
 * An account as the database holds it: its head and each table's records, in the order they were made, or undefined.
 * `sql` prepares a statement: the store's cache, or a connection of its own (a test reads the file as support staff
 * would). Given `unreadable`, a record that cannot be read is left out and named there (an export of what can be read).
 */
export function readAccount(
  sql: Sql,
  key: string,
  file = 'the database',
  unreadable?: string[],
): AccountState | undefined {
  const row = sql('SELECT id, head, crc FROM accounts WHERE key = ?').get(key) as
    | { id: number; head: string; crc: number }
    | undefined;
  return row && readRecords(sql, headOf(file, key, row), row.id, file, unreadable);
}

/** The records of an account under its head (see `readAccount`). */
function readRecords(
  sql: Sql,
  head: AccountHead,
  account: number,
  file = 'the database',
  unreadable?: string[],
): AccountState {
  const state = { ...head } as AccountState;
  for (const table of TABLES) {
    const records: Record<string, unknown> = table === 'idempotency' ? keyedByCaller() : {};
    for (const row of sql(
      `SELECT id, ${rowColumns(table)} FROM ${TABLE_NAMES[table]} WHERE account = ? ORDER BY seq`,
    ).iterate(account) as Iterable<StoredRow & { id: string }>) {
      const id = row.id;
      try {
        records[id] = withAttempts(sql, file, table, account, recordOf(file, table, id, row));
      } catch (error) {
        if (!(error instanceof UnreadableRecord) || !unreadable) throw error;
        unreadable.push(`${TABLE_NAMES[table]} ${id}`);
      }
    }
    (state as unknown as Record<string, unknown>)[table] = records;
  }
  return normalizeAccount(state);
}

/** A record as read, a delivery with its attempts put back (each checked against its `crc`). */
export function withAttempts<T>(sql: Sql, file: string, table: TableName, account: number, record: T): T {
  if (table !== 'deliveries') return record;
  const delivery = record as Delivery;
  const rows = sql('SELECT n, data, crc FROM delivery_attempts WHERE account = ? AND delivery = ? ORDER BY n').all(
    account,
    delivery.id,
  ) as { n: number; data: string; crc: number }[];
  return {
    ...delivery,
    attempts: rows.map((row) => objectOf(file, 'delivery_attempts', `${delivery.id} #${row.n + 1}`, row)),
  } as T;
}
