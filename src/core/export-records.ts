import { z } from 'zod';
import { isValidCvu } from './cvu.js';
import { UUID_PATTERN } from './ids.js';
import { MAX_CENTS } from './money.js';
import { createClientSchema, createVaPaymentSchema, debitSchema, hubPatchSchema, httpUrl, MAX_JSON_DEPTH, nestsAtMost } from './schemas.js';
import {
  CVU_STATUSES,
  DELIVERY_STATUSES,
  ENTRY_TYPES,
  EVENT_TYPES,
  CVU_PROVISIONINGS,
  INVOICE_TYPES,
  PAYMENT_STATUSES,
  LEGACY_SOURCE_TYPES,
  SOURCE_TYPES,
  VA_PAYMENT_STATUSES,
  type Attempt,
  type Client,
  type Delivery,
  type Entry,
  type Hub,
  type IdempotencyRecord,
  type Invoice,
  type LegacyInvoice,
  type LegacySourceType,
  type PoolCvu,
  type SandboxEvent,
  type Transfer,
  type VaPayment,
} from './state.js';

/**
 * The records of an account export (`account-export.ts`), each as stored: one zod schema per table's records. A field
 * the API takes from requests is held to the very schema that validates it there (`created`), so a file can hold
 * nothing a request could not have made: no name over 255, no metadata over 50 keys, no `file://` callback URL.
 */

const id = z.string().regex(UUID_PATTERN, 'must be a lower-case UUID');
export const time = z.iso.datetime({ message: 'must be an ISO 8601 UTC time' });
const cents = z.number().int('must be whole cents').min(-MAX_CENTS).max(MAX_CENTS);
/** Money as the API takes it: more than 0 (or 0 and more). */
const positive = cents.min(1, 'must be greater than 0');
const nonNegative = cents.min(0, 'must be 0 or more');
/** A VA payment's sums: below its amount until one transfer (at most MAX_CENTS) ends it. */
const received = z.number().int('must be whole cents').min(0, 'must be 0 or more').max(2 * MAX_CENTS);
const text = z.string();
/** A CVU as the sandbox makes them: 22 digits with their check digits (a key such as `constructor` is not one). */
const cvu = z.string().refine(isValidCvu, 'must be a CVU: 22 digits with valid check digits');
const json = z.record(z.string(), z.unknown());
/**
 * A body as sent or answered (an event's, a remembered response's) holds a VA payment's metadata at most 6 levels down
 * (a remembered redelivery answer: data, attempts, one, request, body, payload), so it nests at most 8 more than that.
 */
const bodyDepth = <T extends z.ZodType>(schema: T) =>
  schema.refine((value) => nestsAtMost(value, MAX_JSON_DEPTH + 8), `must nest at most ${MAX_JSON_DEPTH + 8} levels deep`);
/** A create schema's field as a record holds it: null when absent, never left out. */
const created = <T extends z.ZodType>(field: z.ZodOptional<z.ZodNullable<T>>) => field.unwrap();
const payments = createVaPaymentSchema.shape;
const clients = createClientSchema.shape;
const url = httpUrl.nullable();

const hubId = z.number().int().min(1).max(Number.MAX_SAFE_INTEGER);

const hub = z.strictObject({
  id: hubId,
  name: hubPatchSchema.shape.name.unwrap(),
  brand: hubPatchSchema.shape.brand.unwrap(),
  dedicated_client_cvus_enabled: z.boolean(),
  cvuProvisioning: z.enum(CVU_PROVISIONINGS),
  collectionCvu: cvu,
  collectionAlias: text,
}) satisfies z.ZodType<Hub>;

const poolCvu = z.strictObject({
  cvu,
  alias: text,
  vaPaymentId: id.nullable(),
  releasedAt: time.nullable(),
}) satisfies z.ZodType<PoolCvu>;

const cashIn = z.strictObject({
  operationId: text,
  transferId: id,
  total: positive,
  taxes: nonNegative,
  incomingAmount: positive,
  receivedAt: time,
});

const vaPayment = z.strictObject({
  id,
  status: z.enum(VA_PAYMENT_STATUSES),
  lockMode: z.enum(['time', 'amount', 'amount_and_time']),
  amount: positive.nullable(),
  currency: z.literal('ARS'),
  ttlSeconds: z.number().int().min(1).max(28800),
  expiresAt: time,
  cvu,
  alias: text,
  clientId: id.nullable(),
  clientTaxId: created(payments.clientTaxId),
  clientName: created(payments.clientName),
  callbackUrl: created(payments.callbackUrl),
  successUrl: created(payments.successUrl),
  failureUrl: created(payments.failureUrl),
  externalReference: created(payments.externalReference),
  metadata: created(payments.metadata).unwrap(),
  paymentHubId: hubId,
  totalReceived: received,
  receivedAmount: received,
  cashIns: z.array(cashIn),
  createdAt: time,
  updatedAt: time,
  completedAt: time.nullable(),
  cancelledAt: time.nullable(),
  expiredAt: time.nullable(),
}) satisfies z.ZodType<VaPayment>;

const transfer = z.strictObject({
  id,
  operationId: text,
  to: text,
  cvu: text,
  total: positive,
  taxes: nonNegative,
  // A payer's name and tax id have the bounds of a payment's client's (a transfer's `from` has the same).
  from: z
    .strictObject({ name: created(payments.clientName).unwrap().optional(), taxId: created(payments.clientTaxId).unwrap().optional(), cbu: text.optional() })
    .nullable(),
  outcome: z.enum(['credited', 'returned']),
  reason: text.nullable(),
  target: z.strictObject({ type: z.enum(['va_payment', 'client']), id }).nullable(),
  eventIds: z.array(id),
  createdAt: time,
}) satisfies z.ZodType<Transfer>;

