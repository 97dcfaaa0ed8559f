/**
 * The queries of the core's repository port (`Repository`) on the record tables (`records.ts`): each served by its
 * column's index `(account, column)`, read in the order made (`seq`).
 */
import type { TableName } from '../../core/index.js';
import { COLUMNS } from '../../core/records/index.js';
import {
  COUNTED,
  type Key,
  type Query,
  type Range,
  type Repository,
  type Row,
  type Where,
} from '../../core/store/repository.js';
import {
  putAttempt,
  putRecord,
  recordOf,
  rowColumns,
  type Sql,
  type StoredRow,
  TABLE_NAMES,
  UnreadableRecord,
  withAttempts,
} from './records.js';

/** How many rows a lookup reads at a time. */
const BATCH = 256;

type Rows = Record<string, Key>;

const check = (table: TableName, column: string) => {
  if (column !== 'id' && !(column in COLUMNS[table])) throw new Error(`${TABLE_NAMES[table]} has no column ${column}`);
  return column;
};

/** A query's conditions on an account's rows as SQL, and their values. */
function conditions(account: number, table: TableName, where: Where = {}): [string, Key[]] {
  const parts = ['account = ?'];
  const values: Key[] = [account];
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
}

/**
 * What a query's records are ordered by: its `by`, or the column of a range it asks (its index's order), then as
 * written (`seq`), which is the order made: each column's index `(account, column)` ends with the rowid, so it serves
 * the order without a sort.
 */
function orderOf(query: Query): string[] {
  const range = Object.entries(query.where ?? {}).find(
    ([, value]) => value !== null && typeof value === 'object' && !Array.isArray(value),
  );
  const first = query.by ?? range?.[0];
  return first === undefined ? ['seq'] : [first, 'seq'];
}

/** A query's rows in its order, read in batches, each after the last one read (by its order), never by offset. */
function* ordered(sql: Sql, account: number, table: TableName, query: Query): Generator<Rows> {
  if (query.by !== undefined) check(table, query.by);
  const order = orderOf(query);
  const direction = query.descending ? 'DESC' : 'ASC';
  const where = { ...(query.by === undefined ? {} : { [query.by]: {} }), ...query.where };
  const [conditionsText, values] = conditions(account, table, where);
  const select = `SELECT ${order.join(', ')}, id, ${rowColumns(table)} FROM ${TABLE_NAMES[table]} WHERE ${conditionsText}`;
  const orderBy = `ORDER BY ${order.map((c) => `${c} ${direction}`).join(', ')}`;
  let left = query.limit ?? Infinity;
  let rows = sql(`${select} ${orderBy} LIMIT ? OFFSET ?`).all(
    ...values,
    Math.min(left, BATCH),
    query.skip ?? 0,
  ) as Rows[];
  for (;;) {
    yield* rows.slice(0, left);
    left -= rows.length;
    if (rows.length < BATCH || left <= 0) return;
    const last = rows.at(-1)!;
    const after = `${select} AND (${order.join(', ')}) ${query.descending ? '<' : '>'} (${order.map(() => '?').join(', ')}) ${orderBy} LIMIT ${BATCH}`;
    rows = sql(after).all(...values, ...order.map((c) => last[c]!)) as Rows[];
  }
}

/**
 * A query's rows. A column asked for any of several values (`status=expired,cancelled`) is read a value at a time,
 * each in order in its index, and merged: one query over all of them would sort every record they hold.
 */
function rowsOf(sql: Sql, account: number, table: TableName, query: Query): Iterator<Rows> {
  const split =
    query.by === undefined
      ? Object.entries(query.where ?? {}).find(([, value]) => Array.isArray(value) && new Set(value).size > 1)
      : undefined;
  if (!split) return ordered(sql, account, table, query);
  const [column, values] = split as [string, Key[]];
  const parts = [...new Set(values)].map((value) =>
    ordered(sql, account, table, { ...query, where: { ...query.where, [column]: value }, skip: 0, limit: undefined }),
  );
  return skipped(merged(parts, orderOf(query), query.descending ? -1 : 1), query.skip ?? 0);
}

function* skipped(rows: Iterator<Rows>, skip: number): Generator<Rows> {
  for (let row = rows.next(); !row.done; row = rows.next()) if (skip-- <= 0) yield row.value;
}

