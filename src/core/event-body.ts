import type { CallbackDeliverySummary, EventType, SandboxEvent, VaPayment } from './state.js';
import { asCreated } from './va-payment.js';
import { vaPaymentView } from './views.js';

/**
 * What an event keeps of its body, and the body rendered when it is sent, listed, exported or streamed. `created`,
 * `cancelled` and `failed` carry their VA payment as it was when raised (contract part 4), and no copy of it is
 * stored: at `created` the payment was as made (`asCreated`) with that one event, and a payment cancelled or expired
 * never changes again, so only its delivery summary of that instant is kept (`callbackDelivery`).
 */

/** An event with the body a receiver gets. */
export type SentEvent = SandboxEvent & { body: Record<string, unknown> };

/** An event as an export holds it: with its body, as every release's files did. */
export type ExportedEvent = Omit<SentEvent, 'callbackDelivery'>;

export const carriesPayment = (eventType: EventType): boolean => eventType === 'created' || eventType === 'cancelled' || eventType === 'failed';

export const NO_EVENTS: CallbackDeliverySummary = {
  events: 0, delivered: 0, pending: 0, retrying: 0, failed: 0, dropped: 0, lastEventType: null, lastAttemptAt: null,
};

/** A summary that counts one more event, just raised: its delivery pending, or none when it is dropped. */
export function counting(summary: CallbackDeliverySummary, event: Pick<SandboxEvent, 'eventType' | 'url'>): CallbackDeliverySummary {
  const status = event.url === null ? 'dropped' : 'pending';
  return { ...summary, events: summary.events + 1, [status]: summary[status] + 1, lastEventType: event.eventType };
}

/** The event with its body: the one it holds, else its VA payment's as it was (`payments` holds the payment). */
export function sent(event: SandboxEvent, payments: Record<string, VaPayment>): SentEvent {
  if (event.body) return event as SentEvent;
  const payment = payments[event.vaPaymentId!]!;
  const then = event.eventType === 'created' ? asCreated(payment) : payment;
  const callbackDelivery = event.callbackDelivery ?? counting(NO_EVENTS, event);
  const body = { eventId: event.id, vaPaymentId: payment.id, eventType: event.eventType, status: then.status, payload: vaPaymentView(then, callbackDelivery), createdAt: event.createdAt };
  return { ...event, body };
}

/**
 * The event as stored: one carrying its payment whole (an import, a file of an earlier release) without that copy,
 * when rendering it gives the same bytes; else as it is.
 */
export function compacted(event: SandboxEvent, payments: Record<string, VaPayment>): SandboxEvent {
  if (!event.body || !carriesPayment(event.eventType) || event.vaPaymentId === null || !payments[event.vaPaymentId]) return event;
  const { body, ...rest } = event;
  const summary = (body.payload as { callbackDelivery?: CallbackDeliverySummary } | null)?.callbackDelivery;
  const compact = event.eventType === 'created' ? rest : { ...rest, callbackDelivery: summary };
  return JSON.stringify(sent(compact, payments).body) === JSON.stringify(body) ? compact : event;
}
