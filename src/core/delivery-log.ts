import { push, type AccountContext } from './account-context.js';
import { ms } from './clock.js';
import { callbackHeaders, droppedDelivery, hold, newDelivery, recordAttempt, release } from './deliveries.js';
import { attemptUrl, faultsOf, faultsSchema, forwardingSchema, forwardingView, redeliverSchema } from './delivery-settings.js';
import { DueQueue } from './due-queue.js';
import { notFound, SandboxError } from './errors.js';
import { UUID_PATTERN } from './ids.js';
import { NO_EVENTS, sent, type SentEvent } from './event-body.js';
import { Lists, regroup } from './lists.js';
import { pageNewestFirst, pageOf } from './pagination.js';
import { listDeliveriesQuery, parse } from './schemas.js';
import { DELIVERY_STATUSES, type Attempt, type Delivery, type Faults, type Forwarding, type SandboxEvent } from './state.js';
import { deliveryView, type CallbackDeliverySummary } from './views.js';

/** A delivery whose attempt is due: what to send (the event's body, its headers) and where (see `attemptUrl`). */
export interface DueDelivery {
  delivery: Delivery;
  event: SentEvent;
  headers: Record<string, string>;
  url: string;
}

/**
 * The delivery log: every delivery of every event with its attempts, the order rule's queue of
 * first attempts, the retry queue, forwarding and faults. What an attempt means is `deliveries.ts`'s policy.
 * A dropped event has nothing to deliver and no delivery is stored for it: its first delivery, `dropped`, is the
 * event itself, shown under the event's id (`of`), and a redelivery of it to a URL is stored like any other.
 */
export class DeliveryLog {
  private readonly byEvent = new Map<string, string[]>();
  /** Deliveries by what their list filters on (`deliveryGroups`). */
  private readonly lists = new Lists();
  /** Open deliveries before their first attempt, in the order they were raised (the order rule's queue). */
  private readonly firstAttempts = new Set<string>();
  /** Deliveries waiting to retry, by when (the account's clock), so a backlog is never scanned to find what is due. */
  private readonly retries = new DueQueue();

  constructor(private readonly ctx: AccountContext) {}

  /**
   * Indexes the account's deliveries in the order they were made: each dropped
   * event's before the first delivery of a later event, and before a redelivery made after it was raised.
   */
  build(): void {
    const events = Object.values(this.ctx.state.events);
    const position = new Map(events.map((event, at) => [event.id, at]));
    const stored = Object.values(this.ctx.state.deliveries);
    const firstStored = new Set(stored.filter((d) => d.redeliveryOf === null).map((d) => d.eventId));
    let next = 0;
    const droppedUntil = (before: (event: SandboxEvent) => boolean) => {
      for (; next < events.length && before(events[next]!); next++) if (!firstStored.has(events[next]!.id)) this.dropped(events[next]!);
    };
    for (const delivery of stored) {
      const at = delivery.redeliveryOf === null ? position.get(delivery.eventId) : undefined;
      droppedUntil(at === undefined ? (event) => event.createdAt <= delivery.createdAt : () => next < at);
      if (at !== undefined) next = Math.max(next, at + 1);
      this.track(delivery);
    }
    droppedUntil(() => true);
  }

  /** Lists a dropped event's first delivery, which is not stored (see `of`). */
  dropped(event: SandboxEvent): void {
    if (event.url === null) regroup(this.lists, event.id, deliveryGroups(droppedDelivery(event)), undefined);
  }

  /** Stores a new delivery (before any attempt, so a restart still sends it). */
  store(delivery: Delivery): void {
    this.ctx.put('deliveries', delivery.id, delivery);
    this.track(delivery);
  }

  private track(delivery: Delivery, before?: Delivery): void {
    regroup(this.lists, delivery.id, deliveryGroups(delivery), before && deliveryGroups(before));
    if (!before) push(this.byEvent, delivery.eventId, delivery.id);
    // Pending is before a first attempt: a new delivery's, or a released one's (its attempts before are the file's).
    if (delivery.status === 'pending') this.firstAttempts.add(delivery.id);
    else this.firstAttempts.delete(delivery.id);
    if (delivery.status === 'retrying' && delivery.nextAttemptAt !== null) this.retries.push(ms(delivery.nextAttemptAt), delivery.id);
  }

  /**
   * An event's deliveries, oldest first. A dropped event's first is the event itself, under its id, unless an earlier
   * release stored one for it.
   */
  of(event: SandboxEvent): Delivery[] {
    const stored = (this.byEvent.get(event.id) ?? []).map((id) => this.ctx.state.deliveries[id]!);
    return event.url === null && stored[0]?.redeliveryOf !== null ? [droppedDelivery(event), ...stored] : stored;
  }

