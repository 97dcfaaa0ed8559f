import { z } from 'zod';
import { ENTRY_TYPES } from './client.js';
import { DELIVERY_STATUSES, EVENT_TYPES } from './event.js';
import { csvOf, isoDate } from './filters.js';
import { VA_PAYMENT_FILTERS } from './va-payment.js';

/** The query strings of the list requests: the page, and each list's filters. */

const queryInt = (min: number, max: number, fallback: number) =>
  z
    .string()
    .regex(/^\d+$/, 'must be a whole number')
    .transform(Number)
    .pipe(z.number().min(min).max(max))
    .optional()
    .transform((value) => value ?? fallback);

export const pageQuery = {
  page: queryInt(1, 1_000_000_000, 1),
  limit: queryInt(1, 100, 20),
};

/** A list query's schema: the page, then each filter's parameter (`records/filters.ts`). */
const listOf = <F extends Record<string, { schema: z.ZodType }>>(filters: F) =>
  z.object({
    ...pageQuery,
    ...(Object.fromEntries(Object.entries(filters).map(([name, f]) => [name, f.schema])) as {
      [K in keyof F]: F[K]['schema'];
    }),
  });

export const listVaPaymentsQuery = listOf(VA_PAYMENT_FILTERS);

export const listQuery = z.object(pageQuery);
export type ListQuery = z.output<typeof listQuery>;

/** The events of one VA payment or client (each id filters when given), for a payment's or client's timeline. */
export const listEventsQuery = z.object({
  ...pageQuery,
  vaPaymentId: z.string().optional(),
  clientId: z.string().optional(),
});

export const listDeliveriesQuery = z.object({
  ...pageQuery,
  status: csvOf(DELIVERY_STATUSES),
  eventType: csvOf(EVENT_TYPES),
});

export const listClientsQuery = z.object({
  ...pageQuery,
  taxId: z.string().optional(),
  externalReference: z.string().optional(),
});

export const listTransactionsQuery = z.object({
  ...pageQuery,
  entryType: csvOf(ENTRY_TYPES),
  from: isoDate.optional(),
  to: isoDate.optional(),
});
