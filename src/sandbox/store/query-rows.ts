/**
 * A query's rows on a table of records (`Query`): its conditions as SQL, its order, read in batches by its column's
 * index `(account, column)`, several values of a column read apart and merged.
 */
import type { TableName } from '../../core/index.js';
import { COLUMNS } from '../../core/records/index.js';
import type { Key, Query, Range, Where } from '../../core/store/repository.js';
import { rowColumns, type Sql, TABLE_NAMES } from './records.js';

/** How many rows a lookup reads at a time. */
export const BATCH = 256;

export type Rows = Record<string, Key>;

export const check = (table: TableName, column: string) => {
  if (column !== 'id' && !(column in COLUMNS[table])) throw new Error(`${TABLE_NAMES[table]} has no column ${column}`);
  return column;
};

/** A query's conditions on an account's rows as SQL, and their values. */
export function conditions(account: number, table: TableName, where: Where = {}): [string, Key[]] {
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
export function rowsOf(sql: Sql, account: number, table: TableName, query: Query): Iterator<Rows> {
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
