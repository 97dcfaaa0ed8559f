import { z } from 'zod';
import {
  type AccountState,
  type Delivery,
  EVENT_TYPES,
  type EventType,
  type Faults,
  type Forwarding,
  type ForwardingView,
  httpUrl,
} from '../records/index.js';

/**
 * `PUT /sandbox/v1/forwarding`: every callback attempt of the account goes to `url` until it is deleted; with
 * `events`, only the attempts of those event types do (the others go to their own URLs, as with forwarding off).
 */
export const forwardingSchema = z.strictObject({
  url: httpUrl,
  events: z
    .array(z.enum(EVENT_TYPES))
    .min(1)
    .optional()
    .describe('Only callbacks of these event types are forwarded; absent: every one'),
});

/** `PUT /sandbox/v1/faults`: the whole setting; a field left out is off. */
export const faultsSchema = z.strictObject({
  duplicate: z.boolean().default(false),
  delayMs: z.number().int().min(0).max(10_000).default(0),
  shuffle: z.boolean().default(false),
});

/** `POST /sandbox/v1/deliveries/{id}/redeliver`: optionally, another URL for this one delivery. */
export const redeliverSchema = z.strictObject({ url: httpUrl.optional() });

const NO_FAULTS: Faults = { duplicate: false, delayMs: 0, shuffle: false };

export const forwardingView = (forwarding: Forwarding | null | undefined): ForwardingView => ({
  url: forwarding?.url ?? null,
  events: forwarding?.events ?? null,
  since: forwarding?.since ?? null,
});

/** The forwarding URL for a callback of this event type: none when forwarding is off or leaves that type out. */
export const forwardingUrl = (head: Pick<AccountState, 'forwarding'>, eventType: EventType): string | undefined => {
  const forwarding = head.forwarding;
  if (!forwarding || (forwarding.events && !forwarding.events.includes(eventType))) return undefined;
  return forwarding.url;
};

export const faultsOf = (head: Pick<AccountState, 'faults'>): Faults => head.faults ?? NO_FAULTS;

/**
 * Where a delivery's next attempt goes: the URL its redelivery named, else the account's forwarding URL (if it
 * forwards this event type), else the URL the event was routed to.
 */
export const attemptUrl = (delivery: Delivery, head: Pick<AccountState, 'forwarding'>): string | null =>
  delivery.redeliverTo ?? forwardingUrl(head, delivery.eventType) ?? delivery.url;
