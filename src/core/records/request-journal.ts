import { z } from 'zod';
import { API_FAULT_TYPES, API_PATH_PATTERN } from './api-fault-rule.js';
import { pageQuery } from './list-queries.js';
import { isoTime, uuid } from './view-fields.js';

/** The request journal (contract part 9): every `/api/v1` request of an account, as sent and as answered. */

/** The methods an `/api/v1` request may have, as the journal's `method` filter takes them. */
export const JOURNAL_METHODS = ['GET', 'POST', 'PATCH', 'PUT', 'DELETE'] as const;

/** Each body is kept up to this many bytes of UTF-8; past it, cut and the item marked `truncated`. */
export const JOURNAL_BODY_BYTES = 64 * 1024;

export const journalItemSchema = z.strictObject({
  id: uuid,
  at: isoTime.describe("When it came, by the account's clock"),
  method: z.string(),
  path: z.string(),
  query: z.record(z.string(), z.string()).describe('The query string, parameter by parameter'),
  requestHeaders: z.record(z.string(), z.string()).describe('As sent, without Authorization'),
  requestBody: z.unknown().describe('The JSON as sent (text when not JSON, or cut); null without a body'),
  status: z
    .number()
    .int()
    .nullable()
    .describe('Null when no answer was sent (an API fault that closed the connection)'),
  responseBody: z.unknown().describe('The JSON as answered (text when not JSON, or cut); null without an answer'),
  durationMs: z.number().describe('From the request to its answer, real ms'),
  idempotencyKey: z.string().nullable(),
  replayed: z.boolean().describe('Answered with the stored answer of its Idempotency-Key'),
  apiFault: z
    .strictObject({ ruleId: uuid, type: z.enum(API_FAULT_TYPES) })
    .nullable()
    .describe('The API fault rule that applied to it'),
  truncated: z
    .literal(true)
    .optional()
    .describe(`A body was over ${JOURNAL_BODY_BYTES / 1024} KiB and is cut there, as text`),
});
export type JournalItem = z.output<typeof journalItemSchema>;

export const listRequestsQuery = z.object({
  ...pageQuery,
  method: z
    .string()
    .transform((value) => value.toUpperCase())
    .pipe(z.enum(JOURNAL_METHODS))
    .optional(),
  path: z
    .string()
    .max(512)
    .regex(API_PATH_PATTERN, 'must be a path under /api/v1, where {id} or * stands for one segment')
    .optional(),
  status: z
    .string()
    .regex(/^\d{3}$/, 'must be an HTTP status, e.g. 201')
    .transform(Number)
    .optional(),
  since: z.iso.datetime({ offset: true }).optional().describe('Only the requests that came at or after this time'),
});

export const requestsClearedSchema = z.strictObject({
  deleted: z.number().int().describe('How many requests were removed'),
});
