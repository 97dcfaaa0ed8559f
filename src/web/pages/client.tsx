// `/ui/clients/{id}`: one client's page, with its CVU, balance, ledger, invoices and cash-in callbacks.
import type { balanceView, clientView, entryView, invoiceView } from '../../core/records/views.js';
import { type Api, SandboxApiError } from '../api.js';
import { Link, type Location, setQuery } from '../router.js';
import {
  type Column,
  DataTable,
  ErrorNote,
  Facts,
  money,
  NotFound,
  PagedList,
  Status,
  useAction,
  useApp,
  useLiveRefresh,
  useLoad,
  When,
} from '../ui.js';
import { OtherFacts } from '../view-facts.js';
import { AllocationForm, InvoiceForm, LedgerForm } from './client-forms.js';
import { EventItem, type EventView } from './payment.js';
import { TransferForm } from './transfer-form.js';

export type ClientView = ReturnType<typeof clientView>;

type Entry = ReturnType<typeof entryView>;
type Invoice = ReturnType<typeof invoiceView>;

const ENTRY_COLUMNS: Column<Entry>[] = [
  ['When', (e) => <When at={e.createdAt} />],
  ['Type', (e) => e.entryType],
  ['Amount', (e) => money(e.amount, e.currency), 'num'],
  ['Description', (e) => e.description],
  ['Source', (e) => e.sourceType],
  [
    'VA payment',
    (e) => (e.paymentId ? <Link to={`/payments/${e.paymentId}`}>{e.paymentId.slice(0, 8)}</Link> : '—'),
    'mono',
  ],
];

const invoiceColumns = (cancel: (invoice: Invoice) => void): Column<Invoice>[] => [
  ['Number', (invoice) => `${invoice.invoiceType} ${invoice.invoiceNumber}`, 'mono'],
  ['Issued', (invoice) => <When at={invoice.issuedAt} />],
  ['Total', (invoice) => money(invoice.totalAmount, invoice.currency), 'num'],
  ['Status', (invoice) => <Status value={invoice.paymentStatus} />],
  ['Due', (invoice) => (invoice.dueAt ? <When at={invoice.dueAt} /> : '—')],
  ['Observations', (invoice) => invoice.observations],
  [
    '',
    (invoice) =>
      invoice.paymentStatus === 'cancelled' ? null : (
        <button type="button" onClick={() => cancel(invoice)} aria-label={`Cancel invoice ${invoice.invoiceNumber}`}>
          Cancel
        </button>
      ),
  ],
];

/** `/ui/clients/{id}`: a client's CVU, balance, ledger (paged), invoices and cash-in callbacks, live. */
export function ClientPage({ id, where }: { id: string; where: Location }) {
  const { api } = useApp();
  const ledgerPage = Number(where.query.get('page') ?? 1) || 1;
  const { client, balance, ledger, invoices, events } = useClientLoads(api, id, ledgerPage);
  const refresh = () => [client, balance, ledger, invoices, events].forEach((load) => void load.reload());
  useLiveRefresh(
    (message) =>
      (message.type === 'transfer' && message.transfer.target?.id === id) ||
      (message.type === 'event' && message.event.clientId === id) ||
      (message.type === 'delivery' &&
        (events.data?.items ?? []).some((event) => event.id === message.delivery.eventId)),
    refresh,
  );
  const cancelInvoice = useAction(async (invoice: Invoice) => {
    await api.clients.updateInvoice(id, invoice.id, { paymentStatus: 'cancelled' });
    refresh();
  });

  if (client.error instanceof SandboxApiError && client.error.status === 404) return <NotFound what="Client" id={id} />;
  const c = client.data;
  return (
    <main>
      <p>
        <Link to="/clients">← Clients</Link>
      </p>
      <ErrorNote error={client.error} />
      {c ? (
        <>
          <header className="page-head">
            <h1>{c.name}</h1>
            <Status value={c.cvuStatus} />
          </header>
          <div className="columns">
            <CvuCard client={c} onDone={refresh} />
            <BalanceCard balance={balance} />
            <section className="card" aria-labelledby="other-fields">
              <h2 id="other-fields">Other fields</h2>
              <OtherFacts view={c} shown={SHOWN} />
            </section>
          </div>
          {c.cvu && c.alias ? (
            <TransferForm key={c.id} addresses={[c.cvu, c.alias]} total={1000} onDone={refresh} />
          ) : null}
          <section aria-labelledby="ledger">
            <h2 id="ledger">Ledger</h2>
            <PagedList
              list={ledger}
              what="entries"
              onPage={(next) => setQuery(where, { page: next })}
              columns={ENTRY_COLUMNS}
            />
            <LedgerForm clientId={c.id} onDone={refresh} />
          </section>
          <InvoicesSection clientId={c.id} invoices={invoices} cancelInvoice={cancelInvoice} onDone={refresh} />
          <section aria-labelledby="client-events">
            <h2 id="client-events">Cash-in callbacks</h2>
            <ErrorNote error={events.error} />
            <ol className="timeline">
              {(events.data?.items ?? []).map((event) => (
                <EventItem key={event.id} event={event} onRedelivered={refresh} />
              ))}
            </ol>
          </section>
        </>
      ) : client.error ? null : (
        <p aria-busy="true">Loading…</p>
      )}
    </main>
  );
}

