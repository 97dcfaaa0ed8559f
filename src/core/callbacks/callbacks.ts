import { z } from 'zod';
import {
  ars,
  type EventType,
  isoTime,
  uuid,
  VA_PAYMENT_STATUSES,
  type VaEventType,
  vaPaymentObjectSchema,
  vaPaymentView,
} from '../records/index.js';
import { createVaPayment } from '../va-payments/index.js';

export { vaPaymentObjectSchema };

/**
 * The callback bodies the sandbox sends (spec 6.1 and 6.2, contract part 4), as zod schemas: the OpenAPI document's
 * `webhooks` are made from them, the package's `VaCallback` and `ClientCashinCallback` types are inferred from them,
 * and the tests parse every body a receiver gets with them. Strict, so a field added to a body without its schema
 * fails there.
 */

/** The payload of the events a transfer raises (spec 6.1): `receivedAmount` and `remainingAmount` are the payment's totals after it. */
const transferPayloadSchema = z.strictObject({
  vaPaymentId: uuid,
  operationId: z.string(),
  incomingAmount: ars.describe('net amount received after taxes; equals totalWithoutTaxes'),
  total: ars.describe('gross amount before taxes'),
  totalWithoutTaxes: ars,
  taxes: ars.describe('total - taxes = incomingAmount'),
  receivedAmount: ars.describe("the payment's net amount credited so far"),
  receivedAt: isoTime,
  remainingAmount: ars.describe('still pending; 0 when fully paid'),
});

const vaCallback = <T extends VaEventType, P extends z.ZodType>(eventType: T, payload: P) =>
  z.strictObject({
    eventId: uuid,
    vaPaymentId: uuid,
    eventType: z.literal(eventType),
    status: z.enum(VA_PAYMENT_STATUSES).describe('the VA payment status'),
    payload,
    createdAt: isoTime,
  });

/** Each VA event's body (spec 6.1), by `eventType`. */
export const VA_CALLBACK_SCHEMAS = {
  created: vaCallback('created', vaPaymentObjectSchema),
  cash_in_received: vaCallback('cash_in_received', transferPayloadSchema),
  succeeded: vaCallback('succeeded', transferPayloadSchema),
  underpaid: vaCallback('underpaid', transferPayloadSchema),
  overpaid: vaCallback('overpaid', transferPayloadSchema),
  failed: vaCallback('failed', vaPaymentObjectSchema),
  cancelled: vaCallback('cancelled', vaPaymentObjectSchema),
} as const;

/** Any VA callback body, told apart by `eventType`. */
export const vaCallbackSchema = z.discriminatedUnion(
  'eventType',
  Object.values(VA_CALLBACK_SCHEMAS) as [
    (typeof VA_CALLBACK_SCHEMAS)[VaEventType],
    ...(typeof VA_CALLBACK_SCHEMAS)[VaEventType][],
  ],
);

/** The client cash-in body (spec 6.2). */
export const clientCashinCallbackSchema = z.strictObject({
  eventId: uuid,
  clientId: uuid,
  eventType: z.literal('client.cashin'),
  taxId: z.string(),
  amount: ars.describe('net amount credited after taxes'),
  total: ars.describe('gross amount before taxes'),
  totalWithoutTaxes: ars,
  taxes: ars.describe('total - taxes = amount'),
  currency: z.literal('ARS'),
  cvu: z.string(),
  alias: z.string(),
  operationId: z.string(),
  createdAt: isoTime,
});

/** A VA callback body: a union discriminated by `eventType`. */
export type VaCallback = z.output<typeof vaCallbackSchema>;
export type ClientCashinCallback = z.output<typeof clientCashinCallbackSchema>;

/** The schema of each callback kind's body. */
export const CALLBACK_SCHEMAS: Record<EventType, z.ZodType> = {
  ...VA_CALLBACK_SCHEMAS,
  'client.cashin': clientCashinCallbackSchema,
};

/** When each callback is sent and where it goes (spec 6.1 and 6.2): the reference's words, in the OpenAPI document too. */
export const CALLBACK_REFERENCE: Record<EventType, { sent: string; routed: string }> = {
  created: {
    sent: 'the VA payment is created; the payload is the create response',
    routed: 'callbackUrl (dropped under successUrl/failureUrl)',
  },
  cash_in_received: {
    sent: 'a transfer arrived and was credited to the VA payment',
    routed: 'callbackUrl (dropped under successUrl/failureUrl)',
  },
  succeeded: { sent: 'a transfer completed the payment (paid in full)', routed: 'callbackUrl, or successUrl' },
  underpaid: {
    sent: 'a transfer left the payment short of its amount',
    routed: 'callbackUrl, or successUrl if the payment names a client, else failureUrl',
  },
  overpaid: {
    sent: 'a transfer took the payment past its amount',
    routed: 'callbackUrl, or successUrl if the payment names a client, else failureUrl',
  },
  failed: {
    sent: 'the VA payment expired before it was paid; the payload is the expired payment',
    routed: 'callbackUrl, or failureUrl',
  },
  cancelled: {
    sent: 'the integrator cancelled the VA payment; the payload is the cancel response',
    routed: 'callbackUrl, or failureUrl',
  },
  'client.cashin': {
    sent: "a transfer was credited to a client's dedicated CVU",
    routed: "the client's cashinCallbackUrl",
  },
};

