import { fromCents } from '../conventions/index.js';
import {
  type CallbackDeliverySummary,
  counting,
  NO_EVENTS,
  remainingAmount,
  type SandboxEvent,
  type SentEvent,
  type VaPayment,
  vaPaymentView,
} from '../records/index.js';
import { asCreated, statusAfter } from '../va-payments/index.js';

export type { SentEvent } from '../records/index.js';

/**
 * What an event keeps of its body, and the body rendered when it is sent, listed, exported or streamed. A VA event's
 * body is made from its payment, which keeps what it needs: `created`, `cancelled` and `failed` carry the payment as
 * it was when raised (contract part 4): at `created` it was as made (`asCreated`: the fields its record declares
 * changing at their values on creation, the others never change) with that one event, and a payment cancelled or
 * expired never changes again (`changed` refuses), so only its delivery summary of that instant is kept
 * (`callbackDelivery`); a transfer's events carry the amounts of the cash-in they credited (`cashIn`, the payment's
 * cash-ins never change) and the payment's totals just after it.
 */

/** A VA payment by its id (the account's records, or a file's). */
export type PaymentOf = (id: string) => VaPayment | undefined;

/** The event with its body: the one it holds, else its VA payment's as it was. */
export function sent(event: SandboxEvent, paymentOf: PaymentOf): SentEvent {
  if (event.body) return event as SentEvent;
  const payment = paymentOf(event.vaPaymentId!)!;
  const [status, payload] = event.cashIn === undefined ? carried(event, payment) : credited(payment, event.cashIn);
  return {
    ...event,
    body: {
      eventId: event.id,
      vaPaymentId: payment.id,
      eventType: event.eventType,
      status,
      payload,
      createdAt: event.createdAt,
    },
  };
}

/** `created`, `cancelled`, `failed`: the payment object as it was. */
function carried(event: SandboxEvent, payment: VaPayment) {
  const then = event.eventType === 'created' ? asCreated(payment) : payment;
  // A summary kept by an earlier release has no `held` count: it had none.
  const summary = event.callbackDelivery ? { ...NO_EVENTS, ...event.callbackDelivery } : counting(NO_EVENTS, event);
  return [then.status, vaPaymentView(then, summary)] as const;
}

/** A transfer's events (spec 6.1): the amounts of the cash-in `at`, and the payment's totals just after it. */
function credited(payment: VaPayment, at: number) {
  const cashIn = payment.cashIns[at]!;
  const upTo = payment.cashIns.slice(0, at + 1);
  const totalReceived = upTo.reduce((sum, c) => sum + c.total, 0);
  const receivedAmount = upTo.reduce((sum, c) => sum + c.incomingAmount, 0);
  const payload = {
    vaPaymentId: payment.id,
    operationId: cashIn.operationId,
    incomingAmount: fromCents(cashIn.incomingAmount),
    total: fromCents(cashIn.total),
    totalWithoutTaxes: fromCents(cashIn.incomingAmount),
    taxes: fromCents(cashIn.taxes),
    receivedAmount: fromCents(receivedAmount),
    receivedAt: cashIn.receivedAt,
    remainingAmount: fromCents(remainingAmount({ ...payment, totalReceived })),
  };
  return [statusAfter(payment.amount, totalReceived), payload] as const;
}

/**
 * The event as stored: a VA event holding its body whole (an import, a file of an earlier release) without it, when
 * rendering it gives the same bytes; else as it is.
 */
export function compacted(event: SandboxEvent, paymentOf: PaymentOf): SandboxEvent {
  const payment = event.vaPaymentId === null ? undefined : paymentOf(event.vaPaymentId);
  if (!event.body || !payment) return event;
  const { body, ...rest } = event;
  const payload = body.payload as { callbackDelivery?: CallbackDeliverySummary; operationId?: string } | null;
  const compact: SandboxEvent =
    event.eventType === 'created'
      ? rest
      : event.eventType === 'cancelled' || event.eventType === 'failed'
        ? { ...rest, callbackDelivery: payload?.callbackDelivery }
        : { ...rest, cashIn: payment.cashIns.findIndex((c) => c.operationId === payload?.operationId) };
  if (compact.cashIn === -1) return event;
  return JSON.stringify(sent(compact, paymentOf).body) === JSON.stringify(body) ? compact : event;
}
