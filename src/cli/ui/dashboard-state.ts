import type { EventEmitter } from 'node:events';
import { type Dispatch, type SetStateAction, useEffect, useMemo, useRef, useState } from 'react';
import type { VaPaymentView } from '../../core/records/views.js';
import type { DeliveryDetail } from '../commands/deliveries.js';
import { pathTo } from '../context.js';
import type { Connection } from './connect.js';
import type { FeedEntry } from './feed.js';
import type { TransferTarget } from './forms.js';
import { type Layout, scrolled } from './layout.js';
import { type ClientView, clientsLoader, paymentsLoader, useListWindow } from './use-sandbox.js';

type Client = Connection['client'];
export type Selected = { payments: number; clients: number };
/** The first row each window shows (the feed's by seq): kept between renders so windows scroll smoothly. */
export type Tops = { payments: number; clients: number; feed: number };

/** The payments' and clients' windows around their selections, read again at each `version`. */
export function useListWindows(
  client: Client,
  layout: Layout,
  tops: Tops,
  selected: Selected,
  setSelected: Dispatch<SetStateAction<Selected>>,
  version: number,
  failed: (error: Error) => void,
) {
  // A window's top is set before its items come: by the lengths last known (at least up to the selection).
  const known = useRef({ payments: 0, clients: 0 });
  for (const list of ['payments', 'clients'] as const) {
    tops[list] = scrolled(tops[list], selected[list], layout[list], Math.max(known.current[list], selected[list] + 1));
  }
  const payments = useListWindow(
    useMemo(() => paymentsLoader(client), [client]),
    tops.payments,
    layout.payments,
    version,
    failed,
  );
  const clients = useListWindow(
    useMemo(() => clientsLoader(client), [client]),
    tops.clients,
    layout.clients,
    version,
    failed,
  );
  known.current = { payments: payments?.total ?? 0, clients: clients?.total ?? 0 };
  // A list that shrank (reset elsewhere) keeps its selection on an item that exists.
  useEffect(() => {
    setSelected((now) => ({
      payments: Math.min(now.payments, Math.max((payments?.total ?? 1) - 1, 0)),
      clients: Math.min(now.clients, Math.max((clients?.total ?? 1) - 1, 0)),
    }));
  }, [payments?.total, clients?.total]);
  return { payments, clients };
}

/**
 * A payment just made is the newest, so the selected first row, even before the list is read again: the note says
 * "t does it", and a quick `t` must not find the list of a moment ago. Forgotten once the list holds it.
 */
export function useJustCreated(payments: { items: VaPaymentView[] } | null) {
  const [created, setCreated] = useState<VaPaymentView | null>(null);
  useEffect(() => {
    if (created && payments?.items.some((p) => p.id === created.id)) setCreated(null);
  }, [payments, created]);
  return [created, setCreated] as const;
}

/**
 * The feed's window: the newest lines while following (`selectedSeq` null), else the lines around the selected one.
 * Lines are in time order, not of arrival, so the selected line and the top one are found by their seq (0: the
 * oldest, when theirs was dropped).
 */
export function feedWindow(entries: FeedEntry[], selectedSeq: number | null, tops: Tops, rows: number) {
  const indexOf = (seq: number) =>
    Math.max(
      entries.findIndex((entry) => entry.seq === seq),
      0,
    );
  const position = selectedSeq === null ? entries.length - 1 : indexOf(selectedSeq);
  const top = scrolled(indexOf(tops.feed), position, rows, entries.length);
  tops.feed = entries[top]?.seq ?? 0;
  return { position, top, lines: entries.slice(top, top + rows), entry: entries[position] };
}

/** The delivery open in its view, read again at each `version`; null while it loads or when none is open. */
export function useDeliveryDetail(
  client: Client,
  id: string | null,
  version: number,
  failed: (error: Error) => void,
): DeliveryDetail | null {
  const [detail, setDetail] = useState<DeliveryDetail | null>(null);
  useEffect(() => {
    setDetail(null);
    if (id === null) return;
    let current = true;
    client
      .call<DeliveryDetail>('GET', pathTo('/sandbox/v1/deliveries', id))
      .then(({ data }) => current && setDetail(data), failed);
    return () => {
      current = false;
    };
  }, [client, id, version]);
  return detail;
}

/** The lines the embedded sandbox logs go to the status line, never printed over the screen. */
export function useLogLines(
  logs: EventEmitter | undefined,
  setNote: (note: { text: string; error?: boolean }) => void,
): void {
  useEffect(() => {
    if (!logs) return;
    const show = (line: string) => setNote({ text: `sandbox: ${line}`, error: true });
    logs.on('line', show);
    return () => {
      logs.off('line', show);
    };
  }, [logs]);
}

/** Where `t` sends money: the selected client's CVU when the clients pane has focus, else the selected payment's. */
export function transferTargetOf(
  clientRow: ClientView | undefined,
  payment: VaPaymentView | undefined,
): TransferTarget | null {
  if (clientRow) {
    const to = clientRow.alias ?? clientRow.cvu;
    return to === null ? null : { to, about: `client ${clientRow.name} (CVU ${clientRow.cvuStatus})` };
  }
  if (!payment) return null;
  const total = payment.lockMode === 'time' && payment.remainingAmount > 0 ? payment.remainingAmount : payment.amount;
  return {
    to: payment.alias,
    about: `VA payment ${payment.id} (${payment.status})`,
    ...(total === null ? {} : { total }),
  };
}
