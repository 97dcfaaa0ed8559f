import { checkClockMove, iso, ms, type WallClock } from './clock.js';
import * as clients from './clients.js';
import { generateAlias, generateCvu } from './cvu.js';
import { callbackHeaders, isOpen, newDelivery, recordAttempt, type DeliveryPolicy } from './deliveries.js';
import { notFound, SandboxError } from './errors.js';
import { UUID_PATTERN, type IdSource } from './ids.js';
import { attemptUrl, faultsOf, faultsSchema, forwardingSchema, forwardingView, redeliverSchema } from './delivery-settings.js';
import { DueQueue, type StoredQueue } from './due-queue.js';
import { fromCents, type Cents } from './money.js';
import { Lists, narrowest } from './lists.js';
import { newestFirst, pageNewestFirst, paginate } from './pagination.js';
import {
  clientCvuSchema,
  clockAdvanceSchema,
  clockSetSchema,
  createClientSchema,
  createInvoiceSchema,
  createVaPaymentSchema,
  debitSchema,
  hubPatchSchema,
  hubIdSchema,
  listClientsQuery,
  listDeliveriesQuery,
  listEventsQuery,
  listQuery,
  listTransactionsQuery,
  listVaPaymentsQuery,
  type ListQuery,
  MAX_CLOCK_MOVE_SECONDS,
  parse,
  transferSchema,
  updateClientSchema,
  updateInvoiceSchema,
} from './schemas.js';
import { keyedByCaller, normalizeAccount } from './state.js';
import type { Index, Indexes, IndexesOf } from './store.js';
import type {
  AccountState,
  Attempt,
  CashIn,
  Client,
  Delivery,
  Entry,
  Faults,
  Forwarding,
  Hub,
  Invoice,
  PoolCvu,
  SandboxEvent,
  StateChange,
  TableName,
  Transfer,
  VaPayment,
} from './state.js';
import * as va from './va-payment.js';
import {
  balanceView,
  clientView,
  deliveryView,
  entryView,
  eventView,
  hubView,
  invoiceView,
  transferView,
  vaPaymentView,
  type CallbackDeliverySummary,
} from './views.js';

/** What happens in an account, for live views (the server's stream, the dashboard). Core never prints. */
export type LiveEvent =
  | { type: 'event'; account: string; event: ReturnType<typeof eventView> }
  | { type: 'transfer'; account: string; transfer: ReturnType<typeof transferView> }
  | { type: 'delivery'; account: string; delivery: ReturnType<typeof deliveryView>; attempt: Attempt | null; event?: DeliveredEvent }
  | { type: 'forwarding'; account: string; forwarding: ReturnType<typeof forwardingView> };

/** What a live delivery message says of its event: whose it is and the body sent. */
export type DeliveredEvent = Pick<SandboxEvent, 'vaPaymentId' | 'clientId' | 'body'>;

/** A delivery whose attempt is due: what to send (the event's body, its headers) and where (see `attemptUrl`). */
export interface DueDelivery {
  delivery: Delivery;
  event: SandboxEvent;
  headers: Record<string, string>;
  url: string;
}

/** A clock move as `Account.clockMove` parsed it: walk to `until()` (read at each step), then `finish` (the clock it leaves). */
export interface ClockMove {
  until: () => number;
  finish: () => { now: string; offsetSeconds: number };
}

export interface AccountDeps {
  clock: WallClock;
  ids: IdSource;
  policy: DeliveryPolicy;
  notify: (event: LiveEvent) => void;
  /** `--strict-tax-id`: a client's taxId must pass the CUIT check digit. */
  strictTaxId?: boolean;
  /** `--hubs`: the payment hub ids this sandbox accepts; any positive id when absent. */
  hubIds?: readonly number[];
  /** Told of every change to the state (see `put`), so a store can persist just those. */
  changed: (account: string, change: StateChange) => void;
  /** Where the account's indexes live (see `Indexes`). */
  indexes: IndexesOf;
}

const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;

export function emptyAccountState(): AccountState {
  return {
    clockOffsetMs: 0,
    hubs: {},
    pool: {},
    vaPayments: {},
    transfers: {},
    events: {},
    deliveries: {},
    idempotency: keyedByCaller(),
    clients: {},
    entries: {},
    invoices: {},
  };
}

/**
 * One integrator account: its hub, VA payments, transfers, events and delivery log.
 * Every method works on the account's sandbox clock; writes mutate `state`, which the caller persists.
 */
export class Account {
  /**
   * Indexes over `state`, built from its records on load, or kept by the store from an earlier run (see `Indexes`),
   * so a large account need not be read whole before it answers.
   */
  private active!: Index<string, true>;
  private eventsBySource!: Index<string, string[]>;
  private deliveriesByEvent!: Index<string, string[]>;
  /** VA payments and deliveries by what their lists filter on (see `paymentGroups`, `deliveryGroups`). */
  private paymentLists!: Lists;
  private deliveryLists!: Lists;
  /** Open deliveries before their first attempt, in the order they were raised (the order rule's queue). */
  private firstAttempts!: Set<string>;
  /** Deliveries waiting to retry, by when (the account's clock), so a backlog is never scanned to find what is due. */
  private retries!: DueQueue;
  private clientIndex!: clients.ClientIndex;
  private due!: DueQueue;
  /** While a clock move walks through due instants, the account's time stands at the one being done (`standAt`). */
  private standing: number | null = null;
  /** The pool CVU of each pool CVU and upper-case alias, and the free ones, released longest ago first. */
  private poolByAddress!: Index<string, string>;
  private freePool!: string[];
  /** The active amount-locked payment waiting for each amount of each hub (`hubId:cents`): at most one, by AMOUNT_LOCK_CONFLICT. */
  private amountLocks!: Index<string, string>;
  /** The hub whose collection CVU each CVU and upper-case alias is (hubs are few: always indexed from their records). */
  private collections!: Map<string, Hub>;

