import { z } from 'zod';
import { type Cents, fromCents, MAX_CENTS } from '../conventions/index.js';
import { type CallbackDeliverySummary, callbackDeliverySummary } from './event.js';
import { alias, cvu, httpUrl, hubId, id, metadata, nonNegative, positive, taxId, text, time } from './fields.js';
import { csvItems, filter, timeFilter } from './filters.js';
import { ars, isoTime, type ShowsEvery, uuid } from './view-fields.js';
import { VA_PAYMENT_STATUSES, type VaPaymentStatus } from './words.js';

export { VA_PAYMENT_STATUSES, type VaPaymentStatus } from './words.js';

/**
 * A VA payment (contract part 2) as stored, the one declaration its type, export form and recording come from; and as
 * the API answers it, which is also the payload of its `created`, `cancelled` and `failed` callbacks.
 */

const vaPaymentStatus = z.enum(VA_PAYMENT_STATUSES);
export const ACTIVE_STATUSES: VaPaymentStatus[] = ['waiting', 'underpaid'];

/** Whether a payment still waits for money (its CVU or amount locked). */
export const isActive = (payment: VaPayment): boolean => ACTIVE_STATUSES.includes(payment.status);

export const LOCK_MODES = ['time', 'amount', 'amount_and_time'] as const;

const cashInRecord = z.strictObject({
  operationId: text(),
  transferId: id,
  total: positive,
  taxes: nonNegative,
  incomingAmount: positive,
  receivedAt: time,
});
export type CashIn = z.infer<typeof cashInRecord>;

/** A VA payment's sums: below its amount until one transfer (at most MAX_CENTS) ends it. */
const received = z
  .number()
  .int('must be whole cents')
  .min(0, 'must be 0 or more')
  .max(2 * MAX_CENTS);

export const vaPaymentRecord = z.strictObject({
  id,
  status: vaPaymentStatus,
  lockMode: z.enum(LOCK_MODES),
  amount: positive.nullable(),
  currency: z.literal('ARS'),
  ttlSeconds: z.number().int().min(1).max(28800),
  expiresAt: time,
  cvu,
  alias,
  clientId: id.nullable(),
  clientTaxId: taxId.nullable(),
  clientName: text(255).nullable(),
  callbackUrl: httpUrl.nullable(),
  successUrl: httpUrl.nullable(),
  failureUrl: httpUrl.nullable(),
  externalReference: text(255).nullable(),
  metadata,
  paymentHubId: hubId,
  totalReceived: received,
  receivedAmount: received,
  cashIns: z.array(cashInRecord),
  createdAt: time,
  updatedAt: time,
  completedAt: time.nullable(),
  cancelledAt: time.nullable(),
  expiredAt: time.nullable(),
});
export type VaPayment = z.infer<typeof vaPaymentRecord>;

/**
 * The VA payments list's filters (`GET /api/v1/va-payments`), one line each: the query parameter, the lookup column
 * it asks (`COLUMNS`, columns.ts) and its schema; the list query and its OpenAPI parameters come from them.
 */
export const VA_PAYMENT_FILTERS = {
  status: filter('status', csvItems(VA_PAYMENT_STATUSES)),
  clientId: filter('client_id', z.string(), (clientId) => clientId.toLowerCase()),
  clientTaxId: filter('client_tax_id', z.string()),
  externalReference: filter('external_reference', z.string()),
  createdFrom: timeFilter('created_at', 'from'),
  createdTo: timeFilter('created_at', 'to'),
};

/**
 * The fields the lifecycle changes (`changed` in va-payment.ts takes no other); every other field is kept as the
 * payment was made. A `created` body is rendered from the payment with these at their values on creation.
 */
export const CHANGING = [
  'status',
  'totalReceived',
  'receivedAmount',
  'cashIns',
  'updatedAt',
  'completedAt',
  'cancelledAt',
  'expiredAt',
] as const;
export type Changing = (typeof CHANGING)[number];

/** The changing fields' values on creation: a field added to `CHANGING` without one here fails to compile. */
export const atCreation = (payment: Pick<VaPayment, 'createdAt'>): Pick<VaPayment, Changing> => ({
  status: 'waiting',
  totalReceived: 0,
  receivedAmount: 0,
  cashIns: [],
  updatedAt: payment.createdAt,
  completedAt: null,
  cancelledAt: null,
  expiredAt: null,
});

