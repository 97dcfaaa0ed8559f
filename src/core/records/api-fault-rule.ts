import { z } from 'zod';
import { API_FAULT_KINDS } from './words.js';

export { API_FAULT_TYPES, type ApiFaultType } from './words.js';

/** An API fault rule (contract part 7) as an account keeps it, in its head beside the tables. */

export const API_FAULT_METHODS = ['*', 'GET', 'POST', 'PATCH', 'DELETE'] as const;
/** `/api/v1` and segments; `{name}` or `*` stands for one segment (a rule's path, and the request journal's filter). */
export const API_PATH_PATTERN = /^\/api\/v1(\/[^/?#\s]+)*\/?$/;
const DEFAULT_HANG_MS = 30_000;

const status = z.union([z.literal(500), z.literal(502), z.literal(503), z.literal(504), z.literal(429)]);

export const apiFaultSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('error'), status }).describe(API_FAULT_KINDS.error.does),
  z
    .strictObject({ type: z.literal('delay'), ms: z.number().int().min(1).max(60_000) })
    .describe(API_FAULT_KINDS.delay.does),
  z.strictObject({ type: z.literal('reset') }).describe(API_FAULT_KINDS.reset.does),
  z
    .strictObject({ type: z.literal('hang'), ms: z.number().int().min(1).max(120_000).default(DEFAULT_HANG_MS) })
    .describe(API_FAULT_KINDS.hang.does),
  z.strictObject({ type: z.literal('lost_answer') }).describe(API_FAULT_KINDS.lost_answer.does),
]);
export type ApiFault = z.output<typeof apiFaultSchema>;

/**
 * A rule as the account keeps it: `draw` is its generator's state (mulberry32's one number, so a restart goes on), the
 * rest is answered.
 */
export const apiFaultRuleRecord = z.strictObject({
  id: z.string(),
  method: z.enum(API_FAULT_METHODS),
  path: z.string(),
  fault: apiFaultSchema,
  times: z.number().int().nullable(),
  probability: z.number().nullable(),
  seed: z.number().int().nullable(),
  hits: z.number().int(),
  spent: z.boolean(),
  createdAt: z.string(),
  draw: z.number(),
});
export type ApiFaultRule = z.infer<typeof apiFaultRuleRecord>;
