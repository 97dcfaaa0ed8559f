import { iso, ms } from '../conventions/index.js';
import type { Attempt, Delivery, SandboxEvent } from '../records/index.js';
import type { DeliveryPolicy } from '../store/index.js';

export const defaultDeliveryPolicy: DeliveryPolicy = { maxAttempts: 3, retryDelays: [5, 25] };

/**
 * A delivery of an event, kept before its first attempt; an event with nowhere to go is `dropped`. A redelivery may
 * name another URL for itself (`redeliverTo`), which also gives a dropped event somewhere to go.
 */
export function newDelivery(
  event: SandboxEvent,
  id: string,
  now: string,
  redeliveryOf: string | null = null,
  redeliverTo: string | null = null,
): Delivery {
  const dropped = event.url === null && redeliverTo === null;
  return {
    id,
    eventId: event.id,
    eventType: event.eventType,
    url: event.url,
    status: dropped ? 'dropped' : 'pending',
    reason: dropped ? event.droppedReason : null,
    attempts: [],
    nextAttemptAt: dropped ? null : now,
    redeliveryOf,
    ...(redeliverTo === null ? {} : { redeliverTo }),
    createdAt: now,
    updatedAt: now,
  };
}

/** A dropped event's first delivery, which is not stored: the event itself, under its id (see `DeliveryLog.of`). */
export const droppedDelivery = (event: SandboxEvent): Delivery => newDelivery(event, event.id, event.createdAt);

/** When the attempt after `failedAttempts` failures is due, or null when they are exhausted. */
function nextAttemptAt(policy: DeliveryPolicy, failedAttempts: number, failedAt: string): string | null {
  if (failedAttempts >= policy.maxAttempts) return null;
  const delay = policy.retryDelays[failedAttempts - 1] ?? policy.retryDelays.at(-1) ?? 0;
  return iso(ms(failedAt) + delay * 1000);
}

/**
 * Spec 3.3: pending -> delivered on 2xx; otherwise retrying, and failed once attempts are exhausted. A fault's extra
 * send (`duplicate`) is logged with the others and changes nothing else.
 */
export function recordAttempt(
  policy: DeliveryPolicy,
  delivery: Delivery,
  outcome: Omit<Attempt, 'n'>,
  now: string,
): Delivery {
  const attempt: Attempt = { ...outcome, n: delivery.attempts.length + 1 };
  const attempts = [...delivery.attempts, attempt];
  if (attempt.fault) return { ...delivery, attempts, updatedAt: now };
  if (attempt.error === null) {
    return { ...delivery, attempts, status: 'delivered', nextAttemptAt: null, updatedAt: now };
  }
  const next = nextAttemptAt(policy, attempts.slice(delivery.attemptsBefore ?? 0).filter((a) => !a.fault).length, now);
  return { ...delivery, attempts, status: next === null ? 'failed' : 'retrying', nextAttemptAt: next, updatedAt: now };
}

export const isOpen = (delivery: Delivery): boolean => delivery.status === 'pending' || delivery.status === 'retrying';

/** Why a held delivery waits (contract part 5): an imported file's URLs are never called unless the user says so. */
const HELD_REASON = 'came with an imported file: sent only when released';

/** An open delivery of an imported file, kept as it was but never attempted (`held`) until `release`. */
export const hold = (delivery: Delivery): Delivery => ({
  ...delivery,
  status: 'held',
  reason: HELD_REASON,
  nextAttemptAt: null,
});

/** Why a delivery raised after an import waits: the account is held until its held deliveries are released. */
const HELD_RAISED_REASON = 'raised in an imported account: sent only when released';

/**
 * The first delivery of an event raised while the account is held (`heldSince`): held, or, while a forwarding URL is
 * set, pinned to it (`redeliverTo`), so its retries never fall back to the event's URL should forwarding stop.
 */
export const holdRaised = (delivery: Delivery, forwardingUrl: string | undefined): Delivery =>
  forwardingUrl === undefined
    ? { ...hold(delivery), reason: HELD_RAISED_REASON }
    : { ...delivery, redeliverTo: forwardingUrl };

/**
 * A held delivery let go: pending now, its next attempt a first one (in raise order, and with every attempt of the
 * policy: those made before the import are not counted), to `url` if given for this delivery.
 */
export function release(delivery: Delivery, now: string, url: string | undefined): Delivery {
  const attemptsBefore = delivery.attempts.length;
  return {
    ...delivery,
    status: 'pending',
    reason: null,
    nextAttemptAt: now,
    ...(url === undefined ? {} : { redeliverTo: url }),
    ...(attemptsBefore === 0 ? {} : { attemptsBefore }),
    updatedAt: now,
  };
}

/** The headers every attempt of an event carries (spec 6.2, and the contract's VA twin of it). */
export function callbackHeaders(event: Pick<SandboxEvent, 'id' | 'eventType'>): Record<string, string> {
  return {
    'Content-Type': 'application/json',
    'User-Agent': event.eventType === 'client.cashin' ? 'Service-Client-Callback/1.0' : 'Service-VA-Callback/1.0',
    'X-Service-Event-Id': event.id,
    'X-Service-Event-Type': event.eventType,
  };
}
