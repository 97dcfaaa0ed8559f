/**
 * The tables of records and how they are read: each record a row of readable JSON beside its account's id, its own id,
 * the CRC-32 of its JSON (`crc`, checked at every read) and the columns the core looks it up and lists it by
 * (`COLUMNS`), each with an index (the tables are made by the migrations, `schema.ts`). The port's queries on them
 * are `repository.ts`.
 */
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import { crc32 } from 'node:zlib';
import { keyedByCaller, normalizeAccount, SandboxError, TABLES, type AccountState, type Delivery, type TableName } from '../../core/index.js';
import { COLUMNS } from '../../core/records/index.js';
import { ID_FIELDS, type AccountHead, type Key } from '../../core/store/repository.js';

/** Prepares a statement (a store's cache of them, or a connection of its own). */
export type Sql = (text: string) => StatementSync;

/** A connection's statements, each prepared at its first use. */
export function statementCache(db: DatabaseSync): Sql {
  const statements = new Map<string, StatementSync>();
  return (text) => statements.get(text) ?? statements.set(text, db.prepare(text)).get(text)!;
}

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
 * `data` and `crc`, accounts `head` and `crc`, where `crc` = `zlib.crc32` of the text (`checksum`).
 */
export const RECORD_TABLES: readonly { table: string; id: string; text: 'data' | 'head' }[] = [
  { table: 'accounts', id: 'key', text: 'head' },
  ...Object.values(TABLE_NAMES).map((table) => ({ table, id: 'id', text: 'data' as const })),
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
  if (checksum(text) !== crc) throw new UnreadableRecord(file, table, id, 'its checksum does not match: it changed on disk');
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
  const sound = isObject(head) && Number.isFinite(head!.clockOffsetMs) && (head!.forwarding == null || typeof head!.forwarding.url === 'string') && (head!.faults === undefined || isObject(head!.faults));
  if (!sound) throw new UnreadableRecord(file, 'accounts', key, 'not an account head');
  return head as AccountHead;
}

/** A row's record: its id put back first where the row keeps it beside the JSON (`ID_FIELDS`). `file` names the database. */
export function recordOf<T>(file: string, table: TableName, id: string, row: { data: string; crc: number }): T {
  const field = ID_FIELDS[table];
  const record = objectOf(file, TABLE_NAMES[table], id, row);
  return (field === undefined ? record : { [field]: id, ...record }) as T;
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
  if (typeof record !== 'object' || record === null || Array.isArray(record)) throw new UnreadableRecord(file, table, id, 'not a JSON object');
  return record;
}

/** Columns the store keeps for itself beside a table's `COLUMNS`: how many of a delivery's attempts are stored. */
const STORE_COLUMNS: Partial<Record<TableName, Record<string, (record: never) => Key>>> = {
  deliveries: { attempts: (delivery: Delivery) => delivery.attempts.length },
};

/** Each table's write, made once: its columns (`COLUMNS`, then the store's own) and its statement's text. */
const WRITES = Object.fromEntries(
  TABLES.map((table) => {
    const columns = Object.entries({ ...COLUMNS[table], ...STORE_COLUMNS[table] }) as [string, (record: never) => Key][];
    const names = columns.map(([name]) => name);
    const text =
      `INSERT INTO ${TABLE_NAMES[table]} (account, id, data, crc${names.map((c) => `, ${c}`).join('')}) VALUES (?, ?, ?, ?${names.map(() => ', ?').join('')}) ` +
      `ON CONFLICT (account, id) DO UPDATE SET data = excluded.data, crc = excluded.crc${names.map((c) => `, ${c} = excluded.${c}`).join('')}`;
    return [table, { columns, text }];
  }),
) as Record<TableName, { columns: [string, (record: never) => Key][]; text: string }>;

/** Writes a record with its columns (`COLUMNS`), in place if it is there (it keeps its place in the order made). */
export function putRecord(sql: Sql, account: number, table: TableName, id: string, record: unknown): void {
  const { columns, text } = WRITES[table];
  const field = ID_FIELDS[table];
  const kept = table === 'deliveries' ? putAttempts(sql, account, id, record as Delivery) : record;
  const data = JSON.stringify(field === undefined ? kept : { ...(kept as object), [field]: undefined });
  sql(text).run(account, id, data, checksum(data), ...columns.map(([, compute]) => compute(record as never)));
}