  constructor(
    readonly key: string,
    readonly state: AccountState,
    private readonly deps: AccountDeps,
  ) {
    // State files written before clients existed lack their tables.
    state.clients ??= {};
    state.entries ??= {};
    state.invoices ??= {};
    this.index(deps.indexes(key, false));
  }

  private index(indexes: Indexes): void {
    normalizeAccount(this.state);
    this.collections = new Map();
    for (const hub of Object.values(this.state.hubs)) this.indexHub(hub);
    this.active = indexes.index('active');
    this.eventsBySource = indexes.index('eventsBySource');
    this.deliveriesByEvent = indexes.index('deliveriesByEvent');
    this.poolByAddress = indexes.index('poolByAddress');
    this.amountLocks = indexes.index('amountLocks');
    this.paymentLists = new Lists(indexes, 'vaPayments');
    this.deliveryLists = new Lists(indexes, 'deliveries');
    this.clientIndex = new clients.ClientIndex(indexes);
    const queue = (kept: unknown) => (kept === undefined ? new DueQueue() : DueQueue.from(kept as StoredQueue));
    this.firstAttempts = indexes.value('firstAttempts', (kept) => new Set((kept ?? []) as string[]), (ids) => [...ids]);
    this.retries = indexes.value('retries', queue, (retries) => retries.toJSON());
    this.due = indexes.value('due', queue, (due) => due.toJSON());
    this.freePool = indexes.value('freePool', (kept) => (kept ?? []) as string[], (free) => [...free]);
    if (indexes.kept) return;
    for (const payment of Object.values(this.state.vaPayments)) {
      this.listPayment(payment);
      if (va.isActive(payment)) this.trackActive(payment);
    }
    for (const entry of Object.values(this.state.pool)) this.indexPoolCvu(entry);
    const free = Object.values(this.state.pool).filter((entry) => entry.vaPaymentId === null);
    for (const entry of free.sort(lendingOrder)) this.freePool.push(entry.cvu);
    for (const client of Object.values(this.state.clients)) this.trackProvisioning(client);
    for (const [key, record] of Object.entries(this.state.idempotency)) this.due.push(ms(record.createdAt) + IDEMPOTENCY_TTL_MS, `idempotency:${key}`);
    for (const event of Object.values(this.state.events)) this.indexEvent(event);
    for (const delivery of Object.values(this.state.deliveries)) {
      this.listDelivery(delivery);
      push(this.deliveriesByEvent, delivery.eventId, delivery.id);
      this.trackOpen(delivery);
    }
    this.clientIndex.build(this.state);
  }

  /**
   * Every write of a record goes through here (records are replaced whole, never edited in place), so the
   * store hears of each change and can persist just that.
   */
  private put<T extends TableName>(table: T, id: string, record: AccountState[T][string]): void {
    (this.state[table] as Record<string, unknown>)[id] = record;
    this.deps.changed(this.key, { table, id });
  }

  private drop(table: TableName, id: string): void {
    delete this.state[table][id];
    this.deps.changed(this.key, { table, id });
  }

  /** Groups a payment as stored now; `before` is the version it replaces. */
  private listPayment(payment: VaPayment, before?: VaPayment): void {
    regroup(this.paymentLists, payment.id, paymentGroups(payment), before && paymentGroups(before));
  }

  private listDelivery(delivery: Delivery, before?: Delivery): void {
    regroup(this.deliveryLists, delivery.id, deliveryGroups(delivery), before && deliveryGroups(before));
  }

  private trackActive(payment: VaPayment): void {
    this.active.set(payment.id, true);
    this.due.push(ms(payment.expiresAt), `expiry:${payment.id}`);
    if (payment.lockMode === 'amount') this.amountLocks.set(amountLock(payment.paymentHubId, payment.amount!), payment.id);
  }

  private putPoolCvu(entry: PoolCvu): void {
    this.put('pool', entry.cvu, entry);
    this.indexPoolCvu(entry);
  }

  private indexPoolCvu(entry: PoolCvu): void {
    this.poolByAddress.set(entry.cvu, entry.cvu);
    this.poolByAddress.set(entry.alias.toUpperCase(), entry.cvu);
  }

  private trackProvisioning(client: Client): void {
    if (client.cvuReadyAt !== null) this.due.push(ms(client.cvuReadyAt), `cvu:${client.id}`);
  }

  private indexEvent(event: SandboxEvent): void {
    const source = event.vaPaymentId ?? event.clientId;
    if (source !== null) push(this.eventsBySource, source, event.id);
  }

  private trackOpen(delivery: Delivery): void {
    if (isOpen(delivery) && delivery.attempts.length === 0) this.firstAttempts.add(delivery.id);
    else this.firstAttempts.delete(delivery.id);
    if (delivery.status === 'retrying' && delivery.nextAttemptAt !== null) this.retries.push(ms(delivery.nextAttemptAt), delivery.id);
  }

  // --- clock -------------------------------------------------------------------------------------

  nowMs(): number {
    return this.standing ?? this.deps.clock.now() + this.state.clockOffsetMs;
  }

  now(): string {
    return iso(this.nowMs());
  }

  clock() {
    return { now: this.now(), offsetSeconds: this.state.clockOffsetMs / 1000 };
  }

