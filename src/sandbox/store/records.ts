/**
 * The tables of records and how they are read: each record a row of readable JSON beside its account's id, its own id,
 * the CRC-32 of its JSON (`crc`, checked at every read) and the columns the core looks it up and lists it by
 * (`COLUMNS`), each with an index (the tables are made by the migrations, `schema.ts`); and the queries of the core's
 * repository port.
 */
import type { StatementSync } from 'node:sqlite';
import { putAttempts, withAttempts } from './attempts.js';
import { crc32 } from 'node:zlib';
import { keyedByCaller, normalizeAccount, SandboxError, TABLES, type AccountState, type Delivery, type TableName } from '../../core/index.js';
import { COLUMNS, COUNTED, ID_FIELDS, type AccountHead, type Key, type Query, type Range, type Repository, type Row, type Where } from '../../core/repository.js';

/** Prepares a statement (a store's cache of them, or a connection of its own). */
export type Sql = (text: string) => StatementSync;

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
 * What a query's records are ordered by: its `by`, or the column of a range it asks (its index's order), then as
 * written (`seq`), which is the order made: each column's index `(account, column)` ends with the rowid, so it serves
 * the order without a sort.
 */
const orderOf = (query: Query): string[] => {
  const range = Object.entries(query.where ?? {}).find(([, value]) => value !== null && typeof value === 'object' && !Array.isArray(value));
  const first = query.by ?? range?.[0];
  return first === undefined ? ['seq'] : [first, 'seq'];
};

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
function recordOf<T>(file: string, table: TableName, id: string, row: { data: string; crc: number }): T {
  const field = ID_FIELDS[table];
  const record = objectOf(file, TABLE_NAMES[table], id, row);
  return (field === undefined ? record : { [field]: id, ...record }) as T;
}

