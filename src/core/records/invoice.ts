import { z } from 'zod';
import { id, nonNegative, positive, text, time } from './fields.js';
import { INVOICE_TYPES, PAYMENT_STATUSES } from './words.js';

export { INVOICE_TYPES, PAYMENT_STATUSES, type PaymentStatus } from './words.js';

/** An invoice assigned to a client (contract part 3), as stored: what the client owes, and how much allocations covered. */

/** AFIP's invoice letters: A between registered VAT payers, B to final consumers and exempt buyers, C from monotributistas. */
const invoiceType = z.enum(INVOICE_TYPES);

const paymentStatus = z.enum(PAYMENT_STATUSES);

export const invoiceRecord = z.strictObject({
  id,
  clientId: id,
  /** `0001-00000042`: point of sale and number, as AFIP prints them. */
  invoiceNumber: text(),
  invoiceType,
  sellerTaxId: text().nullable(),
  sellerName: text().nullable(),
  /** Copied from the client when the invoice is created. */
  buyerTaxId: text(),
  buyerName: text(),
  subtotalNet: nonNegative.nullable(),
  vatAmount: nonNegative.nullable(),
  otherTaxes: nonNegative.nullable(),
  /** The spec's `total_amount`: what `totalInvoiced` sums. */
  totalAmount: positive,
  /** The sum of the invoice's `invoice_allocation` entries. */
  allocated: nonNegative,
  currency: z.literal('ARS'),
  issuedAt: time,
  dueAt: time.nullable(),
  paymentStatus,
  paymentTerms: text().nullable(),
  observations: text().nullable(),
  createdAt: time,
  updatedAt: time,
});
export type Invoice = z.infer<typeof invoiceRecord>;

/** An invoice as the release before 0.2 stored it; `normalizeAccount` reads it as an `Invoice`. */
const legacyInvoiceRecord = z.strictObject({
  id,
  clientId: id,
  total_amount: positive,
  currency: z.literal('ARS'),
  description: text().nullable(),
  dueDate: text().nullable(),
  status: z.enum(['issued', 'paid', 'cancelled']),
  externalReference: text().nullable(),
  createdAt: time,
  updatedAt: time,
});
export type LegacyInvoice = z.infer<typeof legacyInvoiceRecord>;

/** An invoice of this release, or one of 0.1 (it has `total_amount`): checked by its own release's schema, naming each field. */
export const invoiceOfAnyRelease = z.unknown().transform((value, ctx): Invoice | LegacyInvoice => {
  const result = (
    typeof value === 'object' && value !== null && 'total_amount' in value ? legacyInvoiceRecord : invoiceRecord
  ).safeParse(value);
  if (result.success) return result.data;
  for (const issue of result.error.issues) ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
  return z.NEVER;
});