  /**
   * A move of this account's clock (contract part 5): `advance {seconds}` grows its offset by exactly that, `set {at}`
   * goes to a time, forward only. The runtime walks to `until()`, standing at each due instant in turn (`standAt`)
   * and doing its work there, then calls `finish`, from which the clock runs on with real time.
   */
  clockMove(kind: 'advance' | 'set', body: unknown): ClockMove {
    if (kind === 'advance') {
      const { seconds } = parse(clockAdvanceSchema, body);
      checkClockMove(this.nowMs() + seconds * 1000, 'seconds');
      const offset = this.state.clockOffsetMs + seconds * 1000;
      return { until: () => this.deps.clock.now() + offset, finish: () => this.runOn(() => offset) };
    }
    const { at: text } = parse(clockSetSchema, body);
    const at = ms(text);
    const now = this.nowMs();
    if (at < now) throw new SandboxError('INVALID_STATE', `The sandbox clock only moves forward: ${iso(at)} is before now (${iso(now)})`);
    checkClockMove(at, 'at');
    if (at - now > MAX_CLOCK_MOVE_SECONDS * 1000) {
      throw new SandboxError('VALIDATION_ERROR', 'Invalid request body: at: must be at most 10 years after now', ['at: must be at most 10 years after now']);
    }
    return { until: () => at, finish: () => this.runOn((wallNow) => at - wallNow) };
  }

  /**
   * The first instant, at or before `until`, when something falls due: an expiry, a delayed CVU, an old idempotency
   * key, or (unless `inFlight` is null: retries left for later) a retry not under way.
   */
  nextInstant(until: number, inFlight: ReadonlySet<string> | null): number | null {
    const retry = inFlight === null ? undefined : this.nextRetry(inFlight);
    const at = Math.min(this.due.peek()?.at ?? Infinity, retry?.at ?? Infinity);
    return at <= until ? at : null;
  }

  /**
   * Stands the clock at an instant of a walk (never back: an overdue item is done now) and does what falls due then:
   * events raised there carry it as `createdAt`, attempts started there carry it as their time.
   */
  standAt(at: number): void {
    this.standing = Math.max(at, this.nowMs());
    this.state.clockOffsetMs = this.standing - this.deps.clock.now();
    this.deps.changed(this.key, { header: true });
    this.runDue();
  }

  /** Ends a walk: the clock runs on with real time, the offset ahead of it; the clock as it reads at that moment. */
  private runOn(offsetAt: (wallNow: number) => number): ReturnType<Account['clock']> {
    const wallNow = this.deps.clock.now();
    this.standing = null;
    this.state.clockOffsetMs = offsetAt(wallNow);
    this.deps.changed(this.key, { header: true });
    return { now: iso(wallNow + this.state.clockOffsetMs), offsetSeconds: this.state.clockOffsetMs / 1000 };
  }

  /** Expires what is past its time, activates delayed client CVUs and forgets old idempotency keys. Returns whether anything changed. */
  runDue(): boolean {
    const now = this.nowMs();
    let changed = false;
    for (let item = this.due.peek(); item && item.at <= now; item = this.due.peek()) {
      this.due.pop();
      const [kind, id] = splitKey(item.key);
      if (kind === 'expiry') {
        const payment = this.state.vaPayments[id];
        if (payment && this.active.has(id) && ms(payment.expiresAt) === item.at) {
          this.apply(va.expire(payment, payment.expiresAt));
          changed = true;
        }
      } else if (kind === 'cvu') {
        const client = this.state.clients[id];
        if (client?.cvuReadyAt != null && ms(client.cvuReadyAt) === item.at) {
          this.storeClient(this.provisionCvu(client, client.cvuReadyAt), client);
          changed = true;
        }
      } else if (this.state.idempotency[id] && ms(this.state.idempotency[id].createdAt) + IDEMPOTENCY_TTL_MS === item.at) {
        this.drop('idempotency', id);
        changed = true;
      }
    }
    return changed;
  }

  /** The sandbox time of the next thing due (an expiry, a delayed CVU, an idempotency key to forget), or null. */
  nextDueAt(): number | null {
    return this.due.peek()?.at ?? null;
  }

  // --- hub -------------------------------------------------------------------------------------

  listHubs(query: Record<string, string>) {
    const q = parse(listQuery, query, 'query');
    const hubs = Object.values(this.state.hubs).sort((a, b) => a.id - b.id);
    return paginate(hubs, q, hubView);
  }

  /** A hub by its id in a path, made if new and allowed (as a create naming it would). */
  hub(id: string) {
    return hubView(this.hubFor(parse(hubIdSchema, id, 'hub id')));
  }

  patchHub(id: string, body: unknown) {
    const hub = this.hubFor(parse(hubIdSchema, id, 'hub id'));
    const next = { ...hub, ...parse(hubPatchSchema, body) };
    this.put('hubs', String(next.id), next);
    return hubView(next);
  }

  /**
   * The hub of a `paymentHubId`: integrators send their real hub ids, so any one is made on first use, with a
   * collection CVU and alias of its own, unless `--hubs` leaves it out (then it is unknown, as in production).
   */
  private hubFor(id: number): Hub {
    const known = this.state.hubs[id];
    if (known) return known;
    if (this.deps.hubIds && !this.deps.hubIds.includes(id)) throw notFound('Payment hub', String(id));
    const hub: Hub = {
      id,
      name: `Sandbox Hub ${id}`,
      brand: 'SANDBOX',
      dedicated_client_cvus_enabled: true,
      cvuProvisioning: 'inline',
      collectionCvu: this.uniqueCvu(),
      // Hub 1 keeps the alias it had when it was the only hub.
      collectionAlias: id === 1 ? 'SANDBOX.HUB.COBROS' : `SANDBOX.HUB${id}.COBROS`,
    };
    this.put('hubs', String(id), hub);
    this.indexHub(hub);
    return hub;
  }

  private indexHub(hub: Hub): void {
    this.collections.set(hub.collectionCvu, hub);
    this.collections.set(hub.collectionAlias.toUpperCase(), hub);
  }

  reset(): void {
    this.replace(emptyAccountState());
  }

  /** Swaps in a whole new state (reset, import) in place, since the sandbox's state holds this object, and re-indexes it. */
  replace(next: AccountState): void {
    for (const key of Object.keys(this.state) as (keyof AccountState)[]) delete this.state[key];
    Object.assign(this.state, next);
    this.deps.changed(this.key, { all: true });
    this.index(this.deps.indexes(this.key, true));
  }

