import { ms } from '../conventions/index.js';
import { isActive } from '../records/index.js';
import type { Repository } from '../store/index.js';

/** A day of sandbox clock, in ms. */
export const DAY_MS = 24 * 3600 * 1000;

/**
 * Retention (`start --keep D`, contract part 5): removes the VA payments that ended before `before` (sandbox ms),
 * their events, those events' deliveries and the transfers credited to them, and returned transfers older than that;
 * clients, ledger entries and invoices stay whole. Only payments made before `before` are read (one that ended
 * then was made before). Whether anything went.
 */
export function prune(records: Repository, before: number): boolean {
  const ended = (time: string | null) => time !== null && ms(time) < before;
  let gone = false;
  for (const payment of records.each('vaPayments', { where: { created_at: { to: before - 1 } } })) {
    if (
      isActive(payment) ||
      !ended(payment.completedAt ?? payment.expiredAt ?? payment.cancelledAt ?? payment.updatedAt)
    )
      continue;
    for (const event of records.each('events', { where: { source: payment.id } })) {
      for (const delivery of records.each('deliveries', { where: { event_id: event.id } }))
        records.drop('deliveries', delivery.id);
      records.drop('events', event.id);
    }
    for (const transfer of records.each('transfers', { where: { target: payment.id } }))
      records.drop('transfers', transfer.id);
    records.drop('vaPayments', payment.id);
    gone = true;
  }
  for (const transfer of records.each('transfers', { where: { returned_at: { to: before - 1 } } })) {
    records.drop('transfers', transfer.id);
    gone = true;
  }
  return gone;
}
