import { z } from 'zod';
import { type Cents, fromCents } from '../conventions/index.js';
import { entryViewSchema } from './client-view.js';
import {
  ATTEMPT_ERRORS,
  type CallbackDeliverySummary,
  CVU_PROVISIONINGS,
  DELIVERY_STATUSES,
  type Delivery,
  EVENT_TYPES,
  type Hub,
  type SandboxEvent,
  type SentEvent,
  type Transfer,
} from './state.js';
import { ars, isoTime, type ShowsEvery, uuid } from './view-fields.js';

export * from './client-view.js';
export { type VaPaymentView, vaPaymentObjectSchema, vaPaymentShown, vaPaymentView } from './va-payment.js';

/**
 * What the API returns: the stored records with money as ARS numbers. Each view is a zod schema (strict: a field the
 * function adds without its schema fails to compile) and a function typed by it; the OpenAPI document's answers and
 * the typed client are made from the same schemas.
 */

export type { CallbackDeliverySummary };

export const hubViewSchema = z.strictObject({
  id: z.number().int(),
  name: z.string(),
  brand: z.string(),
  dedicated_client_cvus_enabled: z.boolean(),
  cvuProvisioning: z.enum(CVU_PROVISIONINGS),
  collectionCvu: z.string(),
  collectionAlias: z.string(),
});
export type HubView = z.output<typeof hubViewSchema>;
export const hubShown: ShowsEvery<Hub, HubView> = true;

export function hubView(hub: Hub): HubView {
  return {
    id: hub.id,
    name: hub.name,
    brand: hub.brand,
    dedicated_client_cvus_enabled: hub.dedicated_client_cvus_enabled,
    cvuProvisioning: hub.cvuProvisioning,
    collectionCvu: hub.collectionCvu,
    collectionAlias: hub.collectionAlias,
  };
}

export const transferViewSchema = z.strictObject({
  id: uuid,
  operationId: z.string(),
  to: z.string().describe('The CVU or alias the transfer named'),
  cvu: z.string(),
  total: ars,
  taxes: ars,
  netAmount: ars,
  from: z
    .strictObject({ name: z.string().optional(), taxId: z.string().optional(), cbu: z.string().optional() })
    .nullable(),
  outcome: z.enum(['credited', 'returned']),
  reason: z.string().nullable(),
  target: z.strictObject({ type: z.enum(['va_payment', 'client']), id: uuid }).nullable(),
  eventIds: z.array(uuid),
  createdAt: isoTime,
});
export type TransferView = z.output<typeof transferViewSchema>;
export const transferShown: ShowsEvery<Transfer, TransferView> = true;

export function transferView(transfer: Transfer): TransferView {
  return {
    id: transfer.id,
    operationId: transfer.operationId,
    to: transfer.to,
    cvu: transfer.cvu,
    total: fromCents(transfer.total),
    taxes: fromCents(transfer.taxes),
    netAmount: fromCents(transfer.total - transfer.taxes),
    from: transfer.from,
    outcome: transfer.outcome,
    reason: transfer.reason,
    target: transfer.target,
    eventIds: transfer.eventIds,
    createdAt: transfer.createdAt,
  };
}

export const deliveryViewSchema = z.strictObject({
  id: uuid,
  eventId: uuid,
  eventType: z.enum(EVENT_TYPES),
  vaPaymentId: uuid.nullable().describe('The VA payment the event is about (null for a client cash-in)'),
  clientId: uuid.nullable().describe('The client the event is about, if any'),
  url: z.string().nullable(),
  forwardedTo: z
    .string()
    .nullable()
    .describe('Where the last attempt went instead of `url` (forwarding), or where a redelivery was asked to go'),
  status: z.enum(DELIVERY_STATUSES),
  reason: z.string().nullable(),
  attempts: z.number().int().describe('How many attempts were made'),
  lastResponseStatus: z.number().int().nullable(),
  lastError: z.enum(ATTEMPT_ERRORS).nullable(),
  nextAttemptAt: isoTime.nullable(),
  redeliveryOf: uuid.nullable(),
  createdAt: isoTime,
  updatedAt: isoTime,
});
export type DeliveryView = z.output<typeof deliveryViewSchema>;
/** Shown but where a redelivery was asked to go (`forwardedTo` tells) and the attempts an import came with. */
export const deliveryShown: ShowsEvery<Delivery, DeliveryView, 'redeliverTo' | 'attemptsBefore'> = true;

/** A delivery as lists show it, with whose its event is (`event`: the delivery's). */
export function deliveryView(delivery: Delivery, event: Pick<SandboxEvent, 'vaPaymentId' | 'clientId'>): DeliveryView {
  const last = delivery.attempts.at(-1);
  return {
    id: delivery.id,
    eventId: delivery.eventId,
    eventType: delivery.eventType,
    vaPaymentId: event.vaPaymentId,
    clientId: event.clientId,
    url: delivery.url,
    forwardedTo: last ? (last.forwardedTo ?? null) : (delivery.redeliverTo ?? null),
    status: delivery.status,
    reason: delivery.reason,
    attempts: delivery.attempts.length,
    lastResponseStatus: last?.responseStatus ?? null,
    lastError: last?.error ?? null,
    nextAttemptAt: delivery.nextAttemptAt,
    redeliveryOf: delivery.redeliveryOf,
    createdAt: delivery.createdAt,
    updatedAt: delivery.updatedAt,
  };
}

