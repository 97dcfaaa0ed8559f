import { z } from 'zod';
import { fromCents } from '../money.js';
import { callbackDeliverySummary, type CallbackDeliverySummary } from './event.js';
import { LOCK_MODES, remainingAmount, VA_PAYMENT_STATUSES, type VaPayment } from './va-payment.js';
import { ars, isoTime, uuid, type ShowsEvery } from './view-fields.js';

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