  /** What a VA payment's `callbackDelivery` says: its events and where their deliveries stand. */
  summary(eventIds: readonly string[]): CallbackDeliverySummary {
    const summary = { ...NO_EVENTS };
    for (const eventId of eventIds) {
      const event = this.ctx.state.events[eventId]!;
      summary.events++;
      summary.lastEventType = event.eventType;
      for (const delivery of this.of(event)) {
        summary[delivery.status]++;
        const startedAt = delivery.attempts.at(-1)?.startedAt;
        if (startedAt && (summary.lastAttemptAt === null || startedAt > summary.lastAttemptAt)) summary.lastAttemptAt = startedAt;
      }
    }
    return summary;
  }

  /** Every delivery, dropped events' first ones included, in the order they were made (an export's). */
  exported(): Record<string, Delivery> {
    const ids = this.lists.anyOf(DELIVERY_STATUSES.map((status) => `status:${status}`));
    return Object.fromEntries(ids.map((id) => [id, this.delivery(id)]));
  }

  /** The deliveries, newest first, read from their groups: the dropped ones of events are in no table. */
  listDeliveries(query: Record<string, string>) {
    const q = parse(listDeliveriesQuery, query, 'query');
    const render = (id: string) => deliveryView(this.delivery(id));
    const byStatus = (q.status ?? DELIVERY_STATUSES).map((status) => `status:${status}`);
    const byType = q.eventType?.map((eventType) => `eventType:${eventType}`);
    if (q.status === undefined || byType === undefined) {
      const groups = byType ?? byStatus;
      return pageOf(this.lists.newestOf(groups), this.lists.sizeOf(groups), q, render);
    }
    // Both filters: the smaller of the two, checked against the other.
    const [ids, matches] =
      this.lists.sizeOf(byType) < this.lists.sizeOf(byStatus)
        ? [this.lists.anyOf(byType), (d: Delivery) => q.status!.includes(d.status)]
        : [this.lists.anyOf(byStatus), (d: Delivery) => q.eventType!.includes(d.eventType)];
    return pageNewestFirst(ids.filter((id) => matches(this.delivery(id))), q, render);
  }