  // --- VA payments -----------------------------------------------------------------------------

  createVaPayment(body: unknown) {
    const input = parse(createVaPaymentSchema, body);
    if (input.currency !== 'ARS') {
      throw new SandboxError('UNSUPPORTED_CURRENCY', `Currency ${input.currency} is not supported: VA payments are ARS only`, [
        'currency: must be ARS',
      ]);
    }
    const hub = this.hubFor(input.paymentHubId);
    if (input.lockMode === 'amount') {
      const clash = this.lockedBy(hub.id, input.amount!);
      if (clash) {
        throw new SandboxError(
          'AMOUNT_LOCK_CONFLICT',
          `An active amount-locked VA payment (${clash.id}) already waits for ${fromCents(clash.amount!)} ARS`,
          ['amount: already locked by an active VA payment'],
        );
      }
    }
    const now = this.nowMs();
    const id = this.deps.ids.uuid();
    const place =
      input.lockMode === 'amount'
        ? { cvu: hub.collectionCvu, alias: hub.collectionAlias }
        : this.reservePoolCvu(id);
    const transition = va.createVaPayment(input, {
      id,
      ...place,
      now: iso(now),
      expiresAt: iso(now + input.ttlSeconds * 1000),
    });
    this.trackActive(transition.payment);
    return this.viewOf(this.apply(transition));
  }

  getVaPayment(id: string) {
    return this.viewOf(this.payment(id));
  }

  listVaPayments(query: Record<string, string>) {
    const q = parse(listVaPaymentsQuery, query, 'query');
    const from = q.createdFrom === undefined ? null : ms(q.createdFrom);
    const to = q.createdTo === undefined ? null : ms(q.createdTo);
    const matches = (p: VaPayment) =>
      (q.status === undefined || q.status.includes(p.status)) &&
      (q.clientId === undefined || p.clientId === q.clientId.toLowerCase()) &&
      (q.clientTaxId === undefined || p.clientTaxId === q.clientTaxId) &&
      (q.externalReference === undefined || p.externalReference === q.externalReference) &&
      (from === null || ms(p.createdAt) >= from) &&
      (to === null || ms(p.createdAt) <= to);
    const lists = this.paymentLists;
    const groups = [
      q.status === undefined ? undefined : lists.anyOf(q.status.map((status) => `status:${status}`)),
      q.clientId === undefined ? undefined : lists.group(`clientId:${q.clientId.toLowerCase()}`),
      q.clientTaxId === undefined ? undefined : lists.group(`clientTaxId:${q.clientTaxId}`),
      q.externalReference === undefined ? undefined : lists.group(`externalReference:${q.externalReference}`),
    ];
    return this.filtered(this.state.vaPayments, groups, [from, to], matches, q, (p) => this.viewOf(p));
  }

  /**
   * A filtered list: read from the narrowest group its filters name (each group is exactly the records one filter
   * matches), checking the other filters on its records only; the table newest first when no filter has a group.
   */
  private filtered<T, U>(
    table: Record<string, T>,
    groups: (readonly string[] | undefined)[],
    ranges: (number | null)[],
    matches: (record: T) => boolean,
    query: ListQuery,
    render: (record: T) => U,
  ) {
    const named = groups.filter((ids): ids is readonly string[] => ids !== undefined);
    const narrow = narrowest(named);
    if (narrow === null) return paginate(newestFirst(table).filter(matches), query, render);
    const alone = named.length === 1 && ranges.every((bound) => bound === null);
    const ids = alone ? narrow : narrow.filter((id) => matches(table[id]!));
    return pageNewestFirst(ids, query, (id) => render(table[id]!));
  }

  cancelVaPayment(id: string) {
    return this.viewOf(this.apply(va.cancel(this.payment(id), this.now())));
  }

  private payment(id: string): VaPayment {
    const payment = UUID_PATTERN.test(id) ? this.state.vaPayments[id] : undefined;
    if (!payment) throw notFound('VA payment', id);
    return payment;
  }

  /** Lends the pool CVU released longest ago, or opens a new one. */
  private reservePoolCvu(vaPaymentId: string): { cvu: string; alias: string } {
    const cvu = this.freePool.shift();
    let free = cvu === undefined ? undefined : this.state.pool[cvu];
    if (!free) {
      free = { cvu: this.uniqueCvu(), alias: generateAlias(this.deps.ids, (alias) => this.aliasTaken(alias)), vaPaymentId: null, releasedAt: null };
    }
    this.putPoolCvu({ ...free, vaPaymentId, releasedAt: null });
    return { cvu: free.cvu, alias: free.alias };
  }

  private uniqueCvu(): string {
    for (;;) {
      const cvu = generateCvu(this.deps.ids);
      if (!this.aliasTaken(cvu)) return cvu;
    }
  }

  /** Whether a CVU or alias (case-insensitive) is taken in this account: `accountFor` without reading its owner. */
  private aliasTaken(alias: string): boolean {
    return this.clientIndex.at(alias) !== undefined || this.collectionOf(alias) !== undefined || this.poolCvuAt(alias) !== undefined;
  }

  /** The hub whose collection CVU a CVU or alias (case-insensitive) is. */
  private collectionOf(to: string): Hub | undefined {
    return this.collections.get(to) ?? this.collections.get(to.toUpperCase());
  }

  /** The pool CVU a CVU or alias (case-insensitive) names. */
  private poolCvuAt(to: string): string | undefined {
    return this.poolByAddress.get(to) ?? this.poolByAddress.get(to.toUpperCase());
  }