/** Rows of several queries, each in order (by the columns of `order`; `sign` -1: newest first), as one. */
function* merged(parts: Iterator<Rows>[], order: string[], sign: 1 | -1): Generator<Rows> {
  const heads = parts.map((part) => part.next());
  const compare = (a: Key, b: Key) => (a! < b! ? -1 : a! > b! ? 1 : 0);
  const before = (a: Rows, b: Rows) => sign * order.reduce((c, column) => c || compare(a[column]!, b[column]!), 0) < 0;
  for (;;) {
    let next = -1;
    for (let i = 0; i < heads.length; i++)
      if (!heads[i]!.done && (next < 0 || before(heads[i]!.value, heads[next]!.value))) next = i;
    if (next < 0) return;
    yield heads[next]!.value as Rows;
    heads[next] = parts[next]!.next();
  }
}

/** The highest values a repository was asked (`highest`), by `table.column`, each with its range. */
type Tops = Map<string, { range: Range; value: Key }>;

/** Raises each highest value of `table` that a record written there passes. */
function raise(tops: Tops, table: TableName, key: string, record: unknown): void {
  for (const [name, top] of tops) {
    const [of, column] = name.split('.') as [TableName, string];
    if (of !== table) continue;
    const value = column === 'id' ? key : COLUMNS[table][column]!(record as never);
    if (
      value !== null &&
      value >= top.range.from! &&
      value <= top.range.to! &&
      (top.value === null || value > top.value)
    )
      top.value = value;
  }
}

/** What a record written does to what is kept: an order it is in is empty no more (`known`), a highest value may rise. */
function written(known: Set<string>, tops: Tops, table: TableName, key: string, record: unknown): void {
  for (const order of known) {
    const [of, column] = order.split('.') as [TableName, string];
    if (of === table && COLUMNS[table][column]!(record as never) !== null) known.delete(order);
  }
  raise(tops, table, key, record);
}

/** A highest value: asked of the database (`ask`) the first time, then as the writes raised it. */
function highestOf(tops: Tops, name: string, range: Range, ask: () => Key): Key {
  let top = tops.get(name);
  if (top === undefined || top.range.from !== range.from || top.range.to !== range.to) {
    top = { range, value: ask() };
    tops.set(name, top);
  }
  return top.value;
}

type Stored = { seq: number; id: string; data: string; crc: number };

/** Whether an id is an array index (0 to 2³²−2, written as such): a JS object lists those first, by value. */
const isIndex = (id: string): boolean => /^(0|[1-9]\d{0,9})$/.test(id) && Number(id) <= 4294967294;

/**
 * `Storage.rows`: an account's rows of one table, the index ids first (by value), then the rest in the order made, a
 * batch at a time, each batch after the last one read (no statement stays open between them). `account` is read again
 * at each batch: an account replaced whole meanwhile fails the read rather than mixing two.
 */
export function* storedRows<T extends TableName>(
  sql: Sql,
  file: string,
  account: () => number | null,
  table: T,
  where: Where = {},
  unreadable?: string[],
): Generator<[string, Row<T>]> {
  const id = account();
  if (id === null) return;
  const [text, values] = conditions(id, table, where);
  const from = `SELECT seq, id, data, crc FROM ${TABLE_NAMES[table]} WHERE ${text}`;
  const batch = function* (
    after: string,
    order: string,
    last: (row: Stored) => number,
    keep: (row: Stored) => boolean,
  ) {
    for (let at = -1; ; ) {
      if (account() !== id) throw new Error(`the account was replaced while its ${TABLE_NAMES[table]} were read`);
      const rows = sql(`${from} AND ${after} > ? ORDER BY ${order} LIMIT ${BATCH}`).all(...values, at) as Stored[];
      yield* rows.filter(keep);
      if (rows.length < BATCH) return;
      at = last(rows.at(-1)!);
    }
  };
  const indices = batch(
    `length(id) <= 10 AND id NOT GLOB '*[^0-9]*' AND CAST(id AS INTEGER)`,
    'CAST(id AS INTEGER)',
    (row) => Number(row.id),
    (row) => isIndex(row.id),
  );
  const rest = batch(
    'seq',
    'seq',
    (row) => row.seq,
    (row) => !isIndex(row.id),
  );
  for (const rows of [indices, rest]) {
    for (const row of rows) {
      const record = readable<Row<T>>(
        () => withAttempts(sql, file, table, id, recordOf<Row<T>>(file, table, row.id, row)),
        unreadable,
        `${TABLE_NAMES[table]} ${row.id}`,
      );
      if (record !== undefined) yield [row.id, record];
    }
  }
}

/** A record read, or undefined when it cannot be and `unreadable` is given: then it is named there. */
function readable<T>(read: () => T, unreadable: string[] | undefined, name: string): T | undefined {
  try {
    return read();
  } catch (error) {
    if (!(error instanceof UnreadableRecord) || !unreadable) throw error;
    unreadable.push(name);
    return undefined;
  }
}

