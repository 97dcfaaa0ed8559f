/**
 * The queries of the core's repository port (`Repository`) on the record tables (`records.ts`): each served by its
 * column's index `(account, column)`, read in the order made (`seq`). A query's rows are read by `query-rows.ts`.
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
import { check, conditions, rowsOf } from './query-rows.js';
import { putAttempt, putRecord } from './record-writes.js';
import { recordOf, rowColumns, type Sql, type StoredRow, TABLE_NAMES, withAttempts } from './records.js';

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
    has: (lookups) => hasAny(sql, id(), lookups),
    findEntry: (table, query) => scan(table, { ...query, limit: 1 }).next().value ?? undefined,
    *each(table, query = {}) {
      for (const [, record] of scan(table, query)) yield record;
    },
    count: (table, where = {}) => countWhere(sql, id(), table, where),
    min: (table, column, where) => extreme(table, 'min', column, where),
    max: (table, column, where) => extreme(table, 'max', column, where),
  };
}

/** `Repository.has`: whether any of the lookups finds a record, in one statement. */
function hasAny(sql: Sql, account: number, lookups: Parameters<Repository['has']>[0]): boolean {
  const asked = lookups.map(([table, where]) => conditions(account, table, where));
  const text = lookups
    .map(([table], i) => `EXISTS (SELECT 1 FROM ${TABLE_NAMES[table]} WHERE ${asked[i]![0]})`)
    .join(' OR ');
  return (
    (sql(`SELECT ${text} AS found`).get(...asked.flatMap(([, values]) => values)) as { found: number }).found === 1
  );
}

/** `Repository.count`: how many records of a table match. */
function countWhere(sql: Sql, account: number, table: TableName, where: Where): number {
  const name = TABLE_NAMES[table];
  const entries = Object.entries(where);
  const [column, value] = entries[0] ?? [];
  // A table's count, or one counted column's: kept by the triggers, so a total costs no scan.
  if (entries.length === 0) return countOf(sql, account, name);
  if (
    entries.length === 1 &&
    COUNTED[table]?.includes(column!) &&
    (typeof value !== 'object' || Array.isArray(value))
  ) {
    return [...new Set([value].flat())].reduce(
      (n: number, one) => n + countOf(sql, account, `${name}.${column}=${one}`),
      0,
    );
  }
  const [text, values] = conditions(account, table, where);
  return (sql(`SELECT count(*) AS n FROM ${name} WHERE ${text}`).get(...values) as { n: number }).n;
}