const PAYMENT_ID = '6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b';
const CREATED_AT = '2026-03-02T14:05:09.120Z';
const EXPIRES_AT = '2026-03-02T14:35:09.120Z';
const PAID_AT = '2026-03-02T14:07:41.503Z';

/**
 * A VA payment as the API answers it: the `created` example's payload, and the OpenAPI document's example. Made as
 * a request makes one, so a field the request does not give is null here with no line of its own.
 */
export const examplePayment = vaPaymentView(
  createVaPayment(
    {
      paymentHubId: 123,
      currency: 'ARS',
      lockMode: 'amount_and_time',
      amount: 500_000,
      ttlSeconds: 1800,
      callbackUrl: 'https://merchant.example/webhooks/va',
      externalReference: 'order-1042',
      metadata: { orderId: 1042 },
    },
    {
      id: PAYMENT_ID,
      cvu: '0000999900000012345678',
      alias: 'CERRO.LIMON.ESTEPA',
      now: CREATED_AT,
      expiresAt: EXPIRES_AT,
    },
  ).payment,
  {
    events: 1,
    delivered: 0,
    pending: 1,
    retrying: 0,
    failed: 0,
    dropped: 0,
    held: 0,
    lastEventType: 'created',
    lastAttemptAt: null,
  },
);

const transferPayload = (total: number, taxes: number, remainingAmount: number) => ({
  vaPaymentId: PAYMENT_ID,
  operationId: 'op_7c1e5a90b2d34f6e8a1b2c3d',
  incomingAmount: total - taxes,
  total,
  totalWithoutTaxes: total - taxes,
  taxes,
  receivedAmount: total - taxes,
  receivedAt: PAID_AT,
  remainingAmount,
});

/** Each example its own eventId: every event has one, the same on all its attempts. */
const EXAMPLE_EVENT_IDS: Record<VaEventType, string> = {
  created: '0b8e4f2c-1a3d-4e5f-9a6b-7c8d9e0f1a2b',
  cash_in_received: '1c9f5a3d-2b4e-4f60-8b7c-8d9e0f1a2b3c',
  succeeded: '2da06b4e-3c5f-4a71-9c8d-9e0f1a2b3c4d',
  underpaid: '3eb17c5f-4d60-4b82-8d9e-0f1a2b3c4d5e',
  overpaid: '4fc28d60-5e71-4c93-9e0f-1a2b3c4d5e6f',
  failed: '50d39e71-6f82-4da4-8f1a-2b3c4d5e6f70',
  cancelled: '61e4af82-7093-4eb5-9a2b-3c4d5e6f7081',
};

const vaExample = (
  eventType: VaEventType,
  status: (typeof VA_PAYMENT_STATUSES)[number],
  payload: unknown,
  createdAt = PAID_AT,
) => ({
  eventId: EXAMPLE_EVENT_IDS[eventType],
  vaPaymentId: PAYMENT_ID,
  eventType,
  status,
  payload,
  createdAt,
});

/** One example body of each callback kind (each parses with its schema: a test checks). */
export const CALLBACK_EXAMPLES: Record<EventType, unknown> = {
  created: vaExample('created', 'waiting', examplePayment, CREATED_AT),
  cash_in_received: vaExample('cash_in_received', 'completed', transferPayload(5000, 30, 0)),
  succeeded: vaExample('succeeded', 'completed', transferPayload(5000, 30, 0)),
  underpaid: vaExample('underpaid', 'underpaid', transferPayload(3000, 0, 2000)),
  overpaid: vaExample('overpaid', 'overpaid', transferPayload(6000, 0, 0)),
  failed: vaExample(
    'failed',
    'expired',
    {
      ...examplePayment,
      status: 'expired',
      updatedAt: EXPIRES_AT,
      expiredAt: EXPIRES_AT,
      callbackDelivery: {
        ...examplePayment.callbackDelivery,
        events: 2,
        delivered: 1,
        lastEventType: 'failed',
        lastAttemptAt: CREATED_AT,
      },
    },
    EXPIRES_AT,
  ),
  cancelled: vaExample('cancelled', 'cancelled', {
    ...examplePayment,
    status: 'cancelled',
    updatedAt: PAID_AT,
    cancelledAt: PAID_AT,
  }),
  'client.cashin': {
    eventId: '5d6e7f80-91a2-4b3c-8d4e-5f6a7b8c9d0e',
    clientId: '1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d',
    eventType: 'client.cashin',
    taxId: '20-12345678-6',
    amount: 11970,
    total: 12000,
    totalWithoutTaxes: 11970,
    taxes: 30,
    currency: 'ARS',
    cvu: '0000999900000087654321',
    alias: 'ANA.PEREZ.SANDBOX',
    operationId: 'op_2f4a6c8e0b1d3f5a7c9e1b3d',
    createdAt: PAID_AT,
  },
};
