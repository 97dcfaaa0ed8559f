/** The delivery log's queue: the deliveries due for an attempt, in the order rule's order, and when the next is due. */
import { isDamaged, ms, unlessDamaged } from '../conventions/index.js';
import type { Delivery, SandboxEvent } from '../records/index.js';
import type { AccountContext } from '../store/index.js';
import { callbackHeaders } from './deliveries.js';
import { attemptUrl } from './delivery-settings.js';
import { type SentEvent, sent } from './event-body.js';

/** A delivery whose attempt is due: what to send (the event's body, its headers) and where (see `attemptUrl`). */
export interface DueDelivery {
  delivery: Delivery;
  event: SentEvent;
  headers: Record<string, string>;
  url: string;
}

/**
 * What the deliverer reads of the delivery log (`DeliveryLog`): the queue of first attempts (the pending deliveries,
 * in the order made) and the retries, by when they are due.
 */
export class DeliveryQueue {
  constructor(protected readonly ctx: AccountContext) {}

  protected withBody(event: SandboxEvent): SentEvent {
    return sent(event, (id) => this.ctx.get('vaPayments', id));
  }

  /**
   * The deliveries to attempt now: first attempts in the order they were raised (or released), then retries whose time
   * has come.
   * A first attempt waits until every earlier event of the same VA payment or client has had its first attempt, so
   * receivers see them in order. A generator: the deliverer stops reading once its slots are full, so a backlog to
   * a dead receiver costs nothing while every slot waits on it.
   */
  *dueDeliveries(inFlight: ReadonlySet<string>): Generator<DueDelivery> {
    try {
      yield* this.due(inFlight);
    } catch (error) {
      // A damaged delivery row ends the walk there (its reads answer the error); the writes that pumped it go on.
      if (!isDamaged(error)) throw error;
    }
  }

  private *due(inFlight: ReadonlySet<string>): Generator<DueDelivery> {
    const blocked = new Set<string>();
    for (const delivery of this.ctx.records.each('deliveries', { by: 'pending_at' })) {
      const due = unlessDamaged(() => {
        const event = this.ctx.get('events', delivery.eventId)!;
        const source = event.vaPaymentId ?? event.clientId ?? event.id;
        const waiting = blocked.has(source);
        blocked.add(source);
        return waiting || inFlight.has(delivery.id) ? null : this.dueDelivery(delivery, event);
      });
      if (due) yield due;
    }
    const retries = this.ctx.records.each('deliveries', {
      by: 'retry_at',
      where: { retry_at: { to: this.ctx.nowMs() } },
    });
    for (const delivery of retries) {
      const due = inFlight.has(delivery.id)
        ? null
        : unlessDamaged(() => this.dueDelivery(delivery, this.ctx.get('events', delivery.eventId)!));
      if (due) yield due;
    }
  }

  /**
   * How many deliveries wait for their first attempt, those under way aside (`firstsInFlight`: the ids of the first
   * attempts under way, each still pending until its outcome is recorded): the backlog the API is paced by. A count,
   * read from the store's kept counts: it is asked twice a write.
   */
  waitingFirst(firstsInFlight: Iterable<string>): number {
    return Math.max(0, this.ctx.records.count('deliveries', { status: 'pending' }) - [...firstsInFlight].length);
  }

  private dueDelivery(delivery: Delivery, event: SandboxEvent): DueDelivery {
    return {
      delivery,
      event: this.withBody(event),
      headers: callbackHeaders(event),
      url: attemptUrl(delivery, this.ctx.head) ?? '',
    };
  }

  /** When the next retry not under way is due (the account's clock), or null. */
  nextRetryAt(inFlight: ReadonlySet<string>): number | null {
    if (inFlight.size === 0) return this.ctx.records.min('deliveries', 'retry_at') as number | null;
    for (const delivery of this.ctx.records.each('deliveries', { by: 'retry_at' }))
      if (!inFlight.has(delivery.id)) return ms(delivery.nextAttemptAt!);
    return null;
  }
}