  /** One delivery with every attempt: the request as sent and the response as received. */
  getDelivery(id: string) {
    const delivery = this.delivery(id);
    const event = this.sent(delivery.eventId);
    const request = { method: 'POST', url: delivery.url, headers: callbackHeaders(event), body: event.body };
    return {
      ...deliveryView(delivery),
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

  /** A stored delivery, or a dropped event's first (under the event's id). */
  private delivery(id: string): Delivery {
    const { deliveries, events } = this.ctx.state;
    const known = UUID_PATTERN.test(id);
    const event = known ? events[id] : undefined;
    const delivery = (known ? deliveries[id] : undefined) ?? (event && this.of(event)[0]?.id === id ? droppedDelivery(event) : undefined);
    if (!delivery) throw notFound('Delivery', id);
    return delivery;
  }

  /** An event with its body as sent. */
  private sent(eventId: string): SentEvent {
    return sent(this.ctx.state.events[eventId]!, this.ctx.state.vaPayments);
  }

  /** A new delivery of the same event (same eventId), to the event's URL or, for this one delivery, to `{"url"}`. */
  redeliver(id: string, body: unknown) {
    const original = this.delivery(id);
    const { url } = parse(redeliverSchema, body ?? {});
    const event = this.ctx.state.events[original.eventId]!;
    if (event.url === null && url === undefined) {
      throw new SandboxError('INVALID_STATE', `Event ${event.id} was dropped (${event.droppedReason}); there is no URL to redeliver to: give one as {"url"}`);
    }
    const delivery = newDelivery(event, this.ctx.uuid(), this.ctx.now(), original.id, url ?? null);
    this.store(delivery);
    this.notify(delivery, null);
    return this.getDelivery(delivery.id);
  }

  /** After an import: every open delivery is held (the file's own, and those its due work raised at the file's time). */
  holdOpen(): void {
    for (const id of [...this.lists.anyOf(['status:pending', 'status:retrying'])]) this.update(hold(this.ctx.state.deliveries[id]!), null);
  }

  /** `POST /deliveries/release`: every held delivery goes out, as first attempts in the order they were made. */
  releaseAll() {
    const ids = [...this.lists.group('status:held')];
    const now = this.ctx.now();
    for (const id of ids) this.update(release(this.ctx.state.deliveries[id]!, now, this.ctx.state.forwarding?.url), null);
    return { released: ids.length };
  }

  /**
   * `POST /deliveries/{id}/release`: one held delivery goes out, to `{"url"}` if given, else to the forwarding URL if
   * one is set (pinned now: a URL the file named for it is never preferred to it), else to its own.
   */
  release(id: string, body: unknown) {
    const delivery = this.delivery(id);
    const { url } = parse(redeliverSchema, body ?? {});
    if (delivery.status !== 'held') {
      throw new SandboxError('INVALID_STATE', `Delivery ${delivery.id} is ${delivery.status}, not held: only a held delivery is released (redeliver sends any one again)`);
    }
    this.update(release(delivery, this.ctx.now(), url ?? this.ctx.state.forwarding?.url), null);
    return this.getDelivery(delivery.id);
  }

  forwarding() {
    return forwardingView(this.ctx.state.forwarding);
  }

  setForwarding(body: unknown) {
    const { url } = parse(forwardingSchema, body);
    return this.storeForwarding({ url, since: this.ctx.now() });
  }

  deleteForwarding() {
    return this.storeForwarding(null);
  }

  private storeForwarding(forwarding: Forwarding | null) {
    this.ctx.state.forwarding = forwarding;
    this.ctx.changedHeader();
    this.ctx.notify('forwarding', () => ({ type: 'forwarding', account: this.ctx.key, forwarding: this.forwarding() }));
    return this.forwarding();
  }

  faults(): Faults {
    return faultsOf(this.ctx.state);
  }

  setFaults(body: unknown): Faults {
    this.ctx.state.faults = parse(faultsSchema, body);
    this.ctx.changedHeader();
    return this.faults();
  }

  /**
   * The deliveries to attempt now: first attempts in the order they were raised, then retries whose time has come.
   * A first attempt waits until every earlier event of the same VA payment or client has had its first attempt, so
   * receivers see them in order. A generator: the deliverer stops reading once its slots are full, so a backlog to
   * a dead receiver costs nothing while every slot waits on it; a retry is taken off its queue once read past.
   */
  *dueDeliveries(inFlight: ReadonlySet<string>): Generator<DueDelivery> {
    const { state } = this.ctx;
    const blocked = new Set<string>();
    for (const id of this.firstAttempts) {
      const delivery = state.deliveries[id]!;
      const event = state.events[delivery.eventId]!;
      const source = event.vaPaymentId ?? event.clientId ?? event.id;
      const waiting = blocked.has(source);
      blocked.add(source);
      if (!waiting && !inFlight.has(id)) yield this.dueDelivery(delivery, event);
    }
    const now = this.ctx.nowMs();
    for (let item = this.nextRetry(inFlight); item && item.at <= now; item = this.nextRetry(inFlight)) {
      const delivery = state.deliveries[item.key]!;
      yield this.dueDelivery(delivery, state.events[delivery.eventId]!);
      this.retries.pop();
    }
  }

  /** How many deliveries wait for their first attempt, those under way aside: the backlog the API is paced by. */
  waitingFirst(inFlight: Iterable<string>): number {
    let waiting = this.firstAttempts.size;
    for (const id of inFlight) if (this.firstAttempts.has(id)) waiting--;
    return waiting;
  }

  private dueDelivery(delivery: Delivery, event: SandboxEvent): DueDelivery {
    return { delivery, event: sent(event, this.ctx.state.vaPayments), headers: callbackHeaders(event), url: attemptUrl(delivery, this.ctx.state) ?? '' };
  }

  /** When the next retry is due (the account's clock), or null. */
  nextRetryAt(inFlight: ReadonlySet<string>): number | null {
    return this.nextRetry(inFlight)?.at ?? null;
  }

  /** The queue's first retry still waiting as queued (entries left by a later attempt or a reset are dropped). */
  private nextRetry(inFlight: ReadonlySet<string>): { at: number; key: string } | undefined {
    for (let item = this.retries.peek(); item; item = this.retries.peek()) {
      const delivery = this.ctx.state.deliveries[item.key];
      const queued = delivery?.status === 'retrying' && delivery.nextAttemptAt !== null && ms(delivery.nextAttemptAt) === item.at;
      if (queued && !inFlight.has(item.key)) return item;
      this.retries.pop();
    }
    return undefined;
  }

  /** Records the outcome of one attempt; the policy decides delivered, retrying or failed. */
  recordAttempt(deliveryId: string, attempt: Omit<Attempt, 'n'>) {
    const delivery = this.delivery(deliveryId);
    const full: Attempt = { ...attempt, n: delivery.attempts.length + 1 };
    return this.update(recordAttempt(this.ctx.deps.policy, delivery, full, this.ctx.now()), full);
  }

  /** Stores a stored delivery's next state and tells live views. */
  private update(next: Delivery, attempt: Attempt | null): Delivery {
    const before = this.ctx.state.deliveries[next.id]!;
    this.ctx.put('deliveries', next.id, next);
    this.track(next, before);
    this.notify(next, attempt);
    return next;
  }

  private notify(delivery: Delivery, attempt: Attempt | null): void {
    this.ctx.notify('delivery', () => {
      const { vaPaymentId, clientId, body } = this.sent(delivery.eventId);
      return { type: 'delivery', account: this.ctx.key, delivery: deliveryView(delivery), attempt, event: { vaPaymentId, clientId, body } };
    });
  }
}

const deliveryGroups = (delivery: Delivery): string[] => [`status:${delivery.status}`, `eventType:${delivery.eventType}`];
