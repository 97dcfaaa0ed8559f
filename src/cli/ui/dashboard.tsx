import type { EventEmitter } from 'node:events';
import { Box, Text, useApp } from 'ink';
import { useCallback, useEffect, useMemo, useReducer, useRef, useState } from 'react';
import type { VaPaymentView } from '../../core/views.js';
import type { DeliveryDetail } from '../commands/deliveries.js';
import { pathTo } from '../context.js';
import { paint } from '../render.js';
import { ClientsPane } from './clients-pane.js';
import { dataPathOf, type Connection } from './connect.js';
import { DeliveryView } from './delivery-view.js';
import { deliveryOf, feedLine } from './feed.js';
import { Form, type FormSpec, type Values } from './form.js';
import { cancelForm, clientForm, clockForm, paymentForm, redeliverForm, transferForm, type TransferTarget } from './forms.js';
import { HelpLine, type Key } from './help-line.js';
import { useKeys } from './keys.js';
import { layoutOf, scrolled, useTerminalSize } from './layout.js';
import { Pane } from './pane.js';
import { PaymentsPane } from './payments-pane.js';
import { span } from './time.js';
import { apiFaultsText, useApiFaults } from './use-api-faults.js';
import { clientsLoader, paymentsLoader, useDebounced, useListWindow, useLiveFeed, useForwarding, useSandboxClock } from './use-sandbox.js';

const PANES = ['payments', 'clients', 'feed'] as const;
type PaneName = (typeof PANES)[number];

/** `then` runs once the form's request succeeded. */
type Mode = { kind: 'panes' } | { kind: 'form'; spec: FormSpec; then?: () => void } | { kind: 'delivery'; id: string };

/** Lists are asked again this long after the last stream message, and at least this often while messages keep coming. */
const REFRESH_WAIT_MS = 150;
const REFRESH_MAX_WAIT_MS = 1000;

export interface DashboardProps {
  connection: Connection;
  /** The paymentHubId the create forms fill in (`--hub`). */
  hubId?: number;
  /** Lines the embedded sandbox logs: shown on the status line, never printed over the screen. */
  logs?: EventEmitter;
}

/**
 * The dashboard: VA payments, clients and the live feed, with a form for each action. The lists are windows of
 * the API's pages, asked again when the stream says something changed (debounced) and after each action.
 */