  /** What a CVU or alias (case-insensitive) belongs to in this account, or null. */
  private accountFor(
    to: string,
  ):
    | { cvu: string; kind: 'collection'; hubId: number }
    | { cvu: string; kind: 'pool'; vaPaymentId: string | null }
    | { cvu: string; kind: 'client'; clientId: string }
    | null {
    const clientId = this.clientIndex.at(to);
    if (clientId !== undefined) return { cvu: this.state.clients[clientId]!.cvu!, kind: 'client', clientId };
    const hub = this.collectionOf(to);
    if (hub) return { cvu: hub.collectionCvu, kind: 'collection', hubId: hub.id };
    const cvu = this.poolCvuAt(to);
    const entry = cvu === undefined ? undefined : this.state.pool[cvu];
    return entry ? { cvu: entry.cvu, kind: 'pool', vaPaymentId: entry.vaPaymentId } : null;
  }

  /** Stores a transition's payment, releases its lock when it ends, and raises its events. */
  private apply(transition: va.Transition): VaPayment {
    const payment = transition.payment;
    this.listPayment(payment, this.state.vaPayments[payment.id]);
    this.put('vaPayments', payment.id, payment);
    if (!va.isActive(payment) && this.active.delete(payment.id)) this.releaseLock(payment);
    for (const draft of transition.events) this.raiseVaEvent(payment, draft);
    return payment;
  }

  /** The active amount-locked payment waiting for exactly this gross total. */
  private lockedBy(hubId: number, total: Cents): VaPayment | undefined {
    const id = this.amountLocks.get(amountLock(hubId, total));
    return id === undefined ? undefined : this.state.vaPayments[id];
  }

  private releaseLock(payment: VaPayment): void {
    if (payment.lockMode === 'amount') {
      this.amountLocks.delete(amountLock(payment.paymentHubId, payment.amount!));
      return;
    }
    const entry = this.state.pool[payment.cvu];
    if (entry?.vaPaymentId === payment.id) {
      const released = { ...entry, vaPaymentId: null, releasedAt: payment.updatedAt };
      this.putPoolCvu(released);
      // Releases come in time order, so this is (nearly always) the end: only ties are placed by CVU.
      let at = this.freePool.length;
      while (at > 0 && lendingOrder(this.state.pool[this.freePool[at - 1]!]!, released) > 0) at--;
      this.freePool.splice(at, 0, released.cvu);
    }
  }

  private viewOf(payment: VaPayment) {
    return vaPaymentView(payment, this.deliverySummary(payment.id));
  }

  private deliverySummary(vaPaymentId: string): CallbackDeliverySummary {
    const summary: CallbackDeliverySummary = {
      events: 0, delivered: 0, pending: 0, retrying: 0, failed: 0, dropped: 0, lastEventType: null, lastAttemptAt: null,
    };
    for (const eventId of this.eventsBySource.get(vaPaymentId) ?? []) {
      summary.events++;
      summary.lastEventType = this.state.events[eventId]!.eventType;
      for (const deliveryId of this.deliveriesByEvent.get(eventId) ?? []) {
        const delivery = this.state.deliveries[deliveryId]!;
        summary[delivery.status]++;
        const startedAt = delivery.attempts.at(-1)?.startedAt;
        if (startedAt && (summary.lastAttemptAt === null || startedAt > summary.lastAttemptAt)) summary.lastAttemptAt = startedAt;
      }
    }
    return summary;
  }

  private raiseVaEvent(payment: VaPayment, draft: va.VaEventDraft): SandboxEvent {
    const id = this.deps.ids.uuid();
    const createdAt = this.now();
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
    // `created` and `cancelled` carry the endpoint's response body, whose delivery summary already counts this event.
    return this.raise(event, cashIn ? undefined : () => this.viewOf(payment));
  }

  /**
   * Records an event and its first delivery (before any attempt, so a restart still sends it).
   * `payload`, when given, is computed once both are stored.
   */
  private raise(event: SandboxEvent, payload?: () => unknown): SandboxEvent {
    this.put('events', event.id, event);
    this.indexEvent(event);
    const delivery = newDelivery(event, this.deps.ids.uuid(), event.createdAt);
    this.storeDelivery(delivery);
    if (payload) event.body.payload = payload();
    this.deps.notify({ type: 'event', account: this.key, event: eventView(event, [delivery]) });
    return event;
  }

  private storeDelivery(delivery: Delivery): void {
    this.listDelivery(delivery);
    this.put('deliveries', delivery.id, delivery);
    push(this.deliveriesByEvent, delivery.eventId, delivery.id);
    this.trackOpen(delivery);
  }

  // --- transfers -------------------------------------------------------------------------------

  createTransfer(body: unknown) {
    const input = parse(transferSchema, body);
    const target = this.accountFor(input.to);
    if (target === null) throw notFound('Account (CVU or alias)', input.to);
    const now = this.now();
    const transfer: Transfer = {
      id: this.deps.ids.uuid(),
      operationId: `op_${this.deps.ids.uuid().replaceAll('-', '').slice(0, 24)}`,
      to: input.to,
      cvu: target.cvu,
      total: input.total,
      taxes: input.taxes,
      from: input.from ? { name: input.from.name ?? undefined, taxId: input.from.taxId ?? undefined, cbu: input.from.cbu ?? undefined } : null,
      outcome: 'returned',
      reason: null,
      target: null,
      eventIds: [],
      createdAt: now,
    };
    if (target.kind === 'client') return this.recordTransfer(this.creditClientCvu(this.state.clients[target.clientId]!, transfer));
    const payment =
      target.kind === 'collection'
        ? this.lockedBy(target.hubId, input.total)
        : target.vaPaymentId === null
          ? undefined
          : this.state.vaPayments[target.vaPaymentId];
    if (!payment) {
      transfer.reason =
        target.kind === 'collection'
          ? `no active amount-locked VA payment waits for ${fromCents(input.total)} ARS`
          : 'no active VA payment holds this CVU';
    } else if (!va.acceptsTotal(payment, input.total)) {
      transfer.reason = `total ${fromCents(input.total)} does not match the locked amount ${fromCents(payment.amount!)} of VA payment ${payment.id}`;
    } else {
      const cashIn: CashIn = {
        operationId: transfer.operationId,
        transferId: transfer.id,
        total: input.total,
        taxes: input.taxes,
        incomingAmount: input.total - input.taxes,
        receivedAt: now,
      };
      const before = new Set(this.eventsBySource.get(payment.id));
      this.apply(va.creditTransfer(payment, cashIn, now));
      const client = payment.clientId === null ? undefined : this.state.clients[payment.clientId];
      if (client) {
        const credit = { amount: cashIn.incomingAmount, operationId: transfer.operationId, paymentId: payment.id, now };
        this.addEntry(clients.cashInEntry(this.deps.ids.uuid(), client.id, credit));
      }
      transfer.outcome = 'credited';
      transfer.target = { type: 'va_payment', id: payment.id };
      transfer.eventIds = (this.eventsBySource.get(payment.id) ?? []).filter((id) => !before.has(id));
    }
    return this.recordTransfer(transfer);
  }