/** A row's JSON object, refused (`UnreadableRecord`) unless it is what was written (`crc`) and an object. */
export function objectOf(file: string, table: string, id: string, row: { data: string; crc: number }): object {
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

/** How many rows a lookup reads at a time. */
const BATCH = 256;

/**
 * An account's records through the core's port (`Repository`), each query served by its column's index. `account` is
 * the account's id, or null while it has none (a key that only read); `write` runs a write in the group's transaction
 * with the account's id (made at its first write).
 */
export function repository(sql: Sql, file: string, account: () => number | null, write: (run: (account: number) => void) => void, empty: Set<string>): Repository {
  const check = (table: TableName, column: string) => {
    if (column !== 'id' && !(column in COLUMNS[table])) throw new Error(`${TABLE_NAMES[table]} has no column ${column}`);
    return column;
  };
  /** A query's conditions as SQL and their values. */
  const conditions = (table: TableName, where: Where = {}): [string, Key[]] => {
    const parts = ['account = ?'];
    const values: Key[] = [account() ?? 0];
    for (const [column, value] of Object.entries(where)) {
      check(table, column);
      if (value === null) parts.push(`${column} IS NULL`);
      else if (Array.isArray(value)) {
        parts.push(`${column} IN (${value.map(() => '?').join(', ')})`);
        values.push(...(value as Key[]));
      } else if (typeof value === 'object') {
        const range = value as Range;
        parts.push(`${column} IS NOT NULL`);
        if (range.from != null) parts.push(`${column} >= ?`) && values.push(range.from);
        if (range.to != null) parts.push(`${column} <= ?`) && values.push(range.to);
      } else {
        parts.push(`${column} = ?`);
        values.push(value as Key);
      }
    }
    return [parts.join(' AND '), values];
  };

  /**
   * A query's records. A column asked for any of several values (`status=expired,cancelled`) is read a value at a time,
   * each in order in its index, and merged: one query over all of them would sort every record they hold.
   */
  function* scan<T extends TableName>(table: T, query: Query): Generator<[string, Row<T>]> {
    // A column's whole order known empty (no free pool CVU, no delivery pending) is not asked again until a write fills it.
    const whole = query.by !== undefined && query.where === undefined && !query.skip ? `${table}.${query.by}` : null;
    if (whole !== null && empty.has(whole)) return;
    const split = query.by === undefined ? Object.entries(query.where ?? {}).find(([, value]) => Array.isArray(value) && new Set(value).size > 1) : undefined;
    let rows: Iterator<Record<string, Key>>;
    let skip = 0;
    if (split) {
      const [column, values] = split as [string, Key[]];
      const parts = [...new Set(values)].map((value) => ordered(table, { ...query, where: { ...query.where, [column]: value }, skip: 0, limit: undefined }));
      rows = merged(parts, orderOf(query), query.descending ? -1 : 1);
      skip = query.skip ?? 0;
    } else rows = ordered(table, query);
    let left = query.limit ?? Infinity;
    let row = rows.next();
    if (row.done && whole !== null) empty.add(whole);
    for (; !row.done && left > 0; row = rows.next()) {
      if (skip > 0) skip--;
      else {
        left--;
        const id = row.value.id as string;
        yield [id, withAttempts(sql, file, table, account() ?? 0, recordOf<Row<T>>(file, table, id, row.value as { data: string; crc: number }))];
      }
    }
  }

  /** A query's rows in its order, read in batches, each after the last one read (by its order), never by offset. */
  function* ordered(table: TableName, query: Query): Generator<Record<string, Key>> {
    if (query.by !== undefined) check(table, query.by);
    const order = orderOf(query);
    const direction = query.descending ? 'DESC' : 'ASC';
    const where = { ...(query.by === undefined ? {} : { [query.by]: {} }), ...query.where };
    const [conditionsText, values] = conditions(table, where);
    const select = `SELECT ${order.join(', ')}, id, data, crc FROM ${TABLE_NAMES[table]} WHERE ${conditionsText}`;
    const orderBy = `ORDER BY ${order.map((c) => `${c} ${direction}`).join(', ')}`;
    let left = query.limit ?? Infinity;
    let rows = sql(`${select} ${orderBy} LIMIT ? OFFSET ?`).all(...values, Math.min(left, BATCH), query.skip ?? 0) as Record<string, Key>[];
    const after = `${select} AND (${order.join(', ')}) ${query.descending ? '<' : '>'} (${order.map(() => '?').join(', ')}) ${orderBy} LIMIT ${BATCH}`;
    for (;;) {
      yield* rows.slice(0, left);
      left -= rows.length;
      if (rows.length < BATCH || left <= 0) return;
      const last = rows.at(-1)!;
      rows = sql(after).all(...values, ...order.map((c) => last[c]!)) as Record<string, Key>[];
    }
  }

  return {
    get: <T extends TableName>(table: T, id: string) => {
      const row = sql(`SELECT data, crc FROM ${TABLE_NAMES[table]} WHERE account = ? AND id = ?`).get(account() ?? 0, id) as { data: string; crc: number } | undefined;
      return row && withAttempts(sql, file, table, account() ?? 0, recordOf<Row<T>>(file, table, id, row));
    },
    put: (table, id, record) =>
      write((at) => {
        putRecord(sql, at, table, id, record);
        for (const known of empty) {
          const [of, column] = known.split('.') as [TableName, string];
          if (of === table && COLUMNS[table][column]!(record as never) !== null) empty.delete(known);
        }
      }),
    drop: (table, id) => write((at) => sql(`DELETE FROM ${TABLE_NAMES[table]} WHERE account = ? AND id = ?`).run(at, id)),
    find: (table, query) => scan(table, { ...query, limit: 1 }).next().value?.[1],
    has(lookups) {
      const asked = lookups.map(([table, where]) => conditions(table, where));
      const text = lookups.map(([table], i) => `EXISTS (SELECT 1 FROM ${TABLE_NAMES[table]} WHERE ${asked[i]![0]})`).join(' OR ');
      return (sql(`SELECT ${text} AS found`).get(...asked.flatMap(([, values]) => values)) as { found: number }).found === 1;
    },
    findEntry: (table, query) => scan(table, { ...query, limit: 1 }).next().value ?? undefined,
    *each(table, query = {}) {
      for (const [, record] of scan(table, query)) yield record;
    },
    count(table, where = {}) {
      const name = TABLE_NAMES[table];
      const entries = Object.entries(where);
      const [column, value] = entries[0] ?? [];
      // A table's count, or one counted column's: kept by the triggers, so a total costs no scan.
      if (entries.length === 0) return countOf(sql, account(), name);
      if (entries.length === 1 && COUNTED[table]?.includes(column!) && (typeof value !== 'object' || Array.isArray(value))) {
        return [...new Set([value].flat())].reduce((n: number, one) => n + countOf(sql, account(), `${name}.${column}=${one}`), 0);
      }
      const [text, values] = conditions(table, where);
      return (sql(`SELECT count(*) AS n FROM ${name} WHERE ${text}`).get(...values) as { n: number }).n;
    },
    min: (table, column, where) => extreme(table, 'min', column, where),
    max: (table, column, where) => extreme(table, 'max', column, where),
  };

  function extreme(table: TableName, which: 'min' | 'max', column: string, where: Where = {}): Key {
    const [text, values] = conditions(table, { [check(table, column)]: {}, ...where });
    return (sql(`SELECT ${which}(${column}) AS value FROM ${TABLE_NAMES[table]} WHERE ${text}`).get(...values) as { value: Key }).value;
  }
}

/** Rows of several queries, each in order (by the columns of `order`; `sign` -1: newest first), as one. */
function* merged(parts: Iterator<Record<string, Key>>[], order: string[], sign: 1 | -1): Generator<Record<string, Key>> {
  const heads = parts.map((part) => part.next());
  const compare = (a: Key, b: Key) => (a! < b! ? -1 : a! > b! ? 1 : 0);
  const before = (a: Record<string, Key>, b: Record<string, Key>) => sign * order.reduce((c, column) => c || compare(a[column]!, b[column]!), 0) < 0;
  for (;;) {
    let next = -1;
    for (let i = 0; i < heads.length; i++) if (!heads[i]!.done && (next < 0 || before(heads[i]!.value, heads[next]!.value))) next = i;
    if (next < 0) return;
    yield heads[next]!.value as Record<string, Key>;
    heads[next] = parts[next]!.next();
  }
}

const countOf = (sql: Sql, account: number | null, list: string): number =>
  (sql('SELECT n FROM counts WHERE account = ? AND list = ?').get(account ?? 0, list) as { n: number } | undefined)?.n ?? 0;

