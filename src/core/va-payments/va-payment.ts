import { type Cents, SandboxError } from '../conventions/index.js';
import {
  atCreation,
  type CashIn,
  type Changing,
  type CreateVaPaymentInput,
  createVaPaymentSchema,
  isActive,
  type VaEventType,
  type VaPayment,
} from '../records/index.js';

/** The VA payment lifecycle (contract 2.3) as pure transitions: each returns the next payment and its events. */

export interface VaEventDraft {
  eventType: VaEventType;
  /** Set on the events a transfer raises: the transfer credited. */
  cashIn?: CashIn;
}

export interface Transition {
  payment: VaPayment;
  events: VaEventDraft[];
}
export { isActive } from '../records/index.js';

/** Only `amount` and `amount_and_time` locks look at the transfer's amount: its gross total must match. */
export const acceptsTotal = (payment: VaPayment, total: Cents): boolean =>
  payment.lockMode === 'time' || payment.amount === total;

/** The request's fields a payment keeps as given (null where absent): each needs no line of its own here. */
type Given = Exclude<
  keyof CreateVaPaymentInput,
  'paymentHubId' | 'currency' | 'lockMode' | 'amount' | 'ttlSeconds' | 'clientId' | 'metadata'
>;
const OWN_LINE: string[] = [
  'paymentHubId',
  'currency',
  'lockMode',
  'amount',
  'ttlSeconds',
  'clientId',
  'metadata',
] satisfies Exclude<keyof CreateVaPaymentInput, Given>[];
const GIVEN = Object.keys(createVaPaymentSchema.shape).filter((name) => !OWN_LINE.includes(name)) as Given[];
const given = (input: CreateVaPaymentInput) =>
  Object.fromEntries(GIVEN.map((name) => [name, input[name] ?? null])) as {
    [K in Given]: Exclude<CreateVaPaymentInput[K], undefined>;
  };

export function createVaPayment(
  input: CreateVaPaymentInput,
  place: { id: string; cvu: string; alias: string; now: string; expiresAt: string },
): Transition {
  const payment: VaPayment = {
    id: place.id,
    status: 'waiting',
    lockMode: input.lockMode,
    amount: input.amount ?? null,
    currency: 'ARS',
    ttlSeconds: input.ttlSeconds,
    expiresAt: place.expiresAt,
    cvu: place.cvu,
    alias: place.alias,
    clientId: input.clientId?.toLowerCase() ?? null,
    ...given(input),
    metadata: input.metadata ?? {},
    paymentHubId: input.paymentHubId,
    totalReceived: 0,
    receivedAmount: 0,
    cashIns: [],
    createdAt: place.now,
    updatedAt: place.now,
    completedAt: null,
    cancelledAt: null,
    expiredAt: null,
  };
  return { payment, events: [{ eventType: 'created' }] };
}

/** A payment as `createVaPayment` made it: every field the lifecycle changes at its value on creation (`atCreation`). */
export const asCreated = (payment: VaPayment): VaPayment => ({ ...payment, ...atCreation(payment) });

/**
 * The one way a transition changes a payment: only the fields its record declares changing (`CHANGING`), and only while
 * it is active. A payment that ended never changes again, so its `cancelled` or `failed` body, rendered from it, stays
 * the body raised; and a `created` body is rendered with the changing fields at their creation values.
 */
function changed(payment: VaPayment, change: Partial<Pick<VaPayment, Changing>>): VaPayment {
  if (!isActive(payment))
    throw new Error(`VA payment ${payment.id} is ${payment.status}: a payment that ended never changes`);
  return { ...payment, ...change };
}

/** A payment's status once `totalReceived` (G, gross) is credited: an open amount is completed by any transfer. */
export const statusAfter = (amount: Cents | null, totalReceived: Cents): 'completed' | 'underpaid' | 'overpaid' =>
  amount === null || totalReceived === amount ? 'completed' : totalReceived < amount ? 'underpaid' : 'overpaid';

/** Credits a transfer: G is the sum of credited gross totals, and status follows G against the amount. */
export function creditTransfer(payment: VaPayment, cashIn: CashIn, now: string): Transition {
  if (!isActive(payment)) throw new SandboxError('INVALID_STATE', `VA payment ${payment.id} is ${payment.status}`);
  const totalReceived = payment.totalReceived + cashIn.total;
  const status = statusAfter(payment.amount, totalReceived);
  const outcome: VaEventType = status === 'completed' ? 'succeeded' : status;
  const next = changed(payment, {
    status,
    totalReceived,
    receivedAmount: payment.receivedAmount + cashIn.incomingAmount,
    cashIns: [...payment.cashIns, cashIn],
    updatedAt: now,
    completedAt: status === 'underpaid' ? null : now,
  });
  return {
    payment: next,
    events: [
      { eventType: 'cash_in_received', cashIn },
      { eventType: outcome, cashIn },
    ],
  };
}

export function expire(payment: VaPayment, now: string): Transition {
  if (!isActive(payment)) return { payment, events: [] };
  return {
    payment: changed(payment, { status: 'expired', expiredAt: now, updatedAt: now }),
    events: [{ eventType: 'failed' }],
  };
}

export function cancel(payment: VaPayment, now: string): Transition {
  if (!isActive(payment)) {
    throw new SandboxError(
      'INVALID_STATE',
      `VA payment ${payment.id} is ${payment.status}; only waiting or underpaid payments can be cancelled`,
      [`status: is ${payment.status}`],
    );
  }
  return {
    payment: changed(payment, { status: 'cancelled', cancelledAt: now, updatedAt: now }),
    events: [{ eventType: 'cancelled' }],
  };
}

/** A VA payment "names a client" when clientId or clientTaxId is set (contract 2.1). */
const namesClient = (payment: VaPayment): boolean => payment.clientId !== null || payment.clientTaxId !== null;

/** Spec 6.1 routing: the URL an event goes to, or null and why it is dropped. */
export function route(
  payment: VaPayment,
  eventType: VaEventType,
): { url: string | null; droppedReason: string | null } {
  if (payment.callbackUrl !== null) return { url: payment.callbackUrl, droppedReason: null };
  if (payment.successUrl === null || payment.failureUrl === null) {
    return { url: null, droppedReason: 'no callbackUrl or successUrl/failureUrl configured' };
  }
  switch (eventType) {
    case 'succeeded':
      return { url: payment.successUrl, droppedReason: null };
    case 'failed':
    case 'cancelled':
      return { url: payment.failureUrl, droppedReason: null };
    case 'underpaid':
    case 'overpaid':
      return { url: namesClient(payment) ? payment.successUrl : payment.failureUrl, droppedReason: null };
    case 'created':
    case 'cash_in_received':
      return { url: null, droppedReason: `${eventType} is not delivered when successUrl/failureUrl are configured` };
  }
}