/** How many records a table (`va_payments`), or one counted column's value (`va_payments.status=waiting`), holds. */
const countOf = (sql: Sql, account: number, list: string): number =>
  (sql('SELECT n FROM counts WHERE account = ? AND list = ?').get(account, list) as { n: number } | undefined)?.n ?? 0;

/**
 * An account's records through the core's port. `account` is the account's id, or null while it has none (a key that
 * only read); `write` runs a write in the group's transaction with the account's id (made at its first write).
 * The account's whole orders (`table.column`) known to find nothing (see `scan`) are kept with it, true by its writes,
 * and forgotten when the store's `epoch` moves on (a rollback, a replace).
 */
export function repository(
  sql: Sql,
  file: string,
  account: () => number | null,
  write: <T>(run: (account: number) => T) => T,
  epoch: () => number,
): Repository {
  const id = () => account() ?? 0;
  const known = new Set<string>();
  /** The highest values asked (`highest`), kept by `put`. */
  const tops: Tops = new Map();
  let seen = epoch();
  const forgetting = () => {
    if (seen !== epoch()) known.clear(), tops.clear();
    seen = epoch();
  };
  const empty = () => (forgetting(), known);

  function* scan<T extends TableName>(table: T, query: Query): Generator<[string, Row<T>]> {
    // A column's whole order known empty (no free pool CVU, no delivery pending) is not asked again until a write fills it.
    const whole = query.by !== undefined && query.where === undefined && !query.skip ? `${table}.${query.by}` : null;
    if (whole !== null && empty().has(whole)) return;
    const rows = rowsOf(sql, id(), table, query);
    let left = query.limit ?? Infinity;
    let row = rows.next();
    if (row.done && whole !== null) empty().add(whole);
    for (; !row.done && left > 0; row = rows.next(), left--) {
      const key = row.value.id as string;
      yield [
        key,
        withAttempts(sql, file, table, id(), recordOf<Row<T>>(file, table, key, row.value as unknown as StoredRow)),
      ];
    }
  }

  function extreme(table: TableName, which: 'min' | 'max', column: string, where: Where = {}): Key {
    const [text, values] = conditions(id(), table, { [check(table, column)]: {}, ...where });
    return (
      sql(`SELECT ${which}(${column}) AS value FROM ${TABLE_NAMES[table]} WHERE ${text}`).get(...values) as {
        value: Key;
      }
    ).value;
  }

  return {
    get: <T extends TableName>(table: T, key: string) => {
      const row = sql(`SELECT ${rowColumns(table)} FROM ${TABLE_NAMES[table]} WHERE account = ? AND id = ?`).get(
        id(),
        key,
      ) as StoredRow | undefined;
      return row && withAttempts(sql, file, table, id(), recordOf<Row<T>>(file, table, key, row));
    },
    put: (table, key, record) =>
      write((at) => {
        putRecord(sql, at, table, key, record);
        written(empty(), tops, table, key, record);
      }),
    appendAttempt: (before, next) =>
      write((at) => {
        const stored = putAttempt(sql, at, before, next);
        if (stored) written(empty(), tops, 'deliveries', next.id, next);
        return stored;
      }),
    drop: (table, key) =>
      write((at) => sql(`DELETE FROM ${TABLE_NAMES[table]} WHERE account = ? AND id = ?`).run(at, key)),
    highest(table, column, range) {
      forgetting();
      return highestOf(tops, `${table}.${column}`, range, () => extreme(table, 'max', column, { [column]: range }));
    },
    find: (table, query) => scan(table, { ...query, limit: 1 }).next().value?.[1],
    has(lookups) {
      const asked = lookups.map(([table, where]) => conditions(id(), table, where));
      const text = lookups
        .map(([table], i) => `EXISTS (SELECT 1 FROM ${TABLE_NAMES[table]} WHERE ${asked[i]![0]})`)
        .join(' OR ');
      return (
        (sql(`SELECT ${text} AS found`).get(...asked.flatMap(([, values]) => values)) as { found: number }).found === 1
      );
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
      if (entries.length === 0) return countOf(sql, id(), name);
      if (
        entries.length === 1 &&
        COUNTED[table]?.includes(column!) &&
        (typeof value !== 'object' || Array.isArray(value))
      ) {
        return [...new Set([value].flat())].reduce(
          (n: number, one) => n + countOf(sql, id(), `${name}.${column}=${one}`),
          0,
        );
      }
      const [text, values] = conditions(id(), table, where);
      return (sql(`SELECT count(*) AS n FROM ${name} WHERE ${text}`).get(...values) as { n: number }).n;
    },
    min: (table, column, where) => extreme(table, 'min', column, where),
    max: (table, column, where) => extreme(table, 'max', column, where),
  };
}
