import { push, type AccountContext } from './account-context.js';
import { newDelivery } from './deliveries.js';
import type { DeliveryLog } from './delivery-log.js';
import { counting, sent, type ExportedEvent } from './event-body.js';
import { newestFirst, paginate } from './pagination.js';
import { listEventsQuery, parse } from './schemas.js';
import type { SandboxEvent, VaPayment } from './state.js';
import * as va from './va-payment.js';
import { eventView } from './views.js';

/**
 * Events: what the service raises for a VA payment or a client, each with what its body is made from
 * (`event-body.ts`) and where it is routed, and its first delivery.
 */
export class Events {
  /** The events of each VA payment and client, oldest first. */
  private readonly bySource = new Map<string, string[]>();

  constructor(
    private readonly ctx: AccountContext,
    private readonly log: DeliveryLog,
  ) {}

  /** Indexes the account's events. */
  build(): void {
    for (const event of Object.values(this.ctx.state.events)) this.index(event);
  }

  private index(event: SandboxEvent): void {
    const source = event.vaPaymentId ?? event.clientId;
    if (source !== null) push(this.bySource, source, event.id);
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
    return paginate(matches, q, (event) => this.view(event));
  }

  /** Every event with its body as sent, as the records of an export. */
  exported(): Record<string, ExportedEvent> {
    const { events, vaPayments } = this.ctx.state;
    const exported: Record<string, ExportedEvent> = {};
    for (const event of Object.values(events)) {
      const { id, eventType, vaPaymentId, clientId, body, url, droppedReason, createdAt } = sent(event, vaPayments);
      exported[id] = { id, eventType, vaPaymentId, clientId, body, url, droppedReason, createdAt };
    }
    return exported;
  }

  /** The event as the API shows it: its body as sent, and its deliveries (a dropped one's included, see `DeliveryLog.of`). */
  private view(event: SandboxEvent) {
    return eventView(sent(event, this.ctx.state.vaPayments), this.log.of(event));
  }

  /** Raises a VA payment's event: a transfer's names the cash-in it credited; `cancelled` and `failed` keep the delivery summary they carry. */
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
    else if (draft.eventType !== 'created') event.callbackDelivery = counting(this.log.summary(this.of(payment.id)), event);
    return this.raise(event);
  }

  /** Records an event and, unless it is dropped, its first delivery (before any attempt, so a restart still sends it). */
  raise(event: SandboxEvent): SandboxEvent {
    this.ctx.put('events', event.id, event);
    this.index(event);
    if (event.url === null) this.log.dropped(event);
    else this.log.store(newDelivery(event, this.ctx.uuid(), event.createdAt));
    this.ctx.notify('event', () => ({ type: 'event', account: this.ctx.key, event: this.view(event) }));
    return event;
  }
}