  private recordTransfer(transfer: Transfer) {
    this.put('transfers', transfer.id, transfer);
    const view = transferView(transfer);
    this.deps.notify({ type: 'transfer', account: this.key, transfer: view });
    return view;
  }

  /** A transfer to a client's CVU: a `cash_in` entry and a `client.cashin` event while the CVU is active, else returned. */
  private creditClientCvu(client: Client, transfer: Transfer): Transfer {
    if (client.cvuStatus !== 'active') {
      transfer.reason = `the CVU of client ${client.id} is ${client.cvuStatus}`;
      return transfer;
    }
    const credit = { amount: transfer.total - transfer.taxes, operationId: transfer.operationId, paymentId: null, now: transfer.createdAt };
    this.addEntry(clients.cashInEntry(this.deps.ids.uuid(), client.id, credit));
    const event = this.raise(clients.cashInEvent(client, transfer, this.deps.ids.uuid(), transfer.createdAt));
    transfer.outcome = 'credited';
    transfer.target = { type: 'client', id: client.id };
    transfer.eventIds = [event.id];
    return transfer;
  }

  listTransfers(query: Record<string, string>) {
    const q = parse(listQuery, query, 'query');
    return paginate(newestFirst(this.state.transfers), q, transferView);
  }

  // --- clients ---------------------------------------------------------------------------------

  createClient(body: unknown) {
    const input = parse(createClientSchema, body);
    if (this.deps.strictTaxId) clients.assertCuit(input.taxId);
    const hub = this.hubFor(input.paymentHubId);
    if (!hub.dedicated_client_cvus_enabled) {
      throw new SandboxError('DEDICATED_CVUS_DISABLED', `Payment hub ${hub.id} does not have dedicated client CVUs enabled`, [
        'paymentHubId: dedicated_client_cvus_enabled is false on this hub',
      ]);
    }
    this.checkTaxIdFree(input.taxId, null);
    const now = this.nowMs();
    const client = clients.createClient(input, { id: this.deps.ids.uuid(), now, hub });
    return this.clientViewOf(this.storeClient(hub.cvuProvisioning === 'inline' ? this.provisionCvu(client, iso(now)) : client));
  }

  getClient(id: string) {
    return this.clientViewOf(this.client(id));
  }

  listClients(query: Record<string, string>) {
    const q = parse(listClientsQuery, query, 'query');
    const digits = q.taxId === undefined ? undefined : clients.taxIdDigits(q.taxId);
    const matches = newestFirst(this.state.clients).filter(
      (c) =>
        (digits === undefined || clients.taxIdDigits(c.taxId) === digits) &&
        (q.externalReference === undefined || c.externalReference === q.externalReference),
    );
    return paginate(matches, q, (c) => this.clientViewOf(c));
  }

  updateClient(id: string, body: unknown) {
    const client = this.client(id);
    const patch = parse(updateClientSchema, body);
    if (patch.taxId !== undefined) {
      if (this.deps.strictTaxId) clients.assertCuit(patch.taxId);
      this.checkTaxIdFree(patch.taxId, client.id);
    }
    return this.clientViewOf(this.storeClient(clients.updateClient(client, patch, this.now()), client));
  }

  /** The sandbox's switch of a client's CVU; `active` provisions one now for a client that has none yet. */
  setClientCvuStatus(id: string, body: unknown) {
    const client = this.client(id);
    const { cvuStatus } = parse(clientCvuSchema, body);
    const now = this.now();
    const next = cvuStatus === 'active' && client.cvu === null ? this.provisionCvu(client, now) : clients.setCvuStatus(client, cvuStatus, now);
    return this.clientViewOf(this.storeClient(next, client));
  }

  clientBalance(id: string) {
    const client = this.client(id);
    return balanceView(client.id, clients.balance(this.entriesOf(client.id), this.invoicesOf(client.id)));
  }

  listTransactions(id: string, query: Record<string, string>) {
    const client = this.client(id);
    const q = parse(listTransactionsQuery, query, 'query');
    const from = q.from === undefined ? null : ms(q.from);
    const to = q.to === undefined ? null : ms(q.to);
    const entries = q.entryType === undefined ? this.clientIndex.entryIds(client.id) : this.clientIndex.entryIdsOfType(client.id, q.entryType);
    const inRange = (e: Entry) => (from === null || ms(e.createdAt) >= from) && (to === null || ms(e.createdAt) <= to);
    const ids = from === null && to === null ? entries : entries.filter((entryId) => inRange(this.state.entries[entryId]!));
    const { data, pagination } = pageNewestFirst(ids, q, (entryId) => entryView(this.state.entries[entryId]!));
    return { transactions: data, pagination };
  }

