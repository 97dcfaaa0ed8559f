import { notFound, SandboxError, UUID_PATTERN } from '../conventions/index.js';
import {
  type Attempt,
  type CallbackDeliverySummary,
  type Delivery,
  deliveryView,
  EVENT_TYPES,
  type Faults,
  type Forwarding,
  isDropped,
  listDeliveriesQuery,
  NO_EVENTS,
  parse,
  type SandboxEvent,
} from '../records/index.js';
import { pageFrom } from '../store/index.js';
import {
  callbackHeaders,
  droppedDelivery,
  hold,
  holdRaised,
  newDelivery,
  recordAttempt,
  release,
} from './deliveries.js';
import { DeliveryQueue } from './delivery-queue.js';
import {
  faultsOf,
  faultsSchema,
  forwardingSchema,
  forwardingUrl,
  forwardingView,
  redeliverSchema,
} from './delivery-settings.js';
import type { SentEvent } from './event-body.js';

/**
 * The delivery log: every delivery of every event with its attempts, the order rule's queue of first attempts (the
 * pending deliveries, in the order made), the retries (by when they are due), forwarding and faults. What an attempt
 * means is `deliveries.ts`'s policy. A dropped event has nothing to deliver and no delivery is stored for it: its first
 * delivery, `dropped`, is the event itself, shown under the event's id (`of`), and a redelivery of it to a URL is
 * stored like any other.
 */
export class DeliveryLog extends DeliveryQueue {
  /** Stores a new delivery (before any attempt, so a restart still sends it). */
  store(delivery: Delivery): void {
    this.ctx.put('deliveries', delivery.id, delivery);
  }

  /**
   * Stores a raised event's first delivery: held, or pinned to the forwarding URL (if it forwards that event type),
   * while the account is held (`holdRaised`).
   */
  storeFirst(delivery: Delivery): void {
    this.store(
      this.ctx.head.heldSince ? holdRaised(delivery, forwardingUrl(this.ctx.head, delivery.eventType)) : delivery,
    );
  }

  /** An event's deliveries, oldest first: a dropped event's first is the event itself, under its id (`isDropped`). */
  of(event: SandboxEvent): Delivery[] {
    const stored = [...this.ctx.records.each('deliveries', { where: { event_id: event.id } })];
    return isDropped(event) ? [droppedDelivery(event), ...stored] : stored;
  }

  /** What a VA payment's `callbackDelivery` says of its events: where their deliveries stand. */
  summary(events: readonly SandboxEvent[]): CallbackDeliverySummary {
    const summary = { ...NO_EVENTS };
    for (const event of events) {
      summary.events++;
      summary.lastEventType = event.eventType;
      for (const delivery of this.of(event)) {
        summary[delivery.status]++;
        const startedAt = delivery.attempts.at(-1)?.startedAt;
        if (startedAt && (summary.lastAttemptAt === null || startedAt > summary.lastAttemptAt))
          summary.lastAttemptAt = startedAt;
      }
    }
    return summary;
  }

  /**
   * The deliveries, newest first: the stored ones and the dropped events' first ones (which are events), merged by
   * when they were made, reading only as far as the page.
   */
  listDeliveries(query: Record<string, string>) {
    const q = parse(listDeliveriesQuery, query, 'query');
    const { records } = this.ctx;
    const where = {
      ...(q.status === undefined ? {} : { status: q.status }),
      ...(q.eventType === undefined ? {} : { event_type: q.eventType }),
    };
    const dropped =
      q.status === undefined || q.status.includes('dropped') ? { dropped: q.eventType ?? EVENT_TYPES } : null;
    const stored = records.each('deliveries', { where, descending: true });
    const events =
      dropped === null ? [][Symbol.iterator]() : records.each('events', { where: dropped, descending: true });
    const total = records.count('deliveries', where) + (dropped === null ? 0 : records.count('events', dropped));
    return pageFrom(newestOf(stored, mapped(events, droppedDelivery)), total, q, (delivery) =>
      deliveryView(delivery, this.ctx.get('events', delivery.eventId)!),
    );
  }

  /** How many deliveries the list holds: the stored ones and the dropped events' first ones. */
  count(): number {
    return this.ctx.records.count('deliveries') + this.ctx.records.count('events', { dropped: EVENT_TYPES });
  }

  /** One delivery with every attempt: the request as sent and the response as received. */
  getDelivery(id: string) {
    const delivery = this.delivery(id);
    const event = this.sent(delivery.eventId);
    const request = { method: 'POST', url: delivery.url, headers: callbackHeaders(event), body: event.body };
    return {
      ...deliveryView(delivery, event),
      event: { id: event.id, eventType: event.eventType, vaPaymentId: event.vaPaymentId, clientId: event.clientId },
      request,
      attempts: delivery.attempts.map((attempt) => ({
        ...attempt,
        forwardedTo: attempt.forwardedTo ?? null,
        fault: attempt.fault ?? null,
        request: { ...request, url: attempt.forwardedTo ?? delivery.url },
      })),
    };
  }

  /** A stored delivery, or a dropped event's first (under the event's id: read only when no delivery has the id). */
  private delivery(id: string): Delivery {
    const known = UUID_PATTERN.test(id);
    const stored = known ? this.ctx.get('deliveries', id) : undefined;
    if (stored) return stored;
    const event = known ? this.ctx.get('events', id) : undefined;
    if (event && isDropped(event)) return droppedDelivery(event);
    throw notFound('Delivery', id);
  }

  /** An event with its body as sent. */
  private sent(eventId: string): SentEvent {
    return this.withBody(this.ctx.get('events', eventId)!);
  }

