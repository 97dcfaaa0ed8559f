import { z } from 'zod';
import { JOURNAL_METHODS } from '../records/request-journal.js';

/** What a scenario's `expectRequest` step asks of the request journal (contract part 9). */

const json = z.record(z.string(), z.unknown());

/** Requests the account sent to `/api/v1` (the request journal): how many matched, each by method, path and body. */
export const requestExpectation = z.strictObject({
  method: z.enum(JOURNAL_METHODS).optional(),
  /** `{id}` or `*` stands for one segment; it may hold `${references}`. */
  path: z.string().min(1),
  /** Exactly this many; at least one when left out. */
  times: z.number().int().min(0).optional(),
  /** A part of the request's JSON body that must match. */
  body: json.optional(),
});
