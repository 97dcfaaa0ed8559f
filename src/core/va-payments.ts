import type { AccountContext } from './account-context.js';
import { iso, ms } from './clock.js';
import type { DeliveryLog } from './delivery-log.js';
import type { DueWork } from './due-work.js';
import { notFound, SandboxError } from './errors.js';
import type { Events } from './events.js';
import type { Hubs } from './hubs.js';
import { UUID_PATTERN } from './ids.js';
import { filtered, Lists, regroup } from './lists.js';
import { fromCents, type Cents } from './money.js';
import { pageOf } from './pagination.js';
import { createVaPaymentSchema, listVaPaymentsQuery, parse } from './schemas.js';
import { VA_PAYMENT_STATUSES, type VaPayment } from './state.js';
import * as va from './va-payment.js';
import { vaPaymentView } from './views.js';

/**
 * VA payments: their records and lookups (the active ones, amount locks, the list filters). Their life cycle is
 * `va-payment.ts`'s pure transitions; this stores each one, holds and releases the CVU or amount it locks, and
 * raises its events.
 */
export class VaPayments {
  private readonly active = new Set<string>();
  /** The active amount-locked payment waiting for each amount of each hub (`hubId:cents`): at most one, by AMOUNT_LOCK_CONFLICT. */
  private readonly amountLocks = new Map<string, string>();
  /** Payments by what their list filters on (`paymentGroups`). */
  private readonly lists = new Lists();

  constructor(
    private readonly ctx: AccountContext,
    private readonly hubs: Hubs,
    private readonly events: Events,
    private readonly log: DeliveryLog,
    private readonly due: DueWork,
  ) {}

  /** Indexes the account's payments. */
  build(): void {
    for (const payment of Object.values(this.ctx.state.vaPayments)) {
      regroup(this.lists, payment.id, paymentGroups(payment), undefined);
      if (va.isActive(payment)) this.trackActive(payment);
    }
  }

  createVaPayment(body: unknown) {
    const input = parse(createVaPaymentSchema, body);
    if (input.currency !== 'ARS') {
      throw new SandboxError('UNSUPPORTED_CURRENCY', `Currency ${input.currency} is not supported: VA payments are ARS only`, [
        'currency: must be ARS',
      ]);
    }
    const hub = this.hubs.hubFor(input.paymentHubId);
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
    const now = this.ctx.nowMs();
    const id = this.ctx.uuid();
    const place = input.lockMode === 'amount' ? { cvu: hub.collectionCvu, alias: hub.collectionAlias } : this.hubs.reservePoolCvu(id);
    const transition = va.createVaPayment(input, { id, ...place, now: iso(now), expiresAt: iso(now + input.ttlSeconds * 1000) });
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
    const { lists } = this;
    const groups = [
      q.status === undefined ? undefined : lists.anyOf(q.status.map((status) => `status:${status}`)),
      q.clientId === undefined ? undefined : lists.group(`clientId:${q.clientId.toLowerCase()}`),
      q.clientTaxId === undefined ? undefined : lists.group(`clientTaxId:${q.clientTaxId}`),
      q.externalReference === undefined ? undefined : lists.group(`externalReference:${q.externalReference}`),
    ];
    const render = (p: VaPayment) => this.viewOf(p);
    // Unfiltered, newest first: merged from the ends of the status groups, so a page costs its page, not the table.
    if (groups.every((group) => group === undefined) && from === null && to === null) {
      const { vaPayments } = this.ctx.state;
      return pageOf(lists.newestOf(EVERY_STATUS), lists.sizeOf(EVERY_STATUS), q, (id) => render(vaPayments[id]!));
    }
    return filtered(this.ctx.state.vaPayments, groups, [from, to], matches, q, render);
  }

  cancelVaPayment(id: string) {
    return this.viewOf(this.apply(va.cancel(this.payment(id), this.ctx.now())));
  }

  /** Expires a payment fallen due, unless it ended or its time changed since. */
  expireDue(id: string, at: number): boolean {
    const payment = this.ctx.state.vaPayments[id];
    if (!payment || !this.active.has(id) || ms(payment.expiresAt) !== at) return false;
    this.apply(va.expire(payment, payment.expiresAt));
    return true;
  }

  /** The payment a transfer may pay: the active amount-locked one waiting for exactly this gross total. */
  lockedBy(hubId: number, total: Cents): VaPayment | undefined {
    const id = this.amountLocks.get(amountLock(hubId, total));
    return id === undefined ? undefined : this.ctx.state.vaPayments[id];
  }

  /** Stores a transition's payment, releases its lock when it ends, and raises its events. */
  apply(transition: va.Transition): VaPayment {
    const payment = transition.payment;
    const before = this.ctx.state.vaPayments[payment.id];
    regroup(this.lists, payment.id, paymentGroups(payment), before && paymentGroups(before));
    this.ctx.put('vaPayments', payment.id, payment);
    if (!va.isActive(payment) && this.active.delete(payment.id)) this.releaseLock(payment);
    for (const draft of transition.events) this.events.raiseVaEvent(payment, draft);
    return payment;
  }

  private payment(id: string): VaPayment {
    const payment = UUID_PATTERN.test(id) ? this.ctx.state.vaPayments[id] : undefined;
    if (!payment) throw notFound('VA payment', id);
    return payment;
  }

  private trackActive(payment: VaPayment): void {
    this.active.add(payment.id);
    this.due.schedule(ms(payment.expiresAt), 'expiry', payment.id);
    if (payment.lockMode === 'amount') this.amountLocks.set(amountLock(payment.paymentHubId, payment.amount!), payment.id);
  }

  private releaseLock(payment: VaPayment): void {
    if (payment.lockMode === 'amount') this.amountLocks.delete(amountLock(payment.paymentHubId, payment.amount!));
    else this.hubs.releasePoolCvu(payment);
  }

  private viewOf(payment: VaPayment) {
    return vaPaymentView(payment, this.log.summary(this.events.of(payment.id)));
  }
}

/** Every payment is in exactly one of these groups. */
const EVERY_STATUS = VA_PAYMENT_STATUSES.map((status) => `status:${status}`);

/** The key of an amount lock: amounts are locked per hub. */
const amountLock = (hubId: number, amount: Cents): string => `${hubId}:${amount}`;

/** The groups a VA payment's list filters read (see `Lists`). */
const paymentGroups = (payment: VaPayment): string[] => [
  `status:${payment.status}`,
  ...(payment.clientId === null ? [] : [`clientId:${payment.clientId}`]),
  ...(payment.clientTaxId === null ? [] : [`clientTaxId:${payment.clientTaxId}`]),
  ...(payment.externalReference === null ? [] : [`externalReference:${payment.externalReference}`]),
];
