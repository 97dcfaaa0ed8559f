import { z } from 'zod';
import { bodyDepth, text, time } from './fields.js';

/** The answer remembered for an Idempotency-Key (contract part 6): replayed while the same request comes again. */
export const idempotencyRecord = z.strictObject({
  fingerprint: text(),
  status: z.number().int(),
  body: bodyDepth(z.unknown()),
  createdAt: time,
});
export type IdempotencyRecord = z.infer<typeof idempotencyRecord>;
