import { z } from 'zod';
import { cents, cvu, hubId, httpUrl, id, metadata, taxId, text, time } from './fields.js';

/** A client with its dedicated CVU, and the lines of its ledger (contract part 3), as stored. */

const cvuStatus = z.enum(['not_provisioned', 'provisioning', 'active', 'provisioning_failed', 'disabled']);
export type CvuStatus = z.infer<typeof cvuStatus>;
export const CVU_STATUSES: CvuStatus[] = [...cvuStatus.options];

export const clientRecord = z.strictObject({
  id,
  paymentHubId: hubId,
  name: text(255).min(1),
  /** As given; compared by its digits. */
  taxId,
  cashinCallbackUrl: httpUrl.nullable(),
  emails: z.array(z.email('must be an email address')).max(20),
  phones: z.array(z.string().min(1).max(32)).max(20),
  aliasPrefixHint: text(30).nullable(),
  aliasSuffixHint: text(20).nullable(),
  externalReference: text(255).nullable(),
  metadata,
  /** Null until the CVU is provisioned. */
  cvu: cvu.nullable(),
  alias: text().nullable(),
  cvuStatus,
  /** When a `provisioning` (delayed) CVU becomes active; null in every other status. */
  cvuReadyAt: time.nullable(),
  createdAt: time,
  updatedAt: time,
});
export type Client = z.infer<typeof clientRecord>;

/** The real API's values: a transfer to the client's CVU is `manual_deposit`; a VA payment's cash-in or a debit is `other`. */
const sourceType = z.enum(['payment_link', 'manual_deposit', 'other']);
export type SourceType = z.infer<typeof sourceType>;
export const SOURCE_TYPES: SourceType[] = [...sourceType.options];
/** What entries said before the real values were adopted, and what each now reads as. */
export const LEGACY_SOURCE_TYPES = { transfer: 'manual_deposit', va_payment: 'other', sandbox: 'other' } as const satisfies Record<string, SourceType>;
export type LegacySourceType = keyof typeof LEGACY_SOURCE_TYPES;

const entryType = z.enum(['cash_in', 'debit', 'credit', 'adjustment', 'reversal', 'invoice_allocation']);
export type EntryType = z.infer<typeof entryType>;
export const ENTRY_TYPES: EntryType[] = [...entryType.options];

/** A line of a client's ledger: a credit (positive cents) or a debit (negative cents). */
export const entryRecord = z.strictObject({
  id,
  clientId: id,
  entryType,
  amount: cents,
  currency: z.literal('ARS'),
  description: text(255).nullable(),
  operationId: text().nullable(),
  /** The VA payment a cash-in was credited through, if any. */
  paymentId: id.nullable(),
  invoiceId: id.nullable(),
  /** What produced the entry; files written before 0.2 hold the old values (`LEGACY_SOURCE_TYPES`). */
  sourceType: z.enum([...SOURCE_TYPES, ...(Object.keys(LEGACY_SOURCE_TYPES) as LegacySourceType[])]),
  createdAt: time,
});
export type Entry = z.infer<typeof entryRecord>;
