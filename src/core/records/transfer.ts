import { z } from 'zod';
import { id, nonNegative, positive, taxId, text, time } from './fields.js';

/** A transfer the sandbox received (contract part 2.4), credited or returned, as stored. */

const TRANSFER_OUTCOMES = ['credited', 'returned'] as const;

export const transferRecord = z.strictObject({
  id,
  operationId: text(),
  to: text(),
  cvu: text(),
  total: positive,
  taxes: nonNegative,
  // A payer's name and tax id have the bounds of a payment's client's.
  from: z.strictObject({ name: text(255).optional(), taxId: taxId.optional(), cbu: text().optional() }).nullable(),
  outcome: z.enum(TRANSFER_OUTCOMES),
  reason: text().nullable(),
  target: z.strictObject({ type: z.enum(['va_payment', 'client']), id }).nullable(),
  eventIds: z.array(id),
  createdAt: time,
});
export type Transfer = z.infer<typeof transferRecord>;
