import { z } from 'zod';
import { fromCents } from '../conventions/index.js';
import {
  type Client,
  CVU_STATUSES,
  ENTRY_TYPES,
  type Entry,
  LEGACY_SOURCE_TYPES,
  SOURCE_TYPES,
  type SourceType,
} from './client.js';
import type { Hub } from './hub.js';
import { INVOICE_TYPES, type Invoice, PAYMENT_STATUSES } from './invoice.js';
import { ars, isoTime, type ShowsEvery, uuid } from './view-fields.js';

/** A client, a line of its ledger and an invoice as the API answers them (contract part 3). */

export const clientViewSchema = z.strictObject({
  id: uuid,
  paymentHubId: z.number().int(),
  hubName: z.string(),
  name: z.string(),
  taxId: z.string(),
  cashinCallbackUrl: z.string().nullable(),
  emails: z.array(z.string()),
  phones: z.array(z.string()),
  aliasPrefixHint: z.string().nullable(),
  aliasSuffixHint: z.string().nullable(),
  externalReference: z.string().nullable(),
  metadata: z.record(z.string(), z.unknown()),
  cvu: z.string().nullable(),
  alias: z.string().nullable(),
  cvuStatus: z.enum(CVU_STATUSES),
  createdAt: isoTime,
  updatedAt: isoTime,
});
export type ClientView = z.output<typeof clientViewSchema>;
/** The view shows every field of the record but when a delayed CVU becomes active. */
export const clientShown: ShowsEvery<Client, ClientView, 'cvuReadyAt'> = true;

export function clientView(client: Client, hub: Hub | undefined): ClientView {
  return {
    id: client.id,
    paymentHubId: client.paymentHubId,
    hubName: hub?.name ?? `Sandbox Hub ${client.paymentHubId}`,
    name: client.name,
    taxId: client.taxId,
    cashinCallbackUrl: client.cashinCallbackUrl,
    emails: client.emails,
    phones: client.phones,
    aliasPrefixHint: client.aliasPrefixHint,
    aliasSuffixHint: client.aliasSuffixHint,
    externalReference: client.externalReference,
    metadata: client.metadata,
    cvu: client.cvu,
    alias: client.alias,
    cvuStatus: client.cvuStatus,
    createdAt: client.createdAt,
    updatedAt: client.updatedAt,
  };
}

export const entryViewSchema = z.strictObject({
  id: uuid,
  clientId: uuid,
  entryType: z.enum(ENTRY_TYPES),
  amount: ars.describe('Positive for a credit, negative for a debit'),
  currency: z.literal('ARS'),
  description: z.string().nullable(),
  operationId: z.string().nullable(),
  paymentId: uuid.nullable(),
  invoiceId: uuid.nullable(),
  tempLinkId: z.null().describe('Always null: the sandbox has no payment links'),
  sourceType: z.enum(SOURCE_TYPES),
  createdAt: isoTime,
});
export type EntryView = z.output<typeof entryViewSchema>;
export const entryShown: ShowsEvery<Entry, EntryView> = true;

export function entryView(entry: Entry): EntryView {
  return {
    id: entry.id,
    clientId: entry.clientId,
    entryType: entry.entryType,
    amount: fromCents(entry.amount),
    currency: entry.currency,
    description: entry.description,
    operationId: entry.operationId,
    paymentId: entry.paymentId,
    invoiceId: entry.invoiceId,
    tempLinkId: null,
    sourceType: sourceTypeOf(entry),
    createdAt: entry.createdAt,
  };
}

/** An entry's `sourceType` in the real API's values, whatever release wrote it. */
const sourceTypeOf = (entry: Entry): SourceType =>
  entry.sourceType in LEGACY_SOURCE_TYPES
    ? LEGACY_SOURCE_TYPES[entry.sourceType as keyof typeof LEGACY_SOURCE_TYPES]
    : (entry.sourceType as SourceType);

/** The invoice as the reference shows it, with the amount under both its names (spec `total_amount`, reference `totalAmount`). */
export const invoiceViewSchema = z.strictObject({
  id: uuid,
  clientId: uuid,
  invoiceNumber: z.string(),
  invoiceType: z.enum(INVOICE_TYPES),
  sellerTaxId: z.string().nullable(),
  sellerName: z.string().nullable(),
  buyerTaxId: z.string(),
  buyerName: z.string(),
  subtotalNet: ars.nullable(),
  vatAmount: ars.nullable(),
  otherTaxes: ars.nullable(),
  totalAmount: ars,
  total_amount: ars.describe('The same amount under the name the spec gives it'),
  currency: z.literal('ARS'),
  issuedAt: isoTime,
  dueAt: isoTime.nullable(),
  paymentStatus: z.enum(PAYMENT_STATUSES),
  paymentTerms: z.string().nullable(),
  observations: z.string().nullable(),
  createdAt: isoTime,
  updatedAt: isoTime,
});
export type InvoiceView = z.output<typeof invoiceViewSchema>;
/** The view shows every field of the record but the sum allocated (its `paymentStatus` tells). */
export const invoiceShown: ShowsEvery<Invoice, InvoiceView, 'allocated'> = true;

export function invoiceView(invoice: Invoice): InvoiceView {
  const money = (cents: number | null) => (cents === null ? null : fromCents(cents));
  return {
    id: invoice.id,
    clientId: invoice.clientId,
    invoiceNumber: invoice.invoiceNumber,
    invoiceType: invoice.invoiceType,
    sellerTaxId: invoice.sellerTaxId,
    sellerName: invoice.sellerName,
    buyerTaxId: invoice.buyerTaxId,
    buyerName: invoice.buyerName,
    subtotalNet: money(invoice.subtotalNet),
    vatAmount: money(invoice.vatAmount),
    otherTaxes: money(invoice.otherTaxes),
    totalAmount: fromCents(invoice.totalAmount),
    total_amount: fromCents(invoice.totalAmount),
    currency: invoice.currency,
    issuedAt: invoice.issuedAt,
    dueAt: invoice.dueAt,
    paymentStatus: invoice.paymentStatus,
    paymentTerms: invoice.paymentTerms,
    observations: invoice.observations,
    createdAt: invoice.createdAt,
    updatedAt: invoice.updatedAt,
  };
}
