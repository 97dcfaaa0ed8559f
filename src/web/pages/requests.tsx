import { useEffect, useState } from 'react';
import { journalNote } from '../../client/journal-note.js';
import { JOURNAL_METHODS, type JournalItem } from '../../core/records/request-journal.js';
import { Field, SelectField } from '../fields.js';
import { type Location, setQuery } from '../router.js';
import { Facts, JsonBlock, PagedList, TableHead, useApp, useLoad, When } from '../ui.js';

/** How often the page reads the journal again: a request that only reads raises no live message to wait for. */
const REQUESTS_REFRESH_MS = 1000;

/** `/ui/requests`: the request journal, what the integration sent to `/api/v1` and what it was answered, newest first. */
export function RequestsPage({ where }: { where: Location }) {
  const { api } = useApp();
  const method = where.query.get('method') ?? '';
  const path = where.query.get('path') ?? '';
  const status = where.query.get('status') ?? '';
  const page = Number(where.query.get('page') ?? 1) || 1;
  const [open, setOpen] = useState<string | null>(null);
  const list = useLoad(
    (signal) => api.list<JournalItem>('/sandbox/v1/requests', { method, path, status, page }, signal),
    [method, path, status, page],
  );
  useEffect(() => {
    const timer = setInterval(list.reload, REQUESTS_REFRESH_MS);
    return () => clearInterval(timer);
  }, [list.reload]);
  return (
    <main>
      <h1>Requests</h1>
      <p className="hint">Every /api/v1 request of this account as it was sent and answered (never its API key).</p>
      <form className="filters" onSubmit={(event) => event.preventDefault()}>
        <SelectField
          label="Method"
          value={method}
          onChange={(event) => setQuery(where, { method: event.target.value, page: undefined })}
          options={[['', 'Any method'], ...JOURNAL_METHODS.map((m): [string, string] => [m, m])]}
        />
        <Field
          label="Path"
          placeholder="/api/v1/va-payments/{id}"
          value={path}
          onChange={(event) => setQuery(where, { path: event.target.value, page: undefined })}
        />
        <Field
          label="Status"
          inputMode="numeric"
          placeholder="201"
          value={status}
          onChange={(event) => setQuery(where, { status: event.target.value, page: undefined })}
        />
      </form>
      <PagedList
        list={list}
        what="requests"
        onPage={(next) => setQuery(where, { page: next })}
        table={(items) => (
          <div className="table-wrap">
            <table className="requests">
              <TableHead headers={['At', 'Method', 'Path', 'Status', 'ms', 'Note', '']} />
              <tbody>
                {items.map((r) => (
                  <RequestRow
                    key={r.id}
                    request={r}
                    open={open === r.id}
                    onToggle={() => setOpen(open === r.id ? null : r.id)}
                  />
                ))}
              </tbody>
            </table>
          </div>
        )}
      />
    </main>
  );
}

function RequestRow({ request: r, open, onToggle }: { request: JournalItem; open: boolean; onToggle: () => void }) {
  return (
    <>
      <tr>
        <td>
          <When at={r.at} />
        </td>
        <td>{r.method}</td>
        <td className="mono">{r.path}</td>
        <td className="num">{r.status ?? 'no answer'}</td>
        <td className="num">{r.durationMs}</td>
        <td>{journalNote(r)}</td>
        <td>
          <button
            type="button"
            className="small"
            aria-expanded={open}
            onClick={onToggle}
            aria-label={`${open ? 'Hide' : 'Show'} request ${r.id}`}
          >
            {open ? 'Hide' : 'Show'}
          </button>
        </td>
      </tr>
      {open ? (
        <tr className="expanded">
          <td colSpan={7}>
            <Facts
              items={[
                ['Request id', <span className="mono">{r.id}</span>],
                ['Query', Object.keys(r.query).length ? new URLSearchParams(r.query).toString() : '—'],
                ['Idempotency-Key', r.idempotencyKey ?? '—'],
                ['API fault', r.apiFault ? `${r.apiFault.type} (rule ${r.apiFault.ruleId})` : '—'],
              ]}
            />
            <JsonBlock title="Request headers" value={r.requestHeaders} />
            <JsonBlock title="Request body" value={r.requestBody} />
            <JsonBlock title="Response body" value={r.responseBody} />
          </td>
        </tr>
      ) : null}
    </>
  );
}
