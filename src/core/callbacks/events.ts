import { counting, eventView, listEventsQuery, parse, type SandboxEvent, type VaPayment } from '../records/index.js';
import { type AccountContext, pageOf, type Where } from '../store/index.js';
import * as va from '../va-payments/index.js';
import { newDelivery } from './deliveries.js';
import type { DeliveryLog } from './delivery-log.js';
import { sent } from './event-body.js';

/**
 * Events: what the service raises for a VA payment or a client, each with what its body is made from
 * (`event-body.ts`) and where it is routed, and its first delivery.
 */
export class Events {
  constructor(
    private readonly ctx: AccountContext,
    private readonly log: DeliveryLog,
  ) {}

  /** A VA payment's or client's events, oldest first. */
  of(source: string): SandboxEvent[] {
    return [...this.ctx.records.each('events', { where: { source } })];
  }

  listEvents(query: Record<string, string>) {
    const q = parse(listEventsQuery, query, 'query');
    const source = (q.vaPaymentId ?? q.clientId)?.toLowerCase();
    // Both given: a VA payment's events have no clientId, so only a client's own id names any.
    const clash =
      q.vaPaymentId !== undefined &&
      q.clientId !== undefined &&
      q.vaPaymentId.toLowerCase() !== q.clientId.toLowerCase();
    const where: Where = source === undefined ? {} : { source: clash ? [] : source };
    return pageOf(this.ctx.records, 'events', where, q, (event) => this.view(event));
  }

  /** The event as the API shows it: its body as sent, and its deliveries (a dropped one's included, see `DeliveryLog.of`). */
  private view(event: SandboxEvent) {
    return eventView(
      sent(event, (id) => this.ctx.get('vaPayments', id)),
      this.log.of(event),
    );
  }

  /**
   * Raises a VA payment's event: a transfer's names the cash-in it credited; `cancelled` and `failed` keep the delivery
   * summary they carry.
   */
  raiseVaEvent(payment: VaPayment, draft: va.VaEventDraft): SandboxEvent {
    const event: SandboxEvent = {
      id: this.ctx.uuid(),
      eventType: draft.eventType,
      vaPaymentId: payment.id,
      clientId: null,
      ...va.route(payment, draft.eventType),
      createdAt: this.ctx.now(),
    };
    if (draft.cashIn) event.cashIn = payment.cashIns.indexOf(draft.cashIn);
    else if (draft.eventType !== 'created')
      event.callbackDelivery = counting(this.log.summary(this.of(payment.id)), event);
    return this.raise(event);
  }

  /** Records an event and, unless it is dropped, its first delivery (before any attempt, so a restart still sends it). */
  raise(event: SandboxEvent): SandboxEvent {
    this.ctx.put('events', event.id, event);
    if (event.url !== null) this.log.storeFirst(newDelivery(event, this.ctx.uuid(), event.createdAt));
    this.ctx.notify('event', () => ({ type: 'event', account: this.ctx.key, event: this.view(event) }));
    return event;
  }
}