  /** A new delivery of the same event (same eventId), to the event's URL or, for this one delivery, to `{"url"}`. */
  redeliver(id: string, body: unknown) {
    const original = this.delivery(id);
    const { url } = parse(redeliverSchema, body ?? {});
    const event = this.ctx.get('events', original.eventId)!;
    if (event.url === null && url === undefined) {
      throw new SandboxError(
        'INVALID_STATE',
        `Event ${event.id} was dropped (${event.droppedReason}); there is no URL to redeliver to: give one as {"url"}`,
      );
    }
    const delivery = newDelivery(event, this.ctx.uuid(), this.ctx.now(), original.id, url ?? null);
    this.store(delivery);
    this.notify(delivery, null);
    return this.getDelivery(delivery.id);
  }

  /** After an import: every open delivery is held (the file's own, and those its due work raised at the file's time). */
  holdOpen(): void {
    for (const delivery of [...this.ctx.records.each('deliveries', { where: { status: ['pending', 'retrying'] } })])
      this.update(hold(delivery), null);
  }

  /**
   * `POST /deliveries/release`: every held delivery goes out, as first attempts in the order they were made, and the
   * account is held no more: the callbacks it raises from now on go to their URLs.
   */
  releaseAll() {
    const held = [...this.ctx.records.each('deliveries', { where: { status: 'held' } })];
    const now = this.ctx.now();
    for (const delivery of held)
      this.update(release(delivery, now, forwardingUrl(this.ctx.head, delivery.eventType)), null);
    if (this.ctx.head.heldSince) {
      this.ctx.head.heldSince = null;
      this.ctx.changedHeader();
    }
    return { released: held.length };
  }

  /**
   * `POST /deliveries/{id}/release`: one held delivery goes out, to `{"url"}` if given, else to the forwarding URL if
   * one is set (pinned now: a URL the file named for it is never preferred to it), else to its own.
   */
  release(id: string, body: unknown) {
    const delivery = this.delivery(id);
    const { url } = parse(redeliverSchema, body ?? {});
    if (delivery.status !== 'held') {
      throw new SandboxError(
        'INVALID_STATE',
        `Delivery ${delivery.id} is ${delivery.status}, not held: only a held delivery is released (redeliver sends any one again)`,
      );
    }
    this.update(release(delivery, this.ctx.now(), url ?? forwardingUrl(this.ctx.head, delivery.eventType)), null);
    return this.getDelivery(delivery.id);
  }

  forwarding() {
    return forwardingView(this.ctx.head.forwarding);
  }

  setForwarding(body: unknown) {
    const { url, events } = parse(forwardingSchema, body);
    return this.storeForwarding({ url, ...(events ? { events: [...new Set(events)] } : {}), since: this.ctx.now() });
  }

  deleteForwarding() {
    return this.storeForwarding(null);
  }

  private storeForwarding(forwarding: Forwarding | null) {
    this.ctx.head.forwarding = forwarding;
    this.ctx.changedHeader();
    this.ctx.notify('forwarding', () => ({ type: 'forwarding', account: this.ctx.key, forwarding: this.forwarding() }));
    return this.forwarding();
  }

  faults(): Faults {
    return faultsOf(this.ctx.head);
  }

  setFaults(body: unknown): Faults {
    this.ctx.head.faults = parse(faultsSchema, body);
    this.ctx.changedHeader();
    return this.faults();
  }

  /** Records an attempt on the delivery it started with (not read back), or on the stored one if it changed since. */
  recordAttempt(delivery: Delivery, attempt: Omit<Attempt, 'n'>): Delivery {
    let next = recordAttempt(this.ctx.deps.policy, delivery, attempt, this.ctx.now());
    if (!this.ctx.records.appendAttempt(delivery, next)) {
      next = recordAttempt(this.ctx.deps.policy, this.delivery(delivery.id), attempt, this.ctx.now());
      this.ctx.put('deliveries', next.id, next);
    }
    this.notify(next, next.attempts.at(-1)!);
    return next;
  }

  /** Stores a stored delivery's next state and tells live views. */
  private update(next: Delivery, attempt: Attempt | null): Delivery {
    this.ctx.put('deliveries', next.id, next);
    this.notify(next, attempt);
    return next;
  }

  /** Tells live views of deliveries as they stand (an import's, held as they were stored). */
  announce(ids: readonly string[]): void {
    for (const id of ids) this.notify(this.delivery(id), null);
  }

  private notify(delivery: Delivery, attempt: Attempt | null): void {
    this.ctx.notify('delivery', () => {
      const { vaPaymentId, clientId, body } = this.sent(delivery.eventId);
      return {
        type: 'delivery',
        account: this.ctx.key,
        delivery: deliveryView(delivery, { vaPaymentId, clientId }),
        attempt,
        event: { vaPaymentId, clientId, body },
      };
    });
  }
}

/** Deliveries of two lists, each newest first, as one list newest first (by when made; the first list first at a tie). */
function* newestOf(a: Iterator<Delivery>, b: Iterator<Delivery>): Generator<Delivery> {
  let x = a.next();
  let y = b.next();
  while (!x.done || !y.done) {
    if (y.done || (!x.done && x.value.createdAt >= y.value.createdAt)) {
      yield x.value!;
      x = a.next();
    } else {
      yield y.value;
      y = b.next();
    }
  }
}

function* mapped<T, U>(items: Iterator<T>, map: (item: T) => U): Generator<U> {
  for (let item = items.next(); !item.done; item = items.next()) yield map(item.value);
}
