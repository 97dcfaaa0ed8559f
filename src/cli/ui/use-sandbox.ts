import { useCallback, useEffect, useRef, useState } from 'react';
import type { balanceView, clientView, deliveryView, VaPaymentView } from '../../core/records/views.js';
import type { Client } from '../client.js';
import { pathTo } from '../context.js';
import { appendToFeed, deliveryOf, type FeedEntry } from './feed.js';
import { followStream, type LiveMessage, type StreamState } from './live.js';
import type { ListWindow } from './pane.js';

export type ClientView = ReturnType<typeof clientView> & { balance: number };
type BalanceView = ReturnType<typeof balanceView>;
type DeliveryView = ReturnType<typeof deliveryView>;

/** The API's largest page (contract: `limit` 1..100). */
const MAX_LIMIT = 100;
/** Stream messages are rendered in batches: a burst of deliveries is a few renders, not one per message. */
const FLUSH_MS = 100;
/** Deliveries read from the log when the dashboard opens, so the feed does not start empty. */
const HISTORY = 50;

type Load<T> = (page: number, limit: number) => Promise<{ items: T[]; total: number }>;

/**
 * The window of an API list from item `top` on, `rows` items: one or two of the API's pages of `rows` items, so
 * only what fits is asked for and rendered, however long the list. Asked again when `version` changes.
 */
export function useListWindow<T>(
  load: Load<T>,
  top: number,
  rows: number,
  version: number,
  onError: (error: Error) => void,
): ListWindow<T> | null {
  const limit = Math.min(Math.max(rows, 1), MAX_LIMIT);
  const [window, setWindow] = useState<ListWindow<T> | null>(null);
  useEffect(() => {
    let current = true;
    const page = Math.floor(top / limit) + 1;
    const skip = top - (page - 1) * limit;
    Promise.all((skip === 0 ? [page] : [page, page + 1]).map((n) => load(n, limit))).then(
      (pages) =>
        current &&
        setWindow({
          items: pages.flatMap(({ items }) => items).slice(skip, skip + limit),
          total: pages[0]!.total,
          offset: top,
        }),
      (error: Error) => current && onError(error),
    );
    return () => {
      current = false;
    };
  }, [load, top, limit, version]);
  return window;
}

export const paymentsLoader =
  (client: Client): Load<VaPaymentView> =>
  async (page, limit) => {
    const { data, pagination } = await client.call<VaPaymentView[]>('GET', '/api/v1/va-payments', {
      query: { page, limit },
    });
    return { items: data, total: pagination!.total };
  };

/** Clients with the balance of each (one request per client shown: only the window's). */
export const clientsLoader =
  (client: Client): Load<ClientView> =>
  async (page, limit) => {
    const { data, pagination } = await client.call<ReturnType<typeof clientView>[]>('GET', '/api/v1/clients', {
      query: { page, limit },
    });
    const balances = await Promise.all(
      data.map((c) => client.call<BalanceView>('GET', pathTo('/api/v1/clients', c.id, 'balance'))),
    );
    return { items: data.map((c, i) => ({ ...c, balance: balances[i]!.data.balance })), total: pagination!.total };
  };

/** The account's forwarding URL (null: off), read again when `version` changes (the stream says when it does). */
export function useForwarding(client: Client, version: number, onError: (error: Error) => void): string | null {
  const [url, setUrl] = useState<string | null>(null);
  useEffect(() => {
    let current = true;
    client.call<{ url: string | null }>('GET', '/sandbox/v1/forwarding').then(
      ({ data }) => current && setUrl(data.url),
      (error: Error) => current && onError(error),
    );
    return () => {
      current = false;
    };
  }, [client, version]);
  return url;
}

/**
 * The sandbox clock: read again when `version` changes, and between reads it runs on from the last one, so
 * countdowns tick every second without asking the server.
 */
