import type { EventEmitter } from 'node:events';
import { Box, Text } from 'ink';
import { type Dispatch, type SetStateAction, useCallback, useReducer, useRef, useState } from 'react';
import { paint } from '../render.js';
import { type Connection, dataPathOf } from './connect.js';
import { DashboardBody, headerLine, helpKeys, type Mode, type PaneName } from './dashboard-body.js';
import { usePaneKeys } from './dashboard-keys.js';
import {
  feedWindow,
  type Selected,
  type Tops,
  useDeliveryDetail,
  useJustCreated,
  useListWindows,
  useLogLines,
} from './dashboard-state.js';
import { feedLine } from './feed.js';
import type { Values } from './form.js';
import { HelpLine } from './help-line.js';
import { type Layout, layoutOf, useTerminalSize } from './layout.js';
import { useApiFaults } from './use-api-faults.js';
import { useDebounced, useForwarding, useLiveFeed, useSandboxClock } from './use-sandbox.js';

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
  const { columns, rows } = useTerminalSize();
  const layout = layoutOf(rows);

  const [mode, setMode] = useState<Mode>({ kind: 'panes' });
  const [focus, setFocus] = useState<PaneName>('payments');
  const [selected, setSelected] = useState({ payments: 0, clients: 0 });
  /** The selected feed line by its seq; null follows the newest. */
  const [feedSelected, setFeedSelected] = useState<number | null>(null);
  const tops = useRef<Tops>({ payments: 0, clients: 0, feed: 0 });
  const [sticky, setSticky] = useState<Values>({});
  const [note, setNote] = useState<{ text: string; error?: boolean }>(() => ({ text: firstNote(connection) }));
  const failed = useCallback((error: Error) => setNote({ text: error.message, error: true }), []);

  const openDelivery = mode.kind === 'delivery' ? mode.id : null;
  const { refresh, entries, stream, payments, clients, clock, forwarding, apiFaults, detail } = useSandboxViews(
    client,
    { layout, tops: tops.current, selected, setSelected, openDelivery },
    failed,
  );
  useLogLines(logs, setNote);

  const [created, setCreated] = useJustCreated(payments);
  const payment = created && selected.payments === 0 ? created : payments?.items[selected.payments - payments.offset];
  const clientRow = clients?.items[selected.clients - clients.offset];

  const feed = feedWindow(entries, feedSelected, tops.current, layout.feed);

  const move = (step: number) => {
    if (focus === 'feed') {
      const next = Math.min(Math.max(feed.position + step, 0), entries.length - 1);
      setFeedSelected(next >= entries.length - 1 ? null : entries[next]!.seq);
      return;
    }
    const total = (focus === 'payments' ? payments : clients)?.total ?? 0;
    setSelected((now) => ({ ...now, [focus]: Math.min(Math.max(now[focus] + step, 0), Math.max(total - 1, 0)) }));
  };

  usePaneKeys({
    mode,
    setMode,
    focus,
    setFocus,
    layout,
    move,
    setSelected,
    setNote,
    setCreated,
    hubId,
    payment,
    clientRow,
    feedEntry: feed.entry,
  });

  return (
    <Box flexDirection="column" width={columns} height={rows - 1}>
      <Text wrap="truncate-end">{headerLine(connection, stream, clock, apiFaults, forwarding)}</Text>
      <Box flexDirection="column" height={layout.body} overflow="hidden">
        <DashboardBody
          {...{ mode, setMode, detail, columns, layout, focus, payments, clients, selected, sticky }}
          nowMs={clock.nowMs ?? Date.now()}
          onSubmit={formSubmitter(client, { setSticky, setNote, setMode, refresh })}
          feed={{
            lines: feed.lines.map((entry) => feedLine(entry.message)),
            selected: focus === 'feed' ? feed.position - feed.top : null,
            following: feedSelected === null,
          }}
        />
      </Box>
      <Text wrap="truncate-end">{note.error ? paint('red', note.text) : note.text}</Text>
      <HelpLine keys={helpKeys(mode, focus)} />
    </Box>
  );
}

type Client = Connection['client'];

/** What the lists show and which of them is asked for: the windows' rows, their selection and the open delivery. */
interface ViewsShown {
  layout: Layout;
  tops: Tops;
  selected: Selected;
  setSelected: Dispatch<SetStateAction<Selected>>;
  openDelivery: string | null;
}

/**
 * What the dashboard shows of the sandbox: the live feed, the list windows, its clock, forwarding, API faults and the
 * open delivery. All are asked again at `refresh`; the lists soon after a stream message (debounced), the open
 * delivery when one of its attempts comes.
 */
function useSandboxViews(
  client: Client,
  { layout, tops, selected, setSelected, openDelivery }: ViewsShown,
  failed: (error: Error) => void,
) {
  const [version, refresh] = useReducer((n: number) => n + 1, 0);
  const refreshSoon = useDebounced(refresh, REFRESH_WAIT_MS, REFRESH_MAX_WAIT_MS);
  const [detailVersion, refreshDetail] = useReducer((n: number) => n + 1, 0);

  const { entries, stream } = useLiveFeed(client, (message) => {
    // Deliveries change no list: a burst of them only adds feed lines.
    if (message === null || message.type !== 'delivery') refreshSoon();
    else if (message.delivery.id === openDelivery) refreshDetail();
  });
  const { payments, clients } = useListWindows(client, layout, tops, selected, setSelected, version, failed);
  const clock = useSandboxClock(client, version, failed);
  const forwarding = useForwarding(client, version, failed);
  const apiFaults = useApiFaults(client, version, failed);

  const detail = useDeliveryDetail(client, openDelivery, detailVersion, failed);
  return { refresh, entries, stream, payments, clients, clock, forwarding, apiFaults, detail };
}

/** What a sent form changes on the dashboard. */
interface AfterSubmit {
  setSticky: Dispatch<SetStateAction<Values>>;
  setNote: (note: { text: string; error?: boolean }) => void;
  setMode: (mode: Mode) => void;
  refresh: () => void;
}

/**
 * A form's sending: its request, then its sticky fields kept for the next form, its answer on the status line, its
 * follow-up (`then`), back to the panes and the lists asked again.
 */
const formSubmitter =
  (client: Client, { setSticky, setNote, setMode, refresh }: AfterSubmit) =>
  async ({ spec, then }: Extract<Mode, { kind: 'form' }>, body: Record<string, unknown>, values: Values) => {
    const text = await spec.submit(client, body);
    const kept = spec.fields.filter((field) => field.sticky).map((field) => [field.name, values[field.name] ?? '']);
    setSticky((now) => ({ ...now, ...Object.fromEntries(kept) }));
    setNote({ text });
    then?.();
    setMode({ kind: 'panes' });
    refresh();
  };

/** The status line at first: where the dashboard is connected, or the sandbox it runs itself. */
const firstNote = (connection: Connection): string =>
  connection.embedded
    ? `no sandbox answered, so one runs here: data ${dataPathOf(connection.embedded)}, q stops it`
    : `connected to the sandbox at ${connection.url}`;
