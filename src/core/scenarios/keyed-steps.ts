import { z } from 'zod';
import { JOURNAL_METHODS } from '../records/index.js';

/** Scenario steps written by their one key (contract parts 7 and 9), and the `expectRequest` step. */

const json = z.record(z.string(), z.unknown());

/** Requests the account sent to `/api/v1` (the request journal): how many matched, each by method, path and body. */
const requestExpectation = z.strictObject({
  method: z.enum(JOURNAL_METHODS).optional(),
  /** `{id}` or `*` stands for one segment; it may hold `${references}`. */
  path: z.string().min(1),
  /** Exactly this many; at least one when left out. */
  times: z.number().int().min(0).optional(),
  /** A part of the request's JSON body that must match. */
  body: json.optional(),
});

/** `{"expectRequest": {...}}`: the account sent such requests to `/api/v1` (`do` may be left out). */
export const expectRequestStep = z.strictObject({
  do: z.literal('expectRequest').default('expectRequest'),
  description: z.string().optional(),
  expectRequest: requestExpectation,
});

/** The steps written by their one key, without `do` (`{"apiFault": {...}}`): `do` is that key. */
const SHORTHANDS = ['apiFault', 'trigger', 'expectRequest'];
export const shorthand = (s: unknown) =>
  s && typeof s === 'object' && !('do' in s) ? { do: SHORTHANDS.find((key) => key in s), ...s } : s;
