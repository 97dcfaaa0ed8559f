import { type Cents, fromCents, iso, ms, notFound, SandboxError, UUID_PATTERN } from '../conventions/index.js';
import type { Hubs } from '../hubs/index.js';
import {
  amountLock,
  type CallbackDeliverySummary,
  counting,
  createVaPaymentSchema,
  listVaPaymentsQuery,
  NO_EVENTS,
  type PoolCvu,
  parse,
  type SandboxEvent,
  VA_PAYMENT_FILTERS,
  type VaPayment,
  vaPaymentView,
} from '../records/index.js';
import { type AccountContext, pageOf, whereOf } from '../store/index.js';
import * as va from './va-payment.js';

/** What the payments take of the callbacks part, which stands above them: raising a payment's events, and their summary. */
interface PaymentEvents {
  raiseVaEvent(payment: VaPayment, draft: va.VaEventDraft): SandboxEvent;
  of(source: string): SandboxEvent[];
}
interface PaymentDeliveries {
  summary(events: readonly SandboxEvent[]): CallbackDeliverySummary;
}

/**
 * VA payments: their records, found by the columns `COLUMNS` declares (the active one on a CVU or amount, the list
 * filters, the expiries). Their life cycle is `va-payment.ts`'s pure transitions; this stores each one and raises
 * its events; a payment that ends frees its CVU or amount.
 */
export class VaPayments {
  constructor(
    private readonly ctx: AccountContext,
    private readonly hubs: Hubs,
    private readonly events: PaymentEvents,
    private readonly log: PaymentDeliveries,
  ) {}

  createVaPayment(body: unknown) {
    const input = parse(createVaPaymentSchema, body);
    if (input.currency !== 'ARS') {
      throw new SandboxError(
        'UNSUPPORTED_CURRENCY',
        `Currency ${input.currency} is not supported: VA payments are ARS only`,
        ['currency: must be ARS'],
      );
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
    const place =
      input.lockMode === 'amount'
        ? { cvu: hub.collectionCvu, alias: hub.collectionAlias }
        : this.hubs.reservePoolCvu(id);
    const { payment, events } = va.createVaPayment(input, {
      id,
      ...place,
      now: iso(now),
      expiresAt: iso(now + input.ttlSeconds * 1000),
    });
    this.ctx.put('vaPayments', payment.id, payment);
    // Just made, its one event (`created`) and that event's delivery before any attempt are its whole summary.
    return vaPaymentView(payment, counting(NO_EVENTS, this.events.raiseVaEvent(payment, events[0]!)));
  }

  getVaPayment(id: string) {
    return this.viewOf(this.payment(id));
  }

  listVaPayments(query: Record<string, string>) {
    const q = parse(listVaPaymentsQuery, query, 'query');
    return pageOf(this.ctx.records, 'vaPayments', whereOf(VA_PAYMENT_FILTERS, q), q, (p) => this.viewOf(p));
  }

  cancelVaPayment(id: string) {
    return this.viewOf(this.apply(va.cancel(this.payment(id), this.ctx.now())).payment);
  }

  /** Expires a payment fallen due, unless it ended or its time changed since. */
  expireDue(id: string, at: number): boolean {
    const payment = this.ctx.get('vaPayments', id);
    if (!payment || !va.isActive(payment) || ms(payment.expiresAt) !== at) return false;
    this.apply(va.expire(payment, payment.expiresAt));
    return true;
  }

  /** The payment a transfer may pay: the active amount-locked one waiting for exactly this gross total. */
  lockedBy(hubId: number, total: Cents): VaPayment | undefined {
    return this.ctx.records.find('vaPayments', { where: { amount_lock: amountLock(hubId, total) } });
  }

  /** The active payment a pool CVU is lent to, if any. */
  holding(cvu: PoolCvu): VaPayment | undefined {
    const payment = cvu.vaPaymentId === null ? undefined : this.ctx.get('vaPayments', cvu.vaPaymentId);
    return payment && va.isActive(payment) ? payment : undefined;
  }

  /** Stores a transition's payment, releases its CVU when it ends, and raises its events (returned, in order). */
  apply(transition: va.Transition): { payment: VaPayment; events: SandboxEvent[] } {
    const payment = transition.payment;
    this.ctx.put('vaPayments', payment.id, payment);
    if (!va.isActive(payment) && payment.lockMode !== 'amount') this.hubs.releasePoolCvu(payment);
    return { payment, events: transition.events.map((draft) => this.events.raiseVaEvent(payment, draft)) };
  }

  private payment(id: string): VaPayment {
    const payment = UUID_PATTERN.test(id) ? this.ctx.get('vaPayments', id) : undefined;
    if (!payment) throw notFound('VA payment', id);
    return payment;
  }

  private viewOf(payment: VaPayment) {
    return vaPaymentView(payment, this.log.summary(this.events.of(payment.id)));
  }
}
