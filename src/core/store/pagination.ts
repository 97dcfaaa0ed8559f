import type { Filter, ListQuery, TableName } from '../records/index.js';
import type { Repository, Row, Where } from './repository.js';

export interface Pagination {
  page: number;
  limit: number;
  total: number;
  totalPages: number;
}

/** A list as the contract answers it: `data` is the page's items, `pagination` sits beside it. */
export interface Page<T> {
  data: T[];
  pagination: Pagination;
}

/** One page of `items` (already newest first) in the contract's list shape; only that page is rendered. */
export function paginate<T, U>(items: T[], query: ListQuery, render: (item: T) => U): Page<U> {
  const start = (query.page - 1) * query.limit;
  return { data: items.slice(start, start + query.limit).map(render), pagination: pagination(items.length, query) };
}

/** One page of a table's records matching `where`, newest first, in the contract's list shape: it reads only that page. */
export function pageOf<T extends TableName, U>(
  records: Repository,
  table: T,
  where: Where,
  query: ListQuery,
  render: (record: Row<T>) => U,
): Page<U> {
  const data = [
    ...records.each(table, { where, descending: true, skip: (query.page - 1) * query.limit, limit: query.limit }),
  ].map(render);
  return { data, pagination: pagination(records.count(table, where), query) };
}

/** The `where` of a list query: each filter given asks its column for its key, or sets its end of a range over it. */
export function whereOf<F extends Record<string, Filter>>(filters: F, query: { [K in keyof F]?: unknown }): Where {
  const where: Record<string, Where[string]> = {};
  for (const [name, { column, key, end }] of Object.entries(filters)) {
    const value = query[name];
    if (value === undefined) continue;
    const asked = key(value as never);
    where[column] = end === undefined ? asked : { ...(where[column] as object), [end]: asked };
  }
  return where;
}

/** One page of items given newest first (`total` of them), read only as far as the page goes. */
export function pageFrom<T, U>(
  newestFirst: Iterable<T>,
  total: number,
  query: ListQuery,
  render: (item: T) => U,
): Page<U> {
  const data: U[] = [];
  let skip = (query.page - 1) * query.limit;
  for (const item of newestFirst) {
    if (data.length === query.limit) break;
    if (skip > 0) skip--;
    else data.push(render(item));
  }
  return { data, pagination: pagination(total, query) };
}

const pagination = (total: number, query: ListQuery): Pagination => ({
  page: query.page,
  limit: query.limit,
  total,
  totalPages: Math.ceil(total / query.limit),
});
