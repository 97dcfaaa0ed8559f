import { z } from 'zod';
import { alias, cents, cvu, httpUrl, hubId, id, metadata, taxId, text, time } from './fields.js';
import { CVU_STATUSES, ENTRY_TYPES, SOURCE_TYPES, type SourceType } from './words.js';

export { CVU_STATUSES, type CvuStatus, ENTRY_TYPES, SOURCE_TYPES, type SourceType } from './words.js';

/** A client with its dedicated CVU, and the lines of its ledger (contract part 3), as stored. */

const cvuStatus = z.enum(CVU_STATUSES);

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
  alias: alias.nullable(),
  cvuStatus,
  /** When a `provisioning` (delayed) CVU becomes active; null in every other status. */
  cvuReadyAt: time.nullable(),
  createdAt: time,
  updatedAt: time,
});
export type Client = z.infer<typeof clientRecord>;

/** The real API's values: a transfer to the client's CVU is `manual_deposit`; a VA payment's cash-in or a debit is `other`. */
/** What entries said before the real values were adopted, and what each now reads as. */
export const LEGACY_SOURCE_TYPES = {
  transfer: 'manual_deposit',
  va_payment: 'other',
  sandbox: 'other',
} as const satisfies Record<string, SourceType>;
export type LegacySourceType = keyof typeof LEGACY_SOURCE_TYPES;

const entryType = z.enum(ENTRY_TYPES);

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

/** A tax id is kept as given and compared by its digits: "20-12345678-3" is "20123456783". */
export const taxIdDigits = (taxId: string): string => taxId.replace(/\D/g, '');

/** What tax ids are compared by: their digits when they have any, else the text as given. */
export const taxIdKey = (taxId: string): string => taxIdDigits(taxId) || taxId;