/**
 * A state's records as they are written: by table, each in the order made (`createdAt`, ties as given), since the
 * order written (`seq`) is what lists go by.
 */
export function recordsInOrder(state: AccountState): (readonly [TableName, string, unknown])[] {
  const made = (record: unknown) => (record as { createdAt?: string }).createdAt ?? '';
  return TABLES.flatMap((table) =>
    Object.entries(state[table] as Record<string, unknown>)
      .sort(([, a], [, b]) => (made(a) < made(b) ? -1 : made(a) > made(b) ? 1 : 0))
      .map(([id, record]) => [table, id, record] as const),
  );
}

/** Writes every record of a state under a new account (a reset, an import, a migration). */
export function writeRecords(sql: Sql, account: number, state: AccountState): void {
  for (const row of recordsInOrder(state)) putRecord(sql, account, ...row);
}

/**
 * An account as the database holds it: its head and each table's records, in the order they were made, or undefined.
 * `sql` prepares a statement: the store's cache, or a connection of its own (a test reads the file as support staff
 * would). Given `unreadable`, a record that cannot be read is left out and named there (an export of what can be read).
 */
export function readAccount(sql: Sql, key: string, file = 'the database', unreadable?: string[]): AccountState | undefined {
  const row = sql('SELECT id, head, crc FROM accounts WHERE key = ?').get(key) as { id: number; head: string; crc: number } | undefined;
  return row && readRecords(sql, headOf(file, key, row), row.id, file, unreadable);
}

/** The records of an account under its head (see `readAccount`). */
function readRecords(sql: Sql, head: AccountHead, account: number, file = 'the database', unreadable?: string[]): AccountState {
  const state = { ...head } as AccountState;
  for (const table of TABLES) {
    const records: Record<string, unknown> = table === 'idempotency' ? keyedByCaller() : {};
    for (const row of sql(`SELECT id, data, crc FROM ${TABLE_NAMES[table]} WHERE account = ? ORDER BY seq`).iterate(account) as Iterable<{ id: string; data: string; crc: number }>) {
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

/*
 * A delivery's attempts, each a row of its own (`delivery_attempts`, keyed by account, delivery and its place): an
 * attempt appends its row, and the delivery's row keeps `attempts: []` in their place and how many are stored
 * (`deliveries.attempts`), so an attempt never rewrites the delivery's history. A read puts them back.
 */
/** Stores the attempts of a delivery that are not stored yet; the delivery as its row keeps it. */
function putAttempts(sql: Sql, account: number, id: string, delivery: Delivery): Delivery {
  const stored = (sql('SELECT attempts FROM deliveries WHERE account = ? AND id = ?').get(account, id) as { attempts: number } | undefined)?.attempts ?? 0;
  // Attempts are only ever added; fewer than stored is a record replaced whole (never today), kept exact all the same.
  if (delivery.attempts.length < stored) sql('DELETE FROM delivery_attempts WHERE account = ? AND delivery = ? AND n >= ?').run(account, id, delivery.attempts.length);
  for (let n = stored; n < delivery.attempts.length; n++) {
    const data = JSON.stringify(delivery.attempts[n]);
    sql('INSERT INTO delivery_attempts (account, delivery, n, data, crc) VALUES (?, ?, ?, ?, ?)').run(account, id, n, data, checksum(data));
  }
  return { ...delivery, attempts: [] };
}

/** A record as read, a delivery with its attempts put back (each checked against its `crc`). */
export function withAttempts<T>(sql: Sql, file: string, table: TableName, account: number, record: T): T {
  if (table !== 'deliveries') return record;
  const delivery = record as Delivery;
  const rows = sql('SELECT n, data, crc FROM delivery_attempts WHERE account = ? AND delivery = ? ORDER BY n').all(account, delivery.id) as { n: number; data: string; crc: number }[];
  return { ...delivery, attempts: rows.map((row) => objectOf(file, 'delivery_attempts', `${delivery.id} #${row.n + 1}`, row)) } as T;
}
