import { z } from 'zod';
import { bodyDepth, httpUrl, id, json, text, time } from './fields.js';
import { ATTEMPT_ERRORS, DELIVERY_STATUSES, EVENT_TYPES } from './words.js';

export {
  ATTEMPT_ERRORS,
  type AttemptError,
  DELIVERY_STATUSES,
  EVENT_TYPES,
  type EventType,
  type VaEventType,
} from './words.js';

/** An event the service raises and its deliveries (contract part 4), as stored. */

const eventType = z.enum(EVENT_TYPES);

/** What a VA payment's `callbackDelivery` says: its events and where their deliveries stand. */
export const callbackDeliverySummary = z.strictObject({
  events: z.number().int(),
  delivered: z.number().int(),
  pending: z.number().int(),
  retrying: z.number().int(),
  failed: z.number().int(),
  dropped: z.number().int(),
  held: z.number().int(),
  lastEventType: z.string().nullable(),
  lastAttemptAt: time.nullable(),
});
export type CallbackDeliverySummary = z.infer<typeof callbackDeliverySummary>;

/** The summary of a payment that raised no event yet. */
export const NO_EVENTS: CallbackDeliverySummary = {
  events: 0,
  delivered: 0,
  pending: 0,
  retrying: 0,
  failed: 0,
  dropped: 0,
  held: 0,
  lastEventType: null,
  lastAttemptAt: null,
};

/** A summary that counts one more event, just raised: its delivery pending, or none when it is dropped. */
export function counting(
  summary: CallbackDeliverySummary,
  event: Pick<SandboxEvent, 'eventType' | 'url'>,
): CallbackDeliverySummary {
  const status = event.url === null ? 'dropped' : 'pending';
  return { ...summary, events: summary.events + 1, [status]: summary[status] + 1, lastEventType: event.eventType };
}

const url = httpUrl.nullable();

/**
 * An event and where it is routed, with what its body is made from (`event-body.ts`): a VA event's from its payment,
 * a client's cash-in's the body itself.
 */
export const eventRecord = z.strictObject({
  id,
  eventType,
  vaPaymentId: id.nullable(),
  clientId: id.nullable(),
  /**
   * The body as sent, on a client's cash-in. Absent on VA events, whose body is rendered from their payment (files of
   * earlier releases hold those bodies whole: they are sent as held).
   */
  body: bodyDepth(json).optional(),
  url,
  /** Why the event goes nowhere, when `url` is null: it is `dropped`, and no delivery is stored for it. */
  droppedReason: text().nullable(),
  createdAt: time,
  /** On `cancelled` and `failed`: the payment's delivery summary when the event was raised (the rest of it never changes again). */
  callbackDelivery: callbackDeliverySummary.partial({ held: true }).optional(),
  /** On the events a transfer raises: which of the payment's `cashIns` it credited (its place, from 0). */
  cashIn: z.number().int().min(0).optional(),
  /** A dropped event whose first delivery an earlier release stored (`normalizeAccount`): that one is its first. */
  deliveryStored: z.literal(true).optional(),
});
export type SandboxEvent = z.infer<typeof eventRecord>;

/** An event with the body a receiver gets. */
export type SentEvent = SandboxEvent & { body: Record<string, unknown> };

/** An event as an export holds it: with its body, as every release's files did. */
export const exportedEventRecord = eventRecord
  .omit({ callbackDelivery: true, cashIn: true, deliveryStored: true })
  .extend({ body: bodyDepth(json) });

/**
 * Spec 3.3's statuses, and `held`: a delivery that came with an imported file, never attempted until the user releases
 * it (contract part 5), so an incident's callback URLs are not called from a laptop.
 */
const deliveryStatus = z.enum(DELIVERY_STATUSES);

const attemptError = z.enum(ATTEMPT_ERRORS);

const attemptRecord = z.strictObject({
  n: z.number().int().min(1),
  startedAt: time,
  durationMs: z.number().min(0),
  responseStatus: z.number().int().nullable(),
  /** The first 2 KiB of the response body. */
  responseBody: text().nullable(),
  error: attemptError.nullable(),
  errorMessage: text().nullable(),
  /** Where the attempt went when not to the delivery's `url` (forwarding, or a redelivery to another URL). */
  forwardedTo: text().nullable().optional(),
  /** An extra send asked for by the account's delivery faults (`duplicate`); it changes nothing of the delivery. */
  fault: z.enum(['duplicate']).nullable().optional(),
});
export type Attempt = z.infer<typeof attemptRecord>;

export const deliveryRecord = z.strictObject({
  id,
  eventId: id,
  eventType,
  url,
  status: deliveryStatus,
  reason: text().nullable(),
  attempts: z.array(attemptRecord),
  nextAttemptAt: time.nullable(),
  redeliveryOf: id.nullable(),
  /** The URL a redelivery or a release was asked to go to instead of `url` (this delivery only). */
  redeliverTo: url.optional(),
  /** Attempts made before a release (in the file it was imported with): the policy counts only those after. */
  attemptsBefore: z.number().int().min(0).optional(),
  createdAt: time,
  updatedAt: time,
});
export type Delivery = z.infer<typeof deliveryRecord>;
