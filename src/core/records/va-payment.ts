import { z } from 'zod';
import { MAX_CENTS, type Cents } from '../money.js';
import { cvu, hubId, httpUrl, id, metadata, nonNegative, positive, taxId, text, time } from './fields.js';

/** A VA payment (contract part 2) as stored: the one declaration its type, export form and recording come from. */

const vaPaymentStatus = z.enum(['waiting', 'underpaid', 'completed', 'overpaid', 'expired', 'cancelled']);
export type VaPaymentStatus = z.infer<typeof vaPaymentStatus>;
export const VA_PAYMENT_STATUSES: VaPaymentStatus[] = [...vaPaymentStatus.options];
export const ACTIVE_STATUSES: VaPaymentStatus[] = ['waiting', 'underpaid'];

export const LOCK_MODES = ['time', 'amount', 'amount_and_time'] as const;
export type LockMode = (typeof LOCK_MODES)[number];

export const cashInRecord = z.strictObject({
  operationId: text(),
  transferId: id,
  total: positive,
  taxes: nonNegative,
  incomingAmount: positive,
  receivedAt: time,
});
export type CashIn = z.infer<typeof cashInRecord>;

/** A VA payment's sums: below its amount until one transfer (at most MAX_CENTS) ends it. */
const received = z.number().int('must be whole cents').min(0, 'must be 0 or more').max(2 * MAX_CENTS);

export const vaPaymentRecord = z.strictObject({
  id,
  status: vaPaymentStatus,
  lockMode: z.enum(LOCK_MODES),
  amount: positive.nullable(),
  currency: z.literal('ARS'),
  ttlSeconds: z.number().int().min(1).max(28800),
  expiresAt: time,
  cvu,
  alias: text(),
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
 * The fields the lifecycle changes (`changed` in va-payment.ts takes no other); every other field is kept as the
 * payment was made. A `created` body is rendered from the payment with these at their values on creation.
 */
export const CHANGING = ['status', 'totalReceived', 'receivedAmount', 'cashIns', 'updatedAt', 'completedAt', 'cancelledAt', 'expiredAt'] as const;
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
