import type { ListQuery } from './schemas.js';

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

/** One page of ids kept oldest first, newest first in the contract's list shape, without copying them all. */
export function pageNewestFirst<U>(ids: readonly string[], query: ListQuery, render: (id: string) => U): Page<U> {
  const data: U[] = [];
  for (let at = ids.length - 1 - (query.page - 1) * query.limit; at >= 0 && data.length < query.limit; at--) data.push(render(ids[at]!));
  return { data, pagination: pagination(ids.length, query) };
}

/** One page of ids given newest first (`total` of them), read only as far as the page goes. */
export function pageOf<U>(newestFirst: Iterable<string>, total: number, query: ListQuery, render: (id: string) => U): Page<U> {
  const data: U[] = [];
  let skip = (query.page - 1) * query.limit;
  for (const id of newestFirst) {
    if (data.length === query.limit) break;
    if (skip > 0) skip--;
    else data.push(render(id));
  }
  return { data, pagination: pagination(total, query) };
}

const pagination = (total: number, query: ListQuery): Pagination => ({
  page: query.page,
  limit: query.limit,
  total,
  totalPages: Math.ceil(total / query.limit),
});

/** The records of a table, newest first (tables keep insertion order). */
export const newestFirst = <T>(table: Record<string, T>): T[] => Object.values(table).reverse();