const event = z.strictObject({
  id,
  eventType: z.enum(EVENT_TYPES),
  vaPaymentId: id.nullable(),
  clientId: id.nullable(),
  body: bodyDepth(json),
  url,
  droppedReason: text.nullable(),
  createdAt: time,
}) satisfies z.ZodType<SandboxEvent>;

const attempt = z.strictObject({
  n: z.number().int().min(1),
  startedAt: time,
  durationMs: z.number().min(0),
  responseStatus: z.number().int().nullable(),
  responseBody: text.nullable(),
  error: z.enum(['timeout', 'connection_refused', 'connection_reset', 'redirect', 'http_status', 'network']).nullable(),
  errorMessage: text.nullable(),
  forwardedTo: text.nullable().optional(),
  fault: z.enum(['duplicate']).nullable().optional(),
}) satisfies z.ZodType<Attempt>;

const delivery = z.strictObject({
  id,
  eventId: id,
  eventType: z.enum(EVENT_TYPES),
  url,
  status: z.enum(DELIVERY_STATUSES),
  reason: text.nullable(),
  attempts: z.array(attempt),
  nextAttemptAt: time.nullable(),
  redeliveryOf: id.nullable(),
  redeliverTo: url.optional(),
  attemptsBefore: z.number().int().min(0).optional(),
  createdAt: time,
  updatedAt: time,
}) satisfies z.ZodType<Delivery>;

const idempotencyRecord = z.strictObject({
  fingerprint: text,
  status: z.number().int(),
  body: bodyDepth(z.unknown()),
  createdAt: time,
}) satisfies z.ZodType<IdempotencyRecord>;

const client = z.strictObject({
  id,
  paymentHubId: hubId,
  name: clients.name,
  taxId: clients.taxId,
  cashinCallbackUrl: created(clients.cashinCallbackUrl),
  emails: created(clients.emails).unwrap(),
  phones: created(clients.phones).unwrap(),
  aliasPrefixHint: created(clients.aliasPrefixHint),
  aliasSuffixHint: created(clients.aliasSuffixHint),
  externalReference: created(clients.externalReference),
  metadata: created(clients.metadata).unwrap(),
  cvu: cvu.nullable(),
  alias: text.nullable(),
  cvuStatus: z.enum(CVU_STATUSES),
  cvuReadyAt: time.nullable(),
  createdAt: time,
  updatedAt: time,
}) satisfies z.ZodType<Client>;

const entry = z.strictObject({
  id,
  clientId: id,
  entryType: z.enum(ENTRY_TYPES),
  amount: cents,
  currency: z.literal('ARS'),
  description: created(debitSchema.shape.description),
  operationId: text.nullable(),
  paymentId: id.nullable(),
  invoiceId: id.nullable(),
  sourceType: z.enum([...SOURCE_TYPES, ...(Object.keys(LEGACY_SOURCE_TYPES) as LegacySourceType[])]),
  createdAt: time,
}) satisfies z.ZodType<Entry>;

const invoice = z.strictObject({
  id,
  clientId: id,
  invoiceNumber: text,
  invoiceType: z.enum(INVOICE_TYPES),
  sellerTaxId: text.nullable(),
  sellerName: text.nullable(),
  buyerTaxId: text,
  buyerName: text,
  subtotalNet: nonNegative.nullable(),
  vatAmount: nonNegative.nullable(),
  otherTaxes: nonNegative.nullable(),
  totalAmount: positive,
  allocated: nonNegative,
  currency: z.literal('ARS'),
  issuedAt: time,
  dueAt: time.nullable(),
  paymentStatus: z.enum(PAYMENT_STATUSES),
  paymentTerms: text.nullable(),
  observations: text.nullable(),
  createdAt: time,
  updatedAt: time,
}) satisfies z.ZodType<Invoice>;

/** An invoice as releases before 0.2 exported it: the account reads it as an `Invoice` (`normalizeAccount`). */
const legacyInvoice = z.strictObject({
  id,
  clientId: id,
  total_amount: positive,
  currency: z.literal('ARS'),
  description: text.nullable(),
  dueDate: text.nullable(),
  status: z.enum(['issued', 'paid', 'cancelled']),
  externalReference: text.nullable(),
  createdAt: time,
  updatedAt: time,
}) satisfies z.ZodType<LegacyInvoice>;

/** An invoice of this release, or one of 0.1 (it has `total_amount`): checked by its own release's schema, naming each field. */
const invoiceOfAnyRelease = z.unknown().transform((value, ctx): Invoice | LegacyInvoice => {
  const result = (typeof value === 'object' && value !== null && 'total_amount' in value ? legacyInvoice : invoice).safeParse(value);
  if (result.success) return result.data;
  for (const issue of result.error.issues) ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
  return z.NEVER;
});

const table = <T extends z.ZodType>(record: T) => z.record(z.string(), record);

/** The account's records, without its clock offset (the export's `exportedAt` stands for it). */
export const exportedAccount = z.strictObject({
  hubs: table(hub),
  pool: table(poolCvu),
  vaPayments: table(vaPayment),
  transfers: table(transfer),
  events: table(event),
  deliveries: table(delivery),
  idempotency: table(idempotencyRecord),
  clients: table(client),
  entries: table(entry),
  invoices: table(invoiceOfAnyRelease),
});
