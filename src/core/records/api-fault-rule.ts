import { z } from 'zod';

/** An API fault rule (contract part 7) as an account keeps it, in its head beside the tables. */

export const API_FAULT_METHODS = ['*', 'GET', 'POST', 'PATCH', 'DELETE'] as const;
const API_FAULT_TYPES = ['error', 'delay', 'reset', 'hang', 'lost_answer'] as const;
export type ApiFaultType = (typeof API_FAULT_TYPES)[number];
const DEFAULT_HANG_MS = 30_000;

const status = z.union([z.literal(500), z.literal(502), z.literal(503), z.literal(504), z.literal(429)]);

export const apiFaultSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('error'), status }).describe('Answer with this status in the error envelope; nothing is carried out'),
  z.strictObject({ type: z.literal('delay'), ms: z.number().int().min(1).max(60_000) }).describe('Carry the request out; answer that many real ms later'),
  z.strictObject({ type: z.literal('reset') }).describe('Close the connection with no answer; nothing is carried out'),
  z
    .strictObject({ type: z.literal('hang'), ms: z.number().int().min(1).max(120_000).default(DEFAULT_HANG_MS) })
    .describe('No answer for that long (or until the client closes), then close; nothing is carried out'),
  z.strictObject({ type: z.literal('lost_answer') }).describe('Carry the request out and commit it, then close the connection with no answer'),
]);
export type ApiFault = z.output<typeof apiFaultSchema>;

/** A rule as the account keeps it: `draw` is its generator's state (mulberry32's one number, so a restart goes on), the rest is answered. */
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