export function useSandboxClock(
  client: Client,
  version: number,
  onError: (error: Error) => void,
): { nowMs: number | null; offsetSeconds: number } {
  const [read, setRead] = useState<{ skewMs: number; offsetSeconds: number } | null>(null);
  const [, tick] = useState(0);
  useEffect(() => {
    let current = true;
    client.call<{ now: string; offsetSeconds: number }>('GET', '/sandbox/v1/clock').then(
      ({ data }) =>
        current && setRead({ skewMs: Date.parse(data.now) - Date.now(), offsetSeconds: data.offsetSeconds }),
      (error: Error) => current && onError(error),
    );
    return () => {
      current = false;
    };
  }, [client, version]);
  useEffect(() => {
    const timer = setInterval(() => tick((n) => n + 1), 1000);
    return () => clearInterval(timer);
  }, []);
  return { nowMs: read === null ? null : Date.now() + read.skewMs, offsetSeconds: read?.offsetSeconds ?? 0 };
}

/**
 * The feed: the latest deliveries of the log, then every message of the live stream as it comes, capped.
 * `onMessage` hears each message as it arrives, and null when the stream (re)connects (anything may have changed).
 */
export function useLiveFeed(
  client: Client,
  onMessage: (message: LiveMessage | null) => void,
): { entries: FeedEntry[]; stream: StreamState } {
  const [entries, setEntries] = useState<FeedEntry[]>([]);
  const [stream, setStream] = useState<StreamState>('connecting');
  const listener = useRef(onMessage);
  listener.current = onMessage;
  useEffect(() => {
    let pending: LiveMessage[] = [];
    let timer: NodeJS.Timeout | null = null;
    let history: 'unread' | 'reading' | 'read' = 'unread';
    const flush = () => {
      timer = null;
      if (history !== 'read') return;
      const batch = pending;
      pending = [];
      setEntries((feed) => appendToFeed(feed, batch));
    };
    // Subscribed before the log is read, so nothing falls between the two; what the stream already told is not repeated.
    const readHistory = async () => {
      history = 'reading';
      try {
        const { data } = await client.call<DeliveryView[]>('GET', '/sandbox/v1/deliveries', {
          query: { limit: HISTORY },
        });
        const live = new Set(pending.map((message) => deliveryOf(message)?.id));
        const past = data.filter((d) => !live.has(d.id)).reverse();
        pending = [...past.map((delivery): LiveMessage => ({ type: 'delivery', delivery, attempt: null })), ...pending];
      } catch {
        // The feed starts with the live messages only.
      }
      history = 'read';
      flush();
    };
    const stop = followStream(
      client,
      (message) => {
        pending.push(message);
        listener.current(message);
        timer ??= setTimeout(flush, FLUSH_MS);
      },
      (state) => {
        setStream(state);
        if (state !== 'live') return;
        listener.current(null);
        if (history === 'unread') void readHistory();
      },
    );
    return () => {
      stop();
      if (timer) clearTimeout(timer);
    };
  }, [client]);
  return { entries, stream };
}

/** `fn` once calls stop coming for `waitMs`, and at least every `maxWaitMs` while they keep coming. */
export function useDebounced(fn: () => void, waitMs: number, maxWaitMs: number): () => void {
  const latest = useRef(fn);
  latest.current = fn;
  const state = useRef<{ timer: NodeJS.Timeout | null; since: number }>({ timer: null, since: 0 });
  useEffect(
    () => () => {
      if (state.current.timer) clearTimeout(state.current.timer);
    },
    [],
  );
  return useCallback(() => {
    const s = state.current;
    const now = Date.now();
    if (s.timer) clearTimeout(s.timer);
    else s.since = now;
    s.timer = setTimeout(
      () => {
        s.timer = null;
        latest.current();
      },
      Math.min(waitMs, Math.max(s.since + maxWaitMs - now, 0)),
    );
  }, [waitMs, maxWaitMs]);
}
