import { z } from 'zod';
import { httpUrl } from './schemas.js';
import type { AccountState, Delivery, Faults, Forwarding } from './state.js';
import type { ForwardingView } from './views.js';

/** `PUT /sandbox/v1/forwarding`: every callback attempt of the account goes to `url` until it is deleted. */
export const forwardingSchema = z.strictObject({ url: httpUrl });

/** `PUT /sandbox/v1/faults`: the whole setting; a field left out is off. */
export const faultsSchema = z.strictObject({
  duplicate: z.boolean().default(false),
  delayMs: z.number().int().min(0).max(10_000).default(0),
  shuffle: z.boolean().default(false),
});

/** `POST /sandbox/v1/deliveries/{id}/redeliver`: optionally, another URL for this one delivery. */
export const redeliverSchema = z.strictObject({ url: httpUrl.optional() });

export const NO_FAULTS: Faults = { duplicate: false, delayMs: 0, shuffle: false };

export const forwardingView = (forwarding: Forwarding | null | undefined): ForwardingView => ({ url: forwarding?.url ?? null, since: forwarding?.since ?? null });

export const faultsOf = (head: Pick<AccountState, 'faults'>): Faults => head.faults ?? NO_FAULTS;

/**
 * Where a delivery's next attempt goes: the URL its redelivery named, else the account's forwarding URL, else the
 * URL the event was routed to.
 */
export const attemptUrl = (delivery: Delivery, head: Pick<AccountState, 'forwarding'>): string | null =>
  delivery.redeliverTo ?? head.forwarding?.url ?? delivery.url;