  createDebit(id: string, body: unknown) {
    const client = this.client(id);
    const input = parse(debitSchema, body);
    return entryView(this.addEntry(clients.debitEntry(this.deps.ids.uuid(), client.id, input, this.now())));
  }

  createInvoice(id: string, body: unknown) {
    const client = this.client(id);
    const input = parse(createInvoiceSchema, body);
    const invoice = clients.createInvoice(input, { id: this.deps.ids.uuid(), clientId: client.id, now: this.now() });
    this.put('invoices', invoice.id, invoice);
    this.clientIndex.addInvoice(invoice);
    return invoiceView(invoice);
  }

  updateInvoice(id: string, invoiceId: string, body: unknown) {
    const invoice = this.invoice(this.client(id), invoiceId);
    const next = clients.updateInvoice(invoice, parse(updateInvoiceSchema, body), this.now());
    this.put('invoices', next.id, next);
    return invoiceView(next);
  }

  listInvoices(id: string, query: Record<string, string>) {
    const client = this.client(id);
    const q = parse(listQuery, query, 'query');
    return paginate(this.invoicesOf(client.id).reverse(), q, invoiceView);
  }

  private client(id: string): Client {
    const client = UUID_PATTERN.test(id) ? this.state.clients[id] : undefined;
    if (!client) throw notFound('Client', id);
    return client;
  }

  private invoice(client: Client, invoiceId: string): Invoice {
    const invoice = UUID_PATTERN.test(invoiceId) ? this.state.invoices[invoiceId] : undefined;
    if (!invoice || invoice.clientId !== client.id) throw notFound('Invoice', invoiceId);
    return invoice;
  }

  /** A client's entries, oldest first. */
  private entriesOf(clientId: string): Entry[] {
    return this.clientIndex.entryIds(clientId).map((id) => this.state.entries[id]!);
  }

  /** A client's invoices, oldest first. */
  private invoicesOf(clientId: string): Invoice[] {
    return this.clientIndex.invoiceIds(clientId).map((id) => this.state.invoices[id]!);
  }

  private checkTaxIdFree(taxId: string, self: string | null): void {
    const owner = this.clientIndex.withTaxId(taxId);
    if (owner !== undefined && owner !== self) {
      throw new SandboxError('TAX_ID_ALREADY_EXISTS', `Client ${owner} already has tax id ${this.state.clients[owner]!.taxId}`, [
        'taxId: already used by another client of this account',
      ]);
    }
  }

  private storeClient(client: Client, before?: Client): Client {
    this.put('clients', client.id, client);
    this.clientIndex.track(client, before);
    if (client.cvuReadyAt !== before?.cvuReadyAt) this.trackProvisioning(client);
    return client;
  }

  /** The client with a CVU and an alias from its hints (or a random one), both unique in the account. */
  private provisionCvu(client: Client, now: string): Client {
    const brand = this.state.hubs[client.paymentHubId]?.brand ?? 'SANDBOX';
    const alias = generateAlias(this.deps.ids, (candidate) => this.aliasTaken(candidate), clients.aliasBase(client, brand));
    return clients.provision(client, { cvu: this.uniqueCvu(), alias }, now);
  }

  private addEntry(entry: Entry): Entry {
    this.put('entries', entry.id, entry);
    this.clientIndex.addEntry(entry);
    return entry;
  }

  private clientViewOf(client: Client) {
    return clientView(client, this.state.hubs[client.paymentHubId]);
  }

  // --- events and deliveries -------------------------------------------------------------------

  listEvents(query: Record<string, string>) {
    const q = parse(listEventsQuery, query, 'query');
    const source = (q.vaPaymentId ?? q.clientId)?.toLowerCase();
    const events =
      source === undefined
        ? newestFirst(this.state.events)
        : (this.eventsBySource.get(source) ?? [])
            .map((id) => this.state.events[id]!)
            .filter((e) => q.clientId === undefined || e.clientId === q.clientId.toLowerCase())
            .reverse();
    return paginate(events, q, (event) => eventView(event, this.deliveriesOf(event.id)));
  }

  private deliveriesOf(eventId: string): Delivery[] {
    return (this.deliveriesByEvent.get(eventId) ?? []).map((id) => this.state.deliveries[id]!);
  }

  listDeliveries(query: Record<string, string>) {
    const q = parse(listDeliveriesQuery, query, 'query');
    const matches = (d: Delivery) => (q.status === undefined || q.status.includes(d.status)) && (q.eventType === undefined || q.eventType.includes(d.eventType));
    const lists = this.deliveryLists;
    const groups = [
      q.status === undefined ? undefined : lists.anyOf(q.status.map((status) => `status:${status}`)),
      q.eventType === undefined ? undefined : lists.anyOf(q.eventType.map((eventType) => `eventType:${eventType}`)),
    ];
    return this.filtered(this.state.deliveries, groups, [], matches, q, deliveryView);
  }

