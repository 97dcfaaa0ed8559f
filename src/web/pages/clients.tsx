// `/ui/clients`: the account's clients as a searchable, paged list.
import { type FormEvent, useState } from 'react';
import { Field, SelectField } from '../fields.js';
import { Link, type Location, setQuery } from '../router.js';
import { type Column, LIST_REFRESH_MS, PagedList, Status, useApp, useLiveRefresh, useLoad, When } from '../ui.js';
import type { ClientView } from './client.js';

const CLIENT_COLUMNS: Column<ClientView>[] = [
  ['Name', (c) => <Link to={`/clients/${c.id}`}>{c.name}</Link>],
  ['Tax ID', (c) => c.taxId, 'mono'],
  ['CVU status', (c) => <Status value={c.cvuStatus} />],
  ['Alias', (c) => c.alias ?? '—', 'mono'],
  ['Created', (c) => <When at={c.createdAt} />],
];

/** `/ui/clients`: the account's clients, newest first, filtered by tax ID or external reference. */
export function ClientsPage({ where }: { where: Location }) {
  const { api } = useApp();
  const field = where.query.get('field') ?? 'taxId';
  const text = where.query.get('q') ?? '';
  const page = Number(where.query.get('page') ?? 1) || 1;
  const [draft, setDraft] = useState(text);
  const list = useLoad(
    (signal) => api.list<ClientView>('/api/v1/clients', { page, ...(text ? { [field]: text } : {}) }, signal),
    [field, text, page],
  );
  useLiveRefresh(
    (message) => message.type === 'event' && message.event.clientId !== null && message.event.vaPaymentId === null,
    list.reload,
    LIST_REFRESH_MS,
  );
  const search = (event: FormEvent) => {
    event.preventDefault();
    setQuery(where, { q: draft.trim(), page: undefined });
  };
  return (
    <main>
      <header className="page-head">
        <h1>Clients</h1>
        <Link to="/create" className="button">
          New client
        </Link>
      </header>
      <form className="filters" role="search" onSubmit={search}>
        <SelectField
          label="Search by"
          value={field}
          onChange={(event) => setQuery(where, { field: event.target.value })}
          options={[
            ['taxId', 'Tax ID'],
            ['externalReference', 'External reference'],
          ]}
        />
        <Field
          label="Search"
          type="search"
          value={draft}
          onChange={(event) => setDraft(event.target.value)}
          placeholder="exact value"
        />
        <button type="submit">Search</button>
      </form>
      <PagedList
        list={list}
        what="clients"
        onPage={(next) => setQuery(where, { page: next })}
        columns={CLIENT_COLUMNS}
      />
    </main>
  );
}
