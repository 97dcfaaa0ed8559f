import { ACTIVE_STATUSES } from '../../core/records/state.js';
import type { VaPaymentView } from '../../core/records/views.js';
import { ars, type Column, status } from '../render.js';
import { ListPane, type ListPaneProps } from './pane.js';
import { expiresIn } from './time.js';

const columns = (nowMs: number): Column<VaPaymentView>[] => [
  ['status', (p) => status(p.status)],
  ['amount', (p) => (p.amount === null ? 'open' : ars(p.amount)), 'right'],
  ['received', (p) => ars(p.receivedAmount), 'right'],
  ['remaining', (p) => ars(p.remainingAmount), 'right'],
  ['expires', (p) => (ACTIVE_STATUSES.includes(p.status) ? expiresIn(p.expiresAt, nowMs) : null), 'right'],
  ['alias', (p) => p.alias],
  ['id', (p) => p.id],
];

export type PaymentsPaneProps = Omit<ListPaneProps<VaPaymentView>, 'name' | 'columns' | 'empty'> & {
  /** The sandbox clock's now, for the countdowns. */
  nowMs: number;
};

/** The VA payments pane: status, amounts and the expiry countdown of the payments that fit. */
export function PaymentsPane({ nowMs, ...props }: PaymentsPaneProps) {
  return <ListPane {...props} name="VA payments" columns={columns(nowMs)} empty="no VA payments yet: n creates one" />;
}