/** What the client page loads: the client, its balance, a page of its ledger, its invoices and its events. */
function useClientLoads(api: Api, id: string, ledgerPage: number) {
  const client = useLoad((signal) => api.get<ClientView>(`/api/v1/clients/${id}`, undefined, signal), [id]);
  const balance = useLoad(
    (signal) => api.get<ReturnType<typeof balanceView>>(`/api/v1/clients/${id}/balance`, undefined, signal),
    [id],
  );
  const ledger = useLoad(
    (signal) => api.list<Entry>(`/api/v1/clients/${id}/transactions`, { page: ledgerPage }, signal),
    [id, ledgerPage],
  );
  const invoices = useLoad(
    (signal) => api.list<Invoice>(`/api/v1/clients/${id}/invoices`, { limit: 100 }, signal),
    [id],
  );
  const events = useLoad(
    (signal) => api.list<EventView>('/sandbox/v1/events', { clientId: id, limit: 20 }, signal),
    [id],
  );
  return { client, balance, ledger, invoices, events };
}

/** A client's invoices, each with its cancel button, and the forms that issue one or allocate a payment to them. */
function InvoicesSection({
  clientId,
  invoices,
  cancelInvoice,
  onDone,
}: {
  clientId: string;
  invoices: { data: { items: Invoice[] } | null; error: unknown };
  cancelInvoice: { run: (invoice: Invoice) => Promise<unknown>; error: unknown };
  onDone: () => void;
}) {
  return (
    <section aria-labelledby="invoices">
      <h2 id="invoices">Invoices</h2>
      <ErrorNote error={invoices.error ?? cancelInvoice.error} />
      {invoices.data && invoices.data.items.length > 0 ? (
        <DataTable items={invoices.data.items} columns={invoiceColumns((invoice) => void cancelInvoice.run(invoice))} />
      ) : (
        <p className="muted">No invoice.</p>
      )}
      <div className="columns">
        <InvoiceForm clientId={clientId} onDone={onDone} />
        <AllocationForm clientId={clientId} invoices={invoices.data?.items ?? []} onDone={onDone} />
      </div>
    </section>
  );
}

/** The fields the page shows in its header and CVU card; `OtherFacts` shows the rest. */
const SHOWN = [
  'name',
  'cvuStatus',
  'cvu',
  'alias',
  'taxId',
  'paymentHubId',
  'hubName',
  'cashinCallbackUrl',
  'externalReference',
] as const satisfies readonly (keyof ClientView)[];

/** A client's CVU, with the buttons that request, activate or disable it. */
function CvuCard({ client: c, onDone }: { client: ClientView; onDone: () => void }) {
  const { api } = useApp();
  const switchCvu = useAction(async (cvuStatus: 'provisioning' | 'active' | 'disabled') => {
    await api.clients.setCvuStatus(c.id, { cvuStatus });
    onDone();
  });
  return (
    <section className="card" aria-labelledby="cvu">
      <h2 id="cvu">CVU</h2>
      <Facts
        items={[
          ['CVU', <span className="mono">{c.cvu}</span>],
          ['Alias', <span className="mono">{c.alias}</span>],
          ['CVU status', c.cvuStatus],
          ['Tax ID', c.taxId],
          ['Hub', `${c.paymentHubId} · ${c.hubName}`],
          ['Cash-in callback', c.cashinCallbackUrl ?? 'none'],
          ['Reference', c.externalReference],
        ]}
      />
      <div className="actions">
        {c.cvuStatus === 'not_provisioned' ? (
          <button type="button" onClick={() => void switchCvu.run('provisioning')} disabled={switchCvu.busy}>
            Request CVU
          </button>
        ) : null}
        {c.cvuStatus === 'active' ? (
          <button type="button" onClick={() => void switchCvu.run('disabled')} disabled={switchCvu.busy}>
            Disable CVU
          </button>
        ) : (
          <button type="button" onClick={() => void switchCvu.run('active')} disabled={switchCvu.busy}>
            Activate CVU
          </button>
        )}
      </div>
      <ErrorNote error={switchCvu.error} />
    </section>
  );
}

/** A client's balance summary. */
function BalanceCard({ balance }: { balance: { data: ReturnType<typeof balanceView> | null; error: unknown } }) {
  return (
    <section className="card" aria-labelledby="balance">
      <h2 id="balance">Balance</h2>
      <ErrorNote error={balance.error} />
      {balance.data ? (
        <Facts
          items={[
            ['Cash in', money(balance.data.totalCashIn)],
            ['Cash out', money(balance.data.totalCashOut)],
            ['Invoiced', money(balance.data.totalInvoiced)],
            ['Balance', <strong>{money(balance.data.balance)}</strong>],
          ]}
        />
      ) : null}
    </section>
  );
}