export function Dashboard({ connection, hubId = 1, logs }: DashboardProps) {
  const { client } = connection;
  const { exit } = useApp();
  const { columns, rows } = useTerminalSize();
  const layout = layoutOf(rows);

  const [mode, setMode] = useState<Mode>({ kind: 'panes' });
  const [focus, setFocus] = useState<PaneName>('payments');
  const [selected, setSelected] = useState({ payments: 0, clients: 0 });
  /** The selected feed line by its seq; null follows the newest. */
  const [feedSelected, setFeedSelected] = useState<number | null>(null);
  /** The first row each window shows (the feed's by seq): kept between renders so windows scroll smoothly. */
  const tops = useRef({ payments: 0, clients: 0, feed: 0 });
  const [sticky, setSticky] = useState<Values>({});
  const [note, setNote] = useState<{ text: string; error?: boolean }>(() => ({
    text: connection.embedded
      ? `no sandbox answered, so one runs here: data ${dataPathOf(connection.embedded)}, q stops it`
      : `connected to the sandbox at ${connection.url}`,
  }));
  const failed = useCallback((error: Error) => setNote({ text: error.message, error: true }), []);

  const [version, refresh] = useReducer((n: number) => n + 1, 0);
  const refreshSoon = useDebounced(refresh, REFRESH_WAIT_MS, REFRESH_MAX_WAIT_MS);
  const [detailVersion, refreshDetail] = useReducer((n: number) => n + 1, 0);
  const openDelivery = mode.kind === 'delivery' ? mode.id : null;

  const { entries, stream } = useLiveFeed(client, (message) => {
    // Deliveries change no list: a burst of them only adds feed lines.
    if (message === null || message.type !== 'delivery') refreshSoon();
    else if (message.delivery.id === openDelivery) refreshDetail();
  });
  // A window's top is set before its items come: by the lengths last known (at least up to the selection).
  const known = useRef({ payments: 0, clients: 0 });
  for (const list of ['payments', 'clients'] as const) {
    tops.current[list] = scrolled(tops.current[list], selected[list], layout[list], Math.max(known.current[list], selected[list] + 1));
  }
  const payments = useListWindow(useMemo(() => paymentsLoader(client), [client]), tops.current.payments, layout.payments, version, failed);
  const clients = useListWindow(useMemo(() => clientsLoader(client), [client]), tops.current.clients, layout.clients, version, failed);
  known.current = { payments: payments?.total ?? 0, clients: clients?.total ?? 0 };
  const clock = useSandboxClock(client, version, failed);
  const forwarding = useForwarding(client, version, failed);
  const apiFaults = useApiFaults(client, version, failed);

  const [detail, setDetail] = useState<DeliveryDetail | null>(null);
  useEffect(() => {
    setDetail(null);
    if (openDelivery === null) return;
    let current = true;
    client.call<DeliveryDetail>('GET', pathTo('/sandbox/v1/deliveries', openDelivery)).then(({ data }) => current && setDetail(data), failed);
    return () => {
      current = false;
    };
  }, [client, openDelivery, detailVersion]);

  useEffect(() => {
    if (!logs) return;
    const show = (line: string) => setNote({ text: `sandbox: ${line}`, error: true });
    logs.on('line', show);
    return () => {
      logs.off('line', show);
    };
  }, [logs]);

  // A list that shrank (reset elsewhere) keeps its selection on an item that exists.
  useEffect(() => {
    setSelected((now) => ({
      payments: Math.min(now.payments, Math.max((payments?.total ?? 1) - 1, 0)),
      clients: Math.min(now.clients, Math.max((clients?.total ?? 1) - 1, 0)),
    }));
  }, [payments?.total, clients?.total]);

  // A payment just made is the newest, so the selected first row, even before the list is read again: the
  // note says "t does it", and a quick `t` must not find the list of a moment ago.
  const [created, setCreated] = useState<VaPaymentView | null>(null);
  useEffect(() => {
    if (created && payments?.items.some((p) => p.id === created.id)) setCreated(null);
  }, [payments, created]);
  const payment = created && selected.payments === 0 ? created : payments?.items[selected.payments - payments.offset];
  const clientRow = clients?.items[selected.clients - clients.offset];

  // The feed's window: the newest lines while following, else the lines around the selected one.
  const first = entries[0]?.seq ?? 0;
  const position = feedSelected === null ? entries.length - 1 : Math.min(Math.max(feedSelected - first, 0), entries.length - 1);
  const top = scrolled(tops.current.feed - first, position, layout.feed, entries.length);
  tops.current.feed = first + top;
  const feedLines = entries.slice(top, top + layout.feed);
  const feedEntry = entries[position];

  const move = (step: number) => {
    if (focus === 'feed') {
      const next = Math.min(Math.max(position + step, 0), entries.length - 1);
      setFeedSelected(next >= entries.length - 1 ? null : entries[next]!.seq);
      return;
    }
    const total = (focus === 'payments' ? payments : clients)?.total ?? 0;
    setSelected((now) => ({ ...now, [focus]: Math.min(Math.max(now[focus] + step, 0), Math.max(total - 1, 0)) }));
  };

  const transferTarget = (): TransferTarget | null => {
    if (focus === 'clients' && clientRow) {
      const to = clientRow.alias ?? clientRow.cvu;
      return to === null ? null : { to, about: `client ${clientRow.name} (CVU ${clientRow.cvuStatus})` };
    }
    if (!payment) return null;
    const total = payment.lockMode === 'time' && payment.remainingAmount > 0 ? payment.remainingAmount : payment.amount;
    return { to: payment.alias, about: `VA payment ${payment.id} (${payment.status})`, ...(total === null ? {} : { total }) };
  };

  const selectedDelivery = () => {
    const delivery = focus === 'feed' && feedEntry ? deliveryOf(feedEntry.message) : null;
    if (delivery === null) setNote({ text: 'select a delivery first: tab to the feed, then the arrows', error: true });
    return delivery;
  };

  useKeys(
    (input, key) => {
      if (input === 'q') return exit();
      if (mode.kind !== 'panes') return; // the open view takes its own keys
      const pane = focus === 'feed' ? layout.feed : focus === 'payments' ? layout.payments : layout.clients;
      if (key.tab) setFocus((now) => PANES[(PANES.indexOf(now) + (key.shift ? PANES.length - 1 : 1)) % PANES.length]!);
      else if (key.upArrow || input === 'k') move(-1);
      else if (key.downArrow || input === 'j') move(1);
      else if (key.pageUp) move(-pane);
      else if (key.pageDown) move(pane);
      else if (key.home || input === 'g') move(-Infinity);
      else if (key.end || input === 'G') move(Infinity);
      // What was just created is the newest: it gets selected, so the next key acts on it.
      else if (input === 'n') setMode({ kind: 'form', spec: paymentForm({ hubId, onCreated: setCreated }), then: () => setSelected((now) => ({ ...now, payments: 0 })) });
      else if (input === 'c') setMode({ kind: 'form', spec: clientForm(hubId), then: () => setSelected((now) => ({ ...now, clients: 0 })) });
      else if (input === 't') setMode({ kind: 'form', spec: transferForm(transferTarget()) });
      else if (input === 'a') setMode({ kind: 'form', spec: clockForm() });
      else if (input === 'x') {
        if (payment) setMode({ kind: 'form', spec: cancelForm(payment) });
        else setNote({ text: 'no VA payment selected', error: true });
      } else if (input === 'r' || key.return || input === 'o') {
        const delivery = selectedDelivery();
        if (delivery !== null) setMode(input === 'r' ? { kind: 'form', spec: redeliverForm(delivery) } : { kind: 'delivery', id: delivery.id });
      }
    },
    { isActive: mode.kind !== 'form' },
  );

  const submit = async ({ spec, then }: Extract<Mode, { kind: 'form' }>, body: Record<string, unknown>, values: Values) => {
    const text = await spec.submit(client, body);
    const kept = spec.fields.filter((field) => field.sticky).map((field) => [field.name, values[field.name] ?? '']);
    setSticky((now) => ({ ...now, ...Object.fromEntries(kept) }));
    setNote({ text });
    then?.();
    setMode({ kind: 'panes' });
    refresh();
  };

  const sandboxNow = clock.nowMs === null ? '…' : new Date(clock.nowMs).toISOString().slice(0, 19).replace('T', ' ');
  const header = [
    paint('bold', `${connection.url.replace(/^https?:\/\//, '')}${connection.embedded ? ' (embedded)' : ''}`),
    stream === 'live' ? paint('green', 'live') : paint('yellow', `${stream}…`),
    `key ${connection.apiKey}`,
    `clock ${sandboxNow}${clock.offsetSeconds ? ` +${span(clock.offsetSeconds)}` : ''}`,
    ...(apiFaults === null ? [] : [paint('red', apiFaultsText(apiFaults))]),
    ...(forwarding === null ? [] : [paint('magenta', `forwarding => ${forwarding}`)]),
  ].join('  ');

  const body = (() => {
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
        nowMs={clock.nowMs ?? Date.now()}
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
            onSubmit={(body, values) => submit(mode, body, values)}
            onCancel={() => setMode({ kind: 'panes' })}
          />
        </>
      );
    }
    return (
      <>
        {paymentsPane}
        <ClientsPane window={clients} selected={selected.clients} rows={layout.clients} focused={focus === 'clients'} width={columns} />
        <Pane
          title={`feed  events and delivery attempts${feedSelected === null ? '' : '  (paused: End follows)'}`}
          focused={focus === 'feed'}
          width={columns}
          lines={feedLines.map((entry) => feedLine(entry.message))}
          selected={focus === 'feed' ? position - top : null}
          rows={layout.feed}
          empty="nothing yet: events, transfers and callback attempts show here as they happen"
        />
      </>
    );
  })();

  return (
    <Box flexDirection="column" width={columns} height={rows - 1}>
      <Text wrap="truncate-end">{header}</Text>
      <Box flexDirection="column" height={layout.body} overflow="hidden">
        {body}
      </Box>
      <Text wrap="truncate-end">{note.error ? paint('red', note.text) : note.text}</Text>
      <HelpLine keys={helpKeys(mode, focus)} />
    </Box>
  );
}

function helpKeys(mode: Mode, focus: PaneName): Key[] {
  if (mode.kind === 'form') return [['tab', 'next field'], ['←→', 'choose'], ['enter', mode.spec.verb], ['esc', 'back']];
  if (mode.kind === 'delivery') return [['↑↓ pgup pgdn', 'scroll'], ['r', 'redeliver'], ['esc', 'back'], ['q', 'quit']];
  const acts: Key[] =
    focus === 'feed' ? [['enter', 'open'], ['r', 'redeliver']] : focus === 'payments' ? [['t', 'transfer'], ['x', 'cancel']] : [['t', 'transfer']];
  return [['n', 'payment'], ['c', 'client'], ...acts, ['a', 'clock'], ['tab', 'pane'], ['q', 'quit']];
}