  /** One delivery with every attempt: the request as sent and the response as received. */
  getDelivery(id: string) {
    const delivery = this.delivery(id);
    const event = this.state.events[delivery.eventId]!;
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

  private delivery(id: string): Delivery {
    const delivery = UUID_PATTERN.test(id) ? this.state.deliveries[id] : undefined;
    if (!delivery) throw notFound('Delivery', id);
    return delivery;
  }

  /** A new delivery of the same event (same eventId), to the event's URL or, for this one delivery, to `{"url"}`. */
  redeliver(id: string, body: unknown) {
    const original = this.delivery(id);
    const { url } = parse(redeliverSchema, body ?? {});
    const event = this.state.events[original.eventId]!;
    if (event.url === null && url === undefined) {
      throw new SandboxError('INVALID_STATE', `Event ${event.id} was dropped (${event.droppedReason}); there is no URL to redeliver to: give one as {"url"}`);
    }
    const delivery = newDelivery(event, this.deps.ids.uuid(), this.now(), original.id, url ?? null);
    this.storeDelivery(delivery);
    this.notifyDelivery(delivery, null);
    return this.getDelivery(delivery.id);
  }

  // --- forwarding and faults (contract part 4) ---------------------------------------------------

  forwarding() {
    return forwardingView(this.state.forwarding);
  }

  setForwarding(body: unknown) {
    const { url } = parse(forwardingSchema, body);
    return this.storeForwarding({ url, since: this.now() });
  }

  deleteForwarding() {
    return this.storeForwarding(null);
  }

  private storeForwarding(forwarding: Forwarding | null) {
    this.state.forwarding = forwarding;
    this.deps.changed(this.key, { header: true });
    this.deps.notify({ type: 'forwarding', account: this.key, forwarding: this.forwarding() });
    return this.forwarding();
  }

  faults(): Faults {
    return faultsOf(this.state);
  }

  setFaults(body: unknown): Faults {
    this.state.faults = parse(faultsSchema, body);
    this.deps.changed(this.key, { header: true });
    return this.faults();
  }

  /**
   * The deliveries to attempt now: first attempts in the order they were raised, then retries whose time has come.
   * A first attempt waits until every earlier event of the same VA payment or client has had its first attempt, so
   * receivers see them in order. A generator: the deliverer stops reading once its slots are full, so a backlog to
   * a dead receiver costs nothing while every slot waits on it; a retry is taken off its queue once read past.
   */
  *dueDeliveries(inFlight: ReadonlySet<string>): Generator<DueDelivery> {
    const blocked = new Set<string>();
    for (const id of this.firstAttempts) {
      const delivery = this.state.deliveries[id]!;
      const event = this.state.events[delivery.eventId]!;
      const source = event.vaPaymentId ?? event.clientId ?? event.id;
      const waiting = blocked.has(source);
      blocked.add(source);
      if (!waiting && !inFlight.has(id)) yield this.dueDelivery(delivery, event);
    }
    const now = this.nowMs();
    for (let item = this.nextRetry(inFlight); item && item.at <= now; item = this.nextRetry(inFlight)) {
      const delivery = this.state.deliveries[item.key]!;
      yield this.dueDelivery(delivery, this.state.events[delivery.eventId]!);
      this.retries.pop();
    }
  }

  private dueDelivery(delivery: Delivery, event: SandboxEvent): DueDelivery {
    return { delivery, event, headers: callbackHeaders(event), url: attemptUrl(delivery, this.state) ?? '' };
  }

  /** When the next retry is due (the account's clock), or null. */
  nextRetryAt(inFlight: ReadonlySet<string>): number | null {
    return this.nextRetry(inFlight)?.at ?? null;
  }

  /** The queue's first retry still waiting as queued (entries left by a later attempt or a reset are dropped). */
  private nextRetry(inFlight: ReadonlySet<string>): { at: number; key: string } | undefined {
    for (let item = this.retries.peek(); item; item = this.retries.peek()) {
      const delivery = this.state.deliveries[item.key];
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
    const next = recordAttempt(this.deps.policy, delivery, full, this.now());
    this.listDelivery(next, delivery);
    this.put('deliveries', next.id, next);
    this.trackOpen(next);
    this.notifyDelivery(next, full);
    return next;
  }

  private notifyDelivery(delivery: Delivery, attempt: Attempt | null): void {
    const { vaPaymentId, clientId, body } = this.state.events[delivery.eventId]!;
    this.deps.notify({ type: 'delivery', account: this.key, delivery: deliveryView(delivery), attempt, event: { vaPaymentId, clientId, body } });
  }

  // --- idempotency -------------------------------------------------------------------------------

  idempotent(key: string) {
    return this.state.idempotency[key];
  }

  remember(key: string, fingerprint: string, status: number, body: unknown): void {
    const createdAt = this.now();
    this.put('idempotency', key, { fingerprint, status, body, createdAt });
    this.due.push(ms(createdAt) + IDEMPOTENCY_TTL_MS, `idempotency:${key}`);
  }
}

/**
 * Free pool CVUs are lent released longest ago first; those released at the same time by CVU, so the order is the
 * same whether the pool was indexed from its records or kept while running.
 */
const lendingOrder = (a: PoolCvu, b: PoolCvu): number =>
  a.releasedAt! < b.releasedAt! ? -1 : a.releasedAt! > b.releasedAt! ? 1 : a.cvu < b.cvu ? -1 : a.cvu > b.cvu ? 1 : 0;

/** The key of an amount lock: amounts are locked per hub. */
const amountLock = (hubId: number, amount: Cents): string => `${hubId}:${amount}`;

/** The groups a VA payment's list filters read (see `Lists`). */
const paymentGroups = (payment: VaPayment): string[] => [
  `status:${payment.status}`,
  ...(payment.clientId === null ? [] : [`clientId:${payment.clientId}`]),
  ...(payment.clientTaxId === null ? [] : [`clientTaxId:${payment.clientTaxId}`]),
  ...(payment.externalReference === null ? [] : [`externalReference:${payment.externalReference}`]),
];

const deliveryGroups = (delivery: Delivery): string[] => [`status:${delivery.status}`, `eventType:${delivery.eventType}`];

/** Moves a record between groups: `made` and grouped when new (`before` undefined), else out of the groups it left. */
function regroup(lists: Lists, id: string, groups: string[], before: string[] | undefined): void {
  if (before === undefined) lists.made(id);
  for (const group of before ?? []) if (!groups.includes(group)) lists.remove(group, id);
  for (const group of groups) if (!before?.includes(group)) lists.add(group, id);
}

/** A due-queue key, `kind:id` (an idempotency key may itself hold colons). */
function splitKey(key: string): [string, string] {
  const at = key.indexOf(':');
  return [key.slice(0, at), key.slice(at + 1)];
}

function push<K extends string | number, V>(map: Index<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}
