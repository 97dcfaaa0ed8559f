import { push, type AccountContext } from './account-context.js';
import { newDelivery } from './deliveries.js';
import type { DeliveryLog } from './delivery-log.js';
import { fromCents } from './money.js';
import { newestFirst, paginate } from './pagination.js';
import { listEventsQuery, parse } from './schemas.js';
import type { SandboxEvent, VaPayment } from './state.js';
import type { Index, Indexes } from './store.js';
import * as va from './va-payment.js';
import { eventView } from './views.js';

/**
 * Events: what the service raises for a VA payment or a client, each with the exact body a
 * receiver gets and where it is routed, and its first delivery.
 */
export class Events {
  /** The events of each VA payment and client, oldest first. */
  private readonly bySource: Index<string, string[]>;

  constructor(
    private readonly ctx: AccountContext,
    indexes: Indexes,
    private readonly log: DeliveryLog,
  ) {
    this.bySource = indexes.index('eventsBySource');
  }

  /** Indexes the events of an account whose indexes were not kept. */
  build(): void {
    for (const event of Object.values(this.ctx.state.events)) this.index(event);
  }

  private index(event: SandboxEvent): void {
    const source = event.vaPaymentId ?? event.clientId;
    if (source !== null) push(this.bySource, source, event.id);
  }

  /** Re-indexes an event changed after the kept indexes were taken (see `Indexes.since`): a new one is indexed. */
  reindex(before: SandboxEvent | undefined, after: SandboxEvent | undefined): void {
    if (!before && after) this.index(after);
  }

  /** The ids of a VA payment's or client's events, oldest first. */
  of(source: string): readonly string[] {
    return this.bySource.get(source) ?? [];
  }

  listEvents(query: Record<string, string>) {
    const q = parse(listEventsQuery, query, 'query');
    const source = (q.vaPaymentId ?? q.clientId)?.toLowerCase();
    const { events } = this.ctx.state;
    const matches =
      source === undefined
        ? newestFirst(events)
        : this.of(source)
            .map((id) => events[id]!)
            .filter((e) => q.clientId === undefined || e.clientId === q.clientId.toLowerCase())
            .reverse();
    return paginate(matches, q, (event) => eventView(event, this.log.of(event.id)));
  }

  /**
   * Raises a VA payment's event. `view` is the payment as its endpoint answers it: `created` and `cancelled` carry
   * it, with a delivery summary that already counts this event.
   */
  raiseVaEvent(payment: VaPayment, draft: va.VaEventDraft, view: () => unknown): SandboxEvent {
    const id = this.ctx.uuid();
    const createdAt = this.ctx.now();
    const { cashIn } = draft;
    const payload = cashIn
      ? {
          vaPaymentId: payment.id,
          operationId: cashIn.operationId,
          incomingAmount: fromCents(cashIn.incomingAmount),
          total: fromCents(cashIn.total),
          totalWithoutTaxes: fromCents(cashIn.incomingAmount),
          taxes: fromCents(cashIn.taxes),
          receivedAmount: fromCents(payment.receivedAmount),
          receivedAt: cashIn.receivedAt,
          remainingAmount: fromCents(va.remainingAmount(payment)),
        }
      : null;
    const body = { eventId: id, vaPaymentId: payment.id, eventType: draft.eventType, status: payment.status, payload, createdAt };
    const event = { id, eventType: draft.eventType, vaPaymentId: payment.id, clientId: null, body, ...va.route(payment, draft.eventType), createdAt };
    return this.raise(event, cashIn ? undefined : view);
  }

  /**
   * Records an event and its first delivery (before any attempt, so a restart still sends it).
   * `payload`, when given, is computed once both are stored.
   */
  raise(event: SandboxEvent, payload?: () => unknown): SandboxEvent {
    this.ctx.put('events', event.id, event);
    this.index(event);
    const delivery = newDelivery(event, this.ctx.uuid(), event.createdAt);
    this.log.store(delivery);
    if (payload) event.body.payload = payload();
    this.ctx.notify({ type: 'event', account: this.ctx.key, event: eventView(event, [delivery]) });
    return event;
  }
}
