import { useState } from 'react';
import { DELIVERY_STATUSES, EVENT_TYPES } from '../../core/records/state.js';
import type { DeliveryView } from '../../core/records/views.js';
import { SelectField } from '../fields.js';
import { Link, type Location, setQuery } from '../router.js';
import {
  ErrorNote,
  LIST_REFRESH_MS,
  PagedList,
  Status,
  TableHead,
  useAction,
  useApp,
  useLiveRefresh,
  useLoad,
  When,
} from '../ui.js';
import { DeliveryCard, SentTo, Whose } from './delivery.js';

const options = (values: readonly string[], any: string): [string, string][] => [
  ['', any],
  ...values.map((v): [string, string] => [v, v]),
];

/** `/ui/deliveries`: the account's delivery log, newest first, filtered by status and event type, live. */
export function DeliveriesPage({ where }: { where: Location }) {
  const { api } = useApp();
  const status = where.query.get('status') ?? '';
  const eventType = where.query.get('eventType') ?? '';
  const page = Number(where.query.get('page') ?? 1) || 1;
  const [open, setOpen] = useState<string | null>(null);
  const list = useLoad(
    (signal) => api.list<DeliveryView>('/sandbox/v1/deliveries', { status, eventType, page }, signal),
    [status, eventType, page],
  );
  useLiveRefresh((message) => message.type === 'delivery', list.reload, LIST_REFRESH_MS);
  return (
    <main>
      <h1>Deliveries</h1>
      <form className="filters" onSubmit={(event) => event.preventDefault()}>
        <SelectField
          label="Status"
          value={status}
          onChange={(event) => setQuery(where, { status: event.target.value, page: undefined })}
          options={options(DELIVERY_STATUSES, 'Any status')}
        />
        <SelectField
          label="Event type"
          value={eventType}
          onChange={(event) => setQuery(where, { eventType: event.target.value, page: undefined })}
          options={options(EVENT_TYPES, 'Any event type')}
        />
      </form>
      {status === 'held' || list.data?.items.some((d) => d.status === 'held') ? (
        <ReleaseAll onDone={list.reload} />
      ) : null}
      <PagedList
        list={list}
        what="deliveries"
        onPage={(next) => setQuery(where, { page: next })}
        table={(items) => (
          <div className="table-wrap">
            <table className="deliveries">
              <TableHead
                headers={['Created', 'Event', 'Status', 'For', 'Attempts', 'Last response', 'Sent to', 'Actions']}
              />
              <tbody>
                {items.map((d) => (
                  <DeliveryRow
                    key={d.id}
                    delivery={d}
                    open={open === d.id}
                    onToggle={() => setOpen(open === d.id ? null : d.id)}
                    onRedelivered={list.reload}
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

/** `POST /sandbox/v1/deliveries/release`: every held delivery (an imported account's) goes out, shown where there are some. */
function ReleaseAll({ onDone }: { onDone: () => void }) {
  const { api } = useApp();
  const action = useAction(async () => {
    await api.deliveries.releaseAll();
    onDone();
  });
  return (
    <p>
      This account was imported: the deliveries its file brought and the callbacks it raised since are held, never sent
      on their own (new ones go to the forwarding URL while one is set). Releasing every one ends the hold.{' '}
      <button type="button" disabled={action.busy} onClick={() => void action.run()}>
        Release every held delivery
      </button>
      <ErrorNote error={action.error} />
    </p>
  );
}

/** A row; on a narrow screen a card (styles.css): each cell a named area, labelled by its `data-label`. */
function DeliveryRow({
  delivery: d,
  open,
  onToggle,
  onRedelivered,
}: {
  delivery: DeliveryView;
  open: boolean;
  onToggle: () => void;
  onRedelivered: () => void;
}) {
  return (
    <>
      <tr>
        <td className="d-created">
          <When at={d.createdAt} />
        </td>
        <td className="d-event">{d.eventType}</td>
        <td className="d-status">
          <Status value={d.status} />
        </td>
        <td className="mono d-for" data-label="For">
          <Whose of={d} />
        </td>
        <td className="num d-attempts" data-label="Attempts">
          {d.attempts}
        </td>
        <td className="d-response" data-label="Last response">
          {d.lastResponseStatus !== null ? `HTTP ${d.lastResponseStatus}` : (d.lastError ?? d.reason ?? '—')}
        </td>
        <td className="url d-url" data-label="Sent to">
          <SentTo delivery={d} />
        </td>
        <td className="d-actions">
          <button
            type="button"
            className="small"
            aria-expanded={open}
            onClick={onToggle}
            aria-label={`${open ? 'Hide' : 'Show'} delivery ${d.id}`}
          >
            {open ? 'Hide' : 'Show'}
          </button>{' '}
          <Link to={`/deliveries/${d.id}`} aria-label={`Open delivery ${d.id}`}>
            Open
          </Link>
        </td>
      </tr>
      {open ? (
        <tr className="expanded">
          <td colSpan={8}>
            <DeliveryCard summary={d} title={`Delivery ${d.id}`} onRedelivered={onRedelivered} showSource />
          </td>
        </tr>
      ) : null}
    </>
  );
}
