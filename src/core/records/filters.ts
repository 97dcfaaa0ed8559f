/**
 * A list's filters, declared once per list beside its record (`VA_PAYMENT_FILTERS`): from them come the list query's
 * schema (`listOf`, schemas.ts, so the OpenAPI parameters too) and the store's `where` (`whereOf`, pagination.ts).
 */
import { z } from 'zod';
import { ms } from '../conventions/index.js';

export const isoDate = z.string().refine((value) => !Number.isNaN(Date.parse(value)), 'must be an ISO 8601 date');

/** A comma-separated list whose every item is one of `values`. */
export const csvItems = <T extends string>(values: readonly T[]) =>
  z
    .string()
    .transform((value) =>
      value
        .split(',')
        .map((item) => item.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.enum(values as [T, ...T[]])).min(1));
export const csvOf = <T extends string>(values: readonly T[]) => csvItems(values).optional();

/** What a filter asks a lookup column for: one value, or any of several. */
type FilterKey = string | number | readonly string[];

/**
 * A list's filter: its query parameter's schema (optional), the lookup column it asks (`COLUMNS`), the key that
 * column holds for the value given, and, for a range over the column, which end the parameter sets.
 */
export interface Filter<V = never> {
  schema: z.ZodOptional;
  column: string;
  key: (value: V) => FilterKey;
  end?: 'from' | 'to';
}

export const filter = <S extends z.ZodType>(
  column: string,
  schema: S,
  key = (value: z.output<S>) => value as FilterKey,
  end?: 'from' | 'to',
) => ({
  schema: schema.optional(),
  column,
  key,
  end,
});

/** A range's end over a time column, given as an ISO 8601 date. */
export const timeFilter = (column: string, end: 'from' | 'to') => filter(column, isoDate, ms, end);
