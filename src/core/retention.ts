import { ms } from './clock.js';
import type { AccountState } from './state.js';
import { isActive } from './va-payment.js';

/** A day of sandbox clock, in ms. */
export const DAY_MS = 24 * 3600 * 1000;

/**
 * Retention (`start --keep D`, contract part 5): the account's state without the VA payments that ended before
 * `before` (sandbox ms), their events, those events' deliveries and the transfers credited to them, nor returned
 * transfers older than that; clients, ledger entries and invoices stay whole. Null when nothing is that old.
 */
export function pruned(state: AccountState, before: number): AccountState | null {
  const ended = (time: string | null) => time !== null && ms(time) < before;
  const gone = new Set(
    Object.values(state.vaPayments)
      .filter((p) => !isActive(p) && ended(p.completedAt ?? p.expiredAt ?? p.cancelledAt ?? p.updatedAt))
      .map((p) => p.id),
  );
  const returned = Object.values(state.transfers).filter((t) => t.target === null && ended(t.createdAt));
  if (gone.size === 0 && returned.length === 0) return null;
  const keep = <T>(table: Record<string, T>, kept: (record: T) => boolean) => Object.fromEntries(Object.entries(table).filter(([, record]) => kept(record)));
  const events = keep(state.events, (e) => e.vaPaymentId === null || !gone.has(e.vaPaymentId));
  return {
    ...state,
    vaPayments: keep(state.vaPayments, (p) => !gone.has(p.id)),
    events,
    deliveries: keep(state.deliveries, (d) => d.eventId in events),
    transfers: keep(state.transfers, (t) => (t.target === null ? !ended(t.createdAt) : !(t.target.type === 'va_payment' && gone.has(t.target.id)))),
  };
}