/** What is still to pay: 0 for an open amount, or once paid in full. */
export const remainingAmount = (payment: Pick<VaPayment, 'amount' | 'totalReceived'>): Cents =>
  payment.amount === null ? 0 : Math.max(payment.amount - payment.totalReceived, 0);

/** The VA payment object (contract 2.2): the payload of `created`, `cancelled` and `failed`. */
export const vaPaymentObjectSchema = z.strictObject({
  id: uuid,
  status: z.enum(VA_PAYMENT_STATUSES),
  lockMode: z.enum(LOCK_MODES),
  amount: ars.nullable().describe('null for an open amount'),
  currency: z.literal('ARS'),
  ttlSeconds: z.number().int(),
  expiresAt: isoTime,
  cvu: z.string(),
  alias: z.string(),
  paymentInstructions: z.strictObject({
    cvu: z.string(),
    alias: z.string(),
    holderName: z.string(),
    bankName: z.string(),
    amount: ars.nullable(),
    currency: z.literal('ARS'),
    expiresAt: isoTime,
  }),
  clientId: uuid.nullable(),
  clientTaxId: z.string().nullable(),
  clientName: z.string().nullable(),
  callbackUrl: z.string().nullable(),
  successUrl: z.string().nullable(),
  failureUrl: z.string().nullable(),
  externalReference: z.string().nullable(),
  metadata: z.record(z.string(), z.unknown()),
  paymentHubId: z.number().int(),
  totalReceived: ars,
  receivedAmount: ars,
  remainingAmount: ars,
  cashIns: z.array(
    z.strictObject({
      operationId: z.string(),
      transferId: uuid,
      total: ars,
      taxes: ars,
      incomingAmount: ars,
      totalWithoutTaxes: ars,
      receivedAt: isoTime,
    }),
  ),
  callbackDelivery: callbackDeliverySummary,
  createdAt: isoTime,
  updatedAt: isoTime,
  completedAt: isoTime.nullable(),
  cancelledAt: isoTime.nullable(),
  expiredAt: isoTime.nullable(),
});

export type VaPaymentView = z.output<typeof vaPaymentObjectSchema>;
/** The view shows every field of the record (a type error otherwise). */
export const vaPaymentShown: ShowsEvery<VaPayment, VaPaymentView> = true;

const HOLDER_NAME = 'Sandbox Payments S.A.';
const BANK_NAME = 'Banco Sandbox';

export function vaPaymentView(payment: VaPayment, callbackDelivery: CallbackDeliverySummary): VaPaymentView {
  const amount = payment.amount === null ? null : fromCents(payment.amount);
  return {
    id: payment.id,
    status: payment.status,
    lockMode: payment.lockMode,
    amount,
    currency: payment.currency,
    ttlSeconds: payment.ttlSeconds,
    expiresAt: payment.expiresAt,
    cvu: payment.cvu,
    alias: payment.alias,
    paymentInstructions: {
      cvu: payment.cvu,
      alias: payment.alias,
      holderName: HOLDER_NAME,
      bankName: BANK_NAME,
      amount,
      currency: payment.currency,
      expiresAt: payment.expiresAt,
    },
    clientId: payment.clientId,
    clientTaxId: payment.clientTaxId,
    clientName: payment.clientName,
    callbackUrl: payment.callbackUrl,
    successUrl: payment.successUrl,
    failureUrl: payment.failureUrl,
    externalReference: payment.externalReference,
    metadata: payment.metadata,
    paymentHubId: payment.paymentHubId,
    totalReceived: fromCents(payment.totalReceived),
    receivedAmount: fromCents(payment.receivedAmount),
    remainingAmount: fromCents(remainingAmount(payment)),
    cashIns: payment.cashIns.map((cashIn) => ({
      operationId: cashIn.operationId,
      transferId: cashIn.transferId,
      total: fromCents(cashIn.total),
      taxes: fromCents(cashIn.taxes),
      incomingAmount: fromCents(cashIn.incomingAmount),
      totalWithoutTaxes: fromCents(cashIn.incomingAmount),
      receivedAt: cashIn.receivedAt,
    })),
    callbackDelivery,
    createdAt: payment.createdAt,
    updatedAt: payment.updatedAt,
    completedAt: payment.completedAt,
    cancelledAt: payment.cancelledAt,
    expiredAt: payment.expiredAt,
  };
}
