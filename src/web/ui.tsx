import { createContext, type ReactNode, useCallback, useContext, useEffect, useRef, useState } from 'react';
import { type Api, type ListPage, type Pagination, SandboxApiError } from './api.js';
import type { Live, LiveListener } from './live.js';
import { Link } from './router.js';

export const AppContext = createContext<{ api: Api; live: Live; epoch: number; reloadAll: () => void } | null>(null);

export function useApp() {
  const app = useContext(AppContext);
  if (!app) throw new Error('useApp outside the app');
  return app;
}

/**
 * Loads with `load` whenever `deps` change, and after `reloadAll` (an import replaced the account); `reload()` reads
 * again keeping what is shown meanwhile.
 */
export function useLoad<T>(load: (signal: AbortSignal) => Promise<T>, deps: unknown[]) {
  const epoch = useContext(AppContext)?.epoch;
  const [state, setState] = useState<{ data: T | null; error: unknown }>({ data: null, error: null });
  const [version, setVersion] = useState(0);
  useEffect(() => {
    const aborted = new AbortController();
    load(aborted.signal).then(
      (data) => !aborted.signal.aborted && setState({ data, error: null }),
      (error: unknown) => !aborted.signal.aborted && setState((old) => ({ data: old.data, error })),
    );
    return () => aborted.abort();
    // `load` is a new closure each render; what it reads is in `deps`.
  }, [...deps, version, epoch]);
  const reload = useCallback(() => setVersion((v) => v + 1), []);
  return { ...state, reload };
}

/** How long a list waits after a live message before reading its page again. */
export const LIST_REFRESH_MS = 500;

/**
 * Calls `refresh` when a live message matches (or after a reconnection), `delayMs` after the first of a burst: a
 * burst of messages (an event, then its delivery attempts) reads the data once more, not once per message. Lists
 * wait longer: under load a list page re-read per burst would cost the server more than the page is worth.
 */
export function useLiveRefresh(
  matches: (message: Parameters<LiveListener>[0]) => boolean,
  refresh: () => void,
  delayMs = 100,
) {
  const { live } = useApp();
  const latest = useRef({ matches, refresh });
  latest.current = { matches, refresh };
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | null = null;
    const unsubscribe = live.subscribe((message) => {
      if (message.type !== 'resync' && !latest.current.matches(message)) return;
      timer ??= setTimeout(() => {
        timer = null;
        latest.current.refresh();
      }, delayMs);
    });
    return () => {
      unsubscribe();
      if (timer) clearTimeout(timer);
    };
  }, [live, delayMs]);
}

const moneyFormat = new Intl.NumberFormat('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
export const money = (amount: number | null | undefined, currency = 'ARS'): string =>
  amount == null ? 'open' : `${currency} ${moneyFormat.format(amount)}`;

/** Times as the API gives them (ISO, UTC), shortened for reading; the full value is in the title. */
export function When({ at }: { at: string | null | undefined }) {
  if (!at) return <span className="muted">—</span>;
  return (
    <time dateTime={at} title={at}>
      {at.replace('T', ' ').replace(/\.\d{3}Z$/, 'Z')}
    </time>
  );
}

export function Status({ value }: { value: string }) {
  return <span className={`status status-${value.replace(/[^a-z_]/g, '')}`}>{value}</span>;
}

/** A `dl` of label/value pairs. */
export function Facts({ items }: { items: [string, ReactNode][] }) {
  return (
    <dl className="facts">
      {items.map(([label, value]) => (
        <div key={label}>
          <dt>{label}</dt>
          <dd>{value ?? <span className="muted">—</span>}</dd>
        </div>
      ))}
    </dl>
  );
}

export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [done, setDone] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
    } catch {
      // Clipboard refused (plain http on a non-loopback host): fall back to a selection the user can copy.
      const area = document.createElement('textarea');
      area.value = text;
      document.body.append(area);
      area.select();
      document.execCommand('copy');
      area.remove();
    }
    setDone(true);
    setTimeout(() => setDone(false), 1500);
  };
  return (
    <button type="button" className="small" onClick={copy}>
      {done ? 'Copied' : label}
    </button>
  );
}

