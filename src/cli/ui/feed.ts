import { defaultDeliveryPolicy } from '../../core/callbacks/deliveries.js';
import { outcome } from '../commands/deliveries.js';
import { ars, pad, paint, status } from '../render.js';
import type { LiveMessage } from './live.js';

/** The feed keeps the latest lines only, so a burst of deliveries costs a bounded amount of memory and rendering. */
export const FEED_CAP = 1000;

/** Contract part 4: at most 3 attempts per delivery. */
const MAX_ATTEMPTS = defaultDeliveryPolicy.maxAttempts;

/** A line of the feed: a message of the stream, numbered in order of arrival, at the sandbox time it shows. */
export interface FeedEntry {
  seq: number;
  message: LiveMessage;
  at: string;
}

/**
 * The sandbox time a line shows: a delivery's attempt, or for one read from the log its last change (a delivery made
 * early may have been retried after later ones); null for a line with no time of its own.
 */
function timeOf(message: LiveMessage): string | null {
  if (message.type === 'delivery') return message.attempt?.startedAt ?? message.delivery.updatedAt;
  if (message.type === 'forwarding') return message.forwarding.since;
  if (message.type === 'apiFaults') return message.apiFaults.faulted?.at ?? null;
  return message.type === 'event' ? message.event.createdAt : message.transfer.createdAt;
}

/**
 * The feed with `messages` put in by their time (a line with the same time, or none, goes after those there), the
 * oldest lines dropped past `cap`.
 */
export function appendToFeed(entries: FeedEntry[], messages: LiveMessage[], cap = FEED_CAP): FeedEntry[] {
  if (messages.length === 0) return entries;
  let seq = Math.max(-1, ...entries.map((entry) => entry.seq));
  const next = [...entries];
  for (const message of messages) {
    const at = timeOf(message) ?? next.at(-1)?.at ?? '';
    let index = next.length;
    while (index > 0 && next[index - 1]!.at > at) index--;
    next.splice(index, 0, { seq: ++seq, message, at });
  }
  return next.length > cap ? next.slice(next.length - cap) : next;
}

/** The delivery a line is about (an event's first delivery), for opening and redelivering it. */
export function deliveryOf(message: LiveMessage) {
  if (message.type === 'delivery') return message.delivery;
  if (message.type === 'event') return message.event.deliveries[0] ?? null;
  return null;
}

/** Sandbox time of day: the feed spans minutes, the date is in the header's clock. */
const time = (iso: string): string => paint('dim', iso.slice(11, 19));

export function feedLine(message: LiveMessage): string {
  if (message.type === 'delivery') {
    const { delivery, attempt } = message;
    // A delivery read from the log (not live) has no attempt of its own: its last one speaks for it.
    const n = attempt?.n ?? delivery.attempts;
    const first = delivery.status === 'held' ? 'not sent' : delivery.redeliveryOf ? 'redelivery' : 'queued';
    const what = n === 0 ? first : `attempt ${n}/${MAX_ATTEMPTS}`;
    const got = attempt ?? { responseStatus: delivery.lastResponseStatus, error: delivery.lastError };
    return [
      time(timeOf(message)!),
      pad(status(delivery.status), 9),
      pad(delivery.eventType, 16),
      pad(what, 11),
      pad(n === 0 ? '' : outcome(got), 10),
      pad(attempt ? `${attempt.durationMs} ms` : '', 7, true),
      // A forwarded attempt shows where it went; the configured URL is in the delivery's detail.
      (attempt ? attempt.forwardedTo : delivery.forwardedTo)
        ? `=> ${attempt?.forwardedTo ?? delivery.forwardedTo}`
        : (delivery.url ?? delivery.reason),
    ].join(' ');
  }
  if (message.type === 'forwarding') {
    const { url, since } = message.forwarding;
    return [
      time(since ?? ''),
      pad(paint('cyan', 'forward'), 9),
      url === null ? 'off: callbacks go to their own URLs' : `every callback => ${url}`,
    ].join(' ');
  }
  if (message.type === 'apiFaults') {
    const { faulted, active } = message.apiFaults;
    if (faulted)
      return [
        time(faulted.at),
        pad(paint('red', 'fault'), 9),
        pad(faulted.fault, 16),
        `${faulted.method} ${faulted.path}`,
      ].join(' ');
    return [' '.repeat(8), pad(paint('red', 'fault'), 9), `api fault rules: ${active} on`].join(' ');
  }
  if (message.type === 'event') {
    const { event } = message;
    const where = event.url === null ? paint('gray', `dropped: ${event.droppedReason}`) : `-> ${event.url}`;
    return [time(event.createdAt), pad(paint('cyan', 'event'), 9), pad(event.eventType, 16), where].join(' ');
  }
  const { transfer } = message;
  const target = transfer.target ? `${transfer.target.type} ${transfer.target.id}` : transfer.reason;
  return [
    time(transfer.createdAt),
    pad(paint('cyan', 'transfer'), 9),
    pad(ars(transfer.total), 16),
    `to ${transfer.to}`,
    status(transfer.outcome),
    target,
  ].join(' ');
}
