import type { ListQuery } from './schemas.js';

export interface Pagination {
  page: number;
  limit: number;
  total: number;
  totalPages: number;
}

export type Page<K extends string, T> = { [P in K]: T[] } & { pagination: Pagination };

/** One page of `items` (already newest first) in the contract's list shape; only that page is rendered. */
export function paginate<K extends string, T, U>(key: K, items: T[], query: ListQuery, render: (item: T) => U): Page<K, U> {
  const start = (query.page - 1) * query.limit;
  return {
    [key]: items.slice(start, start + query.limit).map(render),
    pagination: { page: query.page, limit: query.limit, total: items.length, totalPages: Math.ceil(items.length / query.limit) },
  } as Page<K, U>;
}

/** The records of a table, newest first (tables keep insertion order). */
export const newestFirst = <T>(table: Record<string, T>): T[] => Object.values(table).reverse();