/** A JSON value (or text that holds JSON), pretty, in a collapsible block with a copy button. */
export function JsonBlock({ title, value, open = true }: { title: string; value: unknown; open?: boolean }) {
  const text = typeof value === 'string' ? prettyIfJson(value) : JSON.stringify(value, null, 2);
  return (
    <details className="json" open={open}>
      <summary>
        {title} <CopyButton text={text} label={`Copy ${title.toLowerCase()}`} />
      </summary>
      <pre>{text}</pre>
    </details>
  );
}

function prettyIfJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/** A page's record that this account does not hold: most often a link opened with another key. */
export function NotFound({ what, id }: { what: string; id: string }) {
  return (
    <main>
      <h1>{what} not found</h1>
      <p>
        No {what} {id} in this account. Is the API key the one it was created with? Switch it in the header, or ask for
        a link that carries it. <Link to="/account">Account</Link>
      </p>
    </main>
  );
}

/** What went wrong, as the API said it (code, message, every detail). */
export function ErrorNote({ error }: { error: unknown }) {
  if (!error) return null;
  const api = error instanceof SandboxApiError ? error : null;
  return (
    <div className="error-note" role="alert">
      {api ? <strong>{api.code}</strong> : null}{' '}
      {api ? api.reason : error instanceof Error ? error.message : String(error)}
      {api && api.details.length > 0 ? (
        <ul>
          {api.details.map((detail) => (
            <li key={detail}>{detail}</li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

function Pager({ pagination, onPage, what }: { pagination: Pagination; onPage: (page: number) => void; what: string }) {
  const { page, totalPages, total } = pagination;
  return (
    <nav className="pager" aria-label={`${what} pages`}>
      <button type="button" onClick={() => onPage(page - 1)} disabled={page <= 1}>
        Previous
      </button>
      <span aria-live="polite">
        Page {page} of {Math.max(totalPages, 1)} · {total.toLocaleString('en-US')} {what}
      </span>
      <button type="button" onClick={() => onPage(page + 1)} disabled={page >= totalPages}>
        Next
      </button>
    </nav>
  );
}

/** A button that runs an async action, shows it is busy, and reports its error next to it. */
export function useAction<A extends unknown[]>(action: (...args: A) => Promise<unknown>) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const run = async (...args: A) => {
    setBusy(true);
    setError(null);
    try {
      await action(...args);
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, run };
}

/** A column: its header, what a row shows in it, and an optional cell class (`num`, `mono`, `url`). */
export type Column<T> = [header: string, cell: (item: T) => ReactNode, className?: string];

/** A table of items, one row each, in a wrapper that scrolls sideways on a narrow screen (not the page). */
export function DataTable<T>({
  items,
  columns,
  className,
  rowKey = (item) => (item as { id: string }).id,
}: {
  items: T[];
  columns: Column<T>[];
  className?: string | undefined;
  rowKey?: (item: T) => string;
}) {
  return (
    <div className="table-wrap">
      <table className={className}>
        <TableHead headers={columns.map(([header]) => header)} />
        <tbody>
          {items.map((item) => (
            <tr key={rowKey(item)}>
              {columns.map(([header, cell, cellClass]) => (
                <td key={header} className={cellClass}>
                  {cell(item)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function TableHead({ headers }: { headers: string[] }) {
  return (
    <thead>
      <tr>
        {headers.map((header) => (
          <th key={header} scope="col">
            {header}
          </th>
        ))}
      </tr>
    </thead>
  );
}

/** A list page as read by `useLoad`: its error, the table (or `table` for a custom one), a note when empty, the pager. */
export function PagedList<T>({
  list,
  what,
  onPage,
  columns,
  className,
  table,
}: {
  list: { data: ListPage<T> | null; error: unknown };
  what: string;
  onPage: (page: number) => void;
  columns?: Column<T>[];
  className?: string;
  table?: (items: T[]) => ReactNode;
}) {
  return (
    <>
      <ErrorNote error={list.error} />
      {list.data ? (
        <>
          {table ? (
            table(list.data.items)
          ) : (
            <DataTable items={list.data.items} columns={columns ?? []} className={className} />
          )}
          {list.data.items.length === 0 ? <p className="muted">No {what} yet, or none matches.</p> : null}
          <Pager pagination={list.data.pagination} what={what} onPage={onPage} />
        </>
      ) : list.error ? null : (
        <p aria-busy="true">Loading…</p>
      )}
    </>
  );
}