export const eventViewSchema = z.strictObject({
  id: uuid,
  eventType: z.enum(EVENT_TYPES),
  vaPaymentId: uuid.nullable(),
  clientId: uuid.nullable(),
  url: z.string().nullable().describe('Where the event was routed; null when it was dropped'),
  droppedReason: z.string().nullable(),
  body: z.record(z.string(), z.unknown()).describe('The callback body (see `webhooks`)'),
  createdAt: isoTime,
  deliveries: z.array(deliveryViewSchema),
});
export type EventView = z.output<typeof eventViewSchema>;
export interface Balance {
  totalCashIn: Cents;
  totalCashOut: Cents;
  totalInvoiced: Cents;
  balance: Cents;
  /** What allocations applied to invoices: cash in less cash out less this is what is left to allocate. */
  allocated: Cents;
}

/** Shown but what its body is rendered from (the body shows it). */
export const eventShown: ShowsEvery<SandboxEvent, EventView, 'callbackDelivery' | 'cashIn' | 'deliveryStored'> = true;

export function eventView(event: SentEvent, deliveries: Delivery[]): EventView {
  return {
    id: event.id,
    eventType: event.eventType,
    vaPaymentId: event.vaPaymentId,
    clientId: event.clientId,
    url: event.url,
    droppedReason: event.droppedReason,
    body: event.body,
    createdAt: event.createdAt,
    deliveries: deliveries.map((delivery) => deliveryView(delivery, event)),
  };
}

export const balanceViewSchema = z.strictObject({
  clientId: uuid,
  currency: z.literal('ARS'),
  totalCashIn: ars,
  totalCashOut: ars,
  totalInvoiced: ars,
  balance: ars.describe('totalCashIn - totalCashOut - totalInvoiced'),
});
export type BalanceView = z.output<typeof balanceViewSchema>;

export function balanceView(clientId: string, balance: Balance): BalanceView {
  return {
    clientId,
    currency: 'ARS',
    totalCashIn: fromCents(balance.totalCashIn),
    totalCashOut: fromCents(balance.totalCashOut),
    totalInvoiced: fromCents(balance.totalInvoiced),
    balance: fromCents(balance.balance),
  };
}

/** Answers of the sandbox's own endpoints that are not records (the functions returning them are typed elsewhere). */

export const paginationSchema = z.strictObject({
  page: z.number().int(),
  limit: z.number().int(),
  total: z.number().int(),
  totalPages: z.number().int(),
});

/** `GET /api/v1/clients/{id}/transactions`: the one list whose real shape keeps its page inside `data`. */
export const transactionsViewSchema = z.strictObject({
  transactions: z.array(entryViewSchema),
  pagination: paginationSchema,
});
export type TransactionsView = z.output<typeof transactionsViewSchema>;

export const clockViewSchema = z.strictObject({
  now: isoTime,
  offsetSeconds: z.number().describe('How far the sandbox clock runs ahead of real time'),
});
export type ClockView = z.output<typeof clockViewSchema>;

export const forwardingViewSchema = z.strictObject({
  url: z.string().nullable().describe('null: off'),
  events: z.array(z.enum(EVENT_TYPES)).nullable().describe('The event types forwarded; null: every one'),
  since: isoTime.nullable(),
});
export type ForwardingView = z.output<typeof forwardingViewSchema>;

const attemptSchema = z.strictObject({
  n: z.number().int(),
  startedAt: isoTime,
  durationMs: z.number(),
  responseStatus: z.number().int().nullable(),
  responseBody: z.string().nullable().describe('The first 2 KiB of the response body'),
  error: z.enum(ATTEMPT_ERRORS).nullable(),
  errorMessage: z.string().nullable(),
  forwardedTo: z.string().nullable(),
  fault: z.literal('duplicate').nullable().describe("An extra send the account's delivery faults asked for"),
  request: z.strictObject({
    method: z.literal('POST'),
    url: z.string().nullable(),
    headers: z.record(z.string(), z.string()),
    body: z.record(z.string(), z.unknown()),
  }),
});

/** `GET /sandbox/v1/deliveries/{id}`: the delivery with its event, the request it sends and every attempt. */
export const deliveryDetailSchema = z.strictObject({
  ...deliveryViewSchema.shape,
  event: z.strictObject({
    id: uuid,
    eventType: z.enum(EVENT_TYPES),
    vaPaymentId: uuid.nullable(),
    clientId: uuid.nullable(),
  }),
  request: attemptSchema.shape.request,
  attempts: z.array(attemptSchema),
});
export type DeliveryDetail = z.output<typeof deliveryDetailSchema>;

const countsSchema = z.record(z.string(), z.number().int()).describe('Records of each kind');

/** `POST /sandbox/v1/import`: what was imported, or with `?dryRun=1` what the file holds. */
export const importResultSchema = z.union([
  z.strictObject({ imported: z.literal(true), clock: clockViewSchema, counts: countsSchema }),
  z.strictObject({ imported: z.literal(false), exportedAt: isoTime, counts: countsSchema }),
]);
export type ImportResult = z.output<typeof importResultSchema>;

export const releasedSchema = z.strictObject({
  released: z.number().int().describe('How many held deliveries were sent'),
});
export const resetSchema = z.strictObject({ reset: z.literal(true) });
export const healthSchema = z.strictObject({
  status: z.literal('ok'),
  version: z.string(),
  keepDays: z.number().nullable().describe('`start --keep`, or null'),
  bufferBudget: z
    .strictObject({
      used: z.number().int().describe('Bytes held for clients now: unread answers and request bodies under way'),
      limit: z.number().int().describe('`start --buffer-budget`, in bytes'),
      heldConnections: z.number().int().describe('Connections `hang` API fault rules hold now'),
      heldConnectionsLimit: z.number().int().describe('How many they may hold at once'),
    })
    .optional()
    .describe('What the server holds for clients and its bound (absent in process)'),
});
