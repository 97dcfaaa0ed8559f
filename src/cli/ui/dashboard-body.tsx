import type { VaPaymentView } from '../../core/records/views.js';
import type { DeliveryDetail } from '../commands/deliveries.js';
import { paint } from '../render.js';
import { ClientsPane } from './clients-pane.js';
import type { Connection } from './connect.js';
import { DeliveryView } from './delivery-view.js';
import { Form, type FormSpec, type Values } from './form.js';
import { redeliverForm } from './forms.js';
import type { Key } from './help-line.js';
import type { Layout } from './layout.js';
import { type ListWindow, Pane } from './pane.js';
import { PaymentsPane } from './payments-pane.js';
import { span } from './time.js';
import { type ApiFaultsSummary, apiFaultsText } from './use-api-faults.js';
import type { ClientView } from './use-sandbox.js';

export const PANES = ['payments', 'clients', 'feed'] as const;
export type PaneName = (typeof PANES)[number];

/** `then` runs once the form's request succeeded. */
export type Mode =
  | { kind: 'panes' }
  | { kind: 'form'; spec: FormSpec; then?: () => void }
  | { kind: 'delivery'; id: string };

/** The dashboard's first line: where it is connected, the stream, the key, the sandbox clock, faults and forwarding. */
export function headerLine(
  connection: Connection,
  stream: string,
  clock: { nowMs: number | null; offsetSeconds: number },
  apiFaults: ApiFaultsSummary | null,
  forwarding: string | null,
): string {
  const sandboxNow = clock.nowMs === null ? '…' : new Date(clock.nowMs).toISOString().slice(0, 19).replace('T', ' ');
  return [
    paint('bold', `${connection.url.replace(/^https?:\/\//, '')}${connection.embedded ? ' (embedded)' : ''}`),
    stream === 'live' ? paint('green', 'live') : paint('yellow', `${stream}…`),
    `key ${connection.apiKey}`,
    `clock ${sandboxNow}${clock.offsetSeconds ? ` +${span(clock.offsetSeconds)}` : ''}`,
    ...(apiFaults === null ? [] : [paint('red', apiFaultsText(apiFaults))]),
    ...(forwarding === null ? [] : [paint('magenta', `forwarding => ${forwarding}`)]),
  ].join('  ');
}

export interface DashboardBodyProps {
  mode: Mode;
  setMode: (mode: Mode) => void;
  detail: DeliveryDetail | null;
  columns: number;
  layout: Layout;
  focus: PaneName;
  payments: ListWindow<VaPaymentView> | null;
  clients: ListWindow<ClientView> | null;
  selected: { payments: number; clients: number };
  nowMs: number;
  sticky: Values;
  onSubmit: (mode: Extract<Mode, { kind: 'form' }>, body: Record<string, unknown>, values: Values) => Promise<void>;
  /** The feed's lines in view, the selected one among them (null: none), and whether it follows the newest. */
  feed: { lines: string[]; selected: number | null; following: boolean };
}

/** What stands between the header and the status line: a delivery, a form under the payments, or the three panes. */
export function DashboardBody({
  mode,
  setMode,
  detail,
  columns,
  layout,
  focus,
  payments,
  clients,
  selected,
  nowMs,
  sticky,
  onSubmit,
  feed,
}: DashboardBodyProps) {
  if (mode.kind === 'delivery') {
    return (
      <DeliveryView
        detail={detail}
        width={columns}
        rows={layout.body}
        onClose={() => setMode({ kind: 'panes' })}
        onRedeliver={() => detail && setMode({ kind: 'form', spec: redeliverForm(detail) })}
      />
    );
  }
  const paymentsPane = (
    <PaymentsPane
      window={payments}
      selected={selected.payments}
      rows={layout.payments}
      focused={focus === 'payments'}
      width={columns}
      nowMs={nowMs}
    />
  );
  if (mode.kind === 'form') {
    return (
      <>
        {paymentsPane}
        <Form
          key={mode.spec.title}
          spec={mode.spec}
          sticky={sticky}
          width={columns}
          rows={layout.body - layout.payments - 2}
          onSubmit={(body, values) => onSubmit(mode, body, values)}
          onCancel={() => setMode({ kind: 'panes' })}
        />
      </>
    );
  }
  return (
    <>
      {paymentsPane}
      <ClientsPane
        window={clients}
        selected={selected.clients}
        rows={layout.clients}
        focused={focus === 'clients'}
        width={columns}
      />
      <Pane
        title={`feed  events and delivery attempts${feed.following ? '' : '  (paused: End follows)'}`}
        focused={focus === 'feed'}
        width={columns}
        lines={feed.lines}
        selected={feed.selected}
        rows={layout.feed}
        empty="nothing yet: events, transfers and callback attempts show here as they happen"
      />
    </>
  );
}

/** The keys the help line shows, for what is open and focused. */
export function helpKeys(mode: Mode, focus: PaneName): Key[] {
  if (mode.kind === 'form')
    return [
      ['tab', 'next field'],
      ['←→', 'choose'],
      ['enter', mode.spec.verb],
      ['esc', 'back'],
    ];
  if (mode.kind === 'delivery')
    return [
      ['↑↓ pgup pgdn', 'scroll'],
      ['r', 'redeliver'],
      ['esc', 'back'],
      ['q', 'quit'],
    ];
  const acts: Key[] =
    focus === 'feed'
      ? [
          ['enter', 'open'],
          ['r', 'redeliver'],
        ]
      : focus === 'payments'
        ? [
            ['t', 'transfer'],
            ['x', 'cancel'],
          ]
        : [['t', 'transfer']];
  return [['n', 'payment'], ['c', 'client'], ...acts, ['a', 'clock'], ['tab', 'pane'], ['q', 'quit']];
}
