import { type FormEvent, useState } from 'react';
import { VA_PAYMENT_STATUSES } from '../../core/records/state.js';
import type { VaPaymentView } from '../../core/records/views.js';
import { Field, SelectField } from '../fields.js';
import { Link, type Location, navigate, setQuery } from '../router.js';
import { findById } from '../short-id.js';
import {
  type Column,
  LIST_REFRESH_MS,
  money,
  PagedList,
  Status,
  useApp,
  useLiveRefresh,
  useLoad,
  When,
} from '../ui.js';

/** What the text filter searches: the list's own exact-match filters, or one payment by its id. */
const SEARCH_FIELDS: [string, string][] = [
  ['externalReference', 'External reference'],
  ['clientTaxId', 'Client tax ID'],
  ['clientId', 'Client ID'],
  ['id', 'Payment ID'],
];

const COLUMNS: Column<VaPaymentView>[] = [
  [
    'VA payment',
    // The id's first block tells rows apart; the whole id is in the link and on its page.
    (p) => (
      <Link to={`/payments/${p.id}`} title={p.id} aria-label={`VA payment ${p.id}`}>
        {p.id.slice(0, 8)}
      </Link>
    ),
    'mono',
  ],
  ['Status', (p) => <Status value={p.status} />],
  ['Amount', (p) => money(p.amount, p.currency), 'num'],
  ['Received', (p) => money(p.totalReceived, p.currency), 'num'],
  ['Created', (p) => <When at={p.createdAt} />],
  ['Lock', (p) => p.lockMode],
  ['Reference', (p) => p.externalReference ?? <span className="muted">—</span>],
];

/** `/ui/payments`: the list, filtered and paged by the server; the filters live in the address, to share. */
export function PaymentsPage({ where }: { where: Location }) {
  const { api } = useApp();
  const status = where.query.get('status') ?? '';
  const field = where.query.get('field') ?? 'externalReference';
  const text = where.query.get('q') ?? '';
  const page = Number(where.query.get('page') ?? 1) || 1;
  const [draft, setDraft] = useState(text);
  const [problem, setProblem] = useState<string | undefined>();
  const list = useLoad(
    (signal) =>
      api.list<VaPaymentView>(
        '/api/v1/va-payments',
        { status, page, ...(text && field !== 'id' ? { [field]: text } : {}) },
        signal,
      ),
    [status, field, text, page],
  );
  // Only the first page changes when payments are created; statuses change anywhere, so any payment event reads it again.
  useLiveRefresh(
    (message) => message.type === 'event' && message.event.vaPaymentId !== null,
    list.reload,
    LIST_REFRESH_MS,
  );

  const search = async (event: FormEvent) => {
    event.preventDefault();
    setProblem(undefined);
    if (field !== 'id' || !draft.trim()) return setQuery(where, { q: draft.trim(), page: undefined });
    try {
      const found = await findById(api, '/api/v1/va-payments', 'VA payment', draft);
      if ('id' in found) navigate(`/payments/${found.id}`);
      else setProblem(found.problem);
    } catch (error) {
      setProblem((error as Error).message);
    }
  };
  return (
    <main>
      <header className="page-head">
        <h1>VA payments</h1>
        <Link to="/create" className="button">
          New VA payment
        </Link>
      </header>
      <form className="filters" onSubmit={(event) => void search(event)} role="search">
        <SelectField
          label="Status"
          value={status}
          onChange={(event) => setQuery(where, { status: event.target.value, page: undefined })}
          options={[['', 'Any status'], ...VA_PAYMENT_STATUSES.map((s): [string, string] => [s, s])]}
        />
        <SelectField
          label="Search by"
          value={field}
          onChange={(event) => setQuery(where, { field: event.target.value })}
          options={SEARCH_FIELDS}
        />
        <Field
          label="Search"
          type="search"
          value={draft}
          onChange={(event) => setDraft(event.target.value)}
          placeholder={field === 'id' ? 'the id, or its first 8 characters' : 'exact value'}
          error={problem}
        />
        <button type="submit">Search</button>
      </form>
      <PagedList
        list={list}
        what="VA payments"
        onPage={(next) => setQuery(where, { page: next })}
        columns={COLUMNS}
        className="payments"
      />
    </main>
  );
}
