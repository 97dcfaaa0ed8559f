import { useState } from 'react';
import type { DeliveryDetail, DeliveryView } from '../../core/records/views.js';
import { SandboxApiError } from '../api.js';
import { Link, navigate, shareLink } from '../router.js';
import {
  CopyButton,
  ErrorNote,
  Facts,
  JsonBlock,
  NotFound,
  Status,
  useAction,
  useApp,
  useLiveRefresh,
  useLoad,
  When,
} from '../ui.js';

type AttemptDetail = DeliveryDetail['attempts'][number];

/**
 * One delivery with every attempt: the request as sent (headers, body), the response as received, how long it
 * took and what failed; and a redeliver form. Read again whenever the summary changes (a live attempt).
 */
export function DeliveryCard({
  summary,
  title,
  onRedelivered,
  showSource = false,
  redeliveryOf,
  onItsPage = false,
}: {
  summary: DeliveryView;
  title: string;
  /** Given: the card has its own redeliver form (a timeline has one per event instead). */
  onRedelivered?: (redelivery: DeliveryDetail) => void;
  /** Link the VA payment or client the event is about (where the page is not already its own). */
  showSource?: boolean;
  /** How to name the delivery this one repeats, where the page names deliveries (else its id). */
  redeliveryOf?: string | undefined;
  /** On the delivery's own page: the title is not a link to it. */
  onItsPage?: boolean;
}) {
  const { api } = useApp();
  const { data, error } = useLoad(
    (signal) => api.get<DeliveryDetail>(`/sandbox/v1/deliveries/${summary.id}`, undefined, signal),
    [summary.id, summary.updatedAt, summary.attempts, summary.status],
  );
  return (
    <section className="delivery" aria-label={title}>
      <header>
        <h4>{onItsPage ? title : <Link to={`/deliveries/${summary.id}`}>{title}</Link>}</h4>
        <Status value={summary.status} />
        <span className="muted">
          <SentTo delivery={summary} />
        </span>
      </header>
      {summary.redeliveryOf ? (
        <p className="muted">
          Redelivery of <Link to={`/deliveries/${summary.redeliveryOf}`}>{redeliveryOf ?? summary.redeliveryOf}</Link>
        </p>
      ) : null}
      {summary.status === 'held' ? <p className="muted">Held: {summary.reason}.</p> : null}
      {summary.nextAttemptAt ? (
        <p className="muted">
          Next attempt at <When at={summary.nextAttemptAt} />
        </p>
      ) : null}
      <ErrorNote error={error} />
      {data ? (
        <>
          {!showSource ? null : data.event.vaPaymentId ? (
            <p>
              VA payment <Link to={`/payments/${data.event.vaPaymentId}`}>{data.event.vaPaymentId}</Link>
            </p>
          ) : data.event.clientId ? (
            <p>
              Client <Link to={`/clients/${data.event.clientId}`}>{data.event.clientId}</Link>
            </p>
          ) : null}
          {data.attempts.length === 0 ? <p className="muted">No attempt yet.</p> : null}
          <ol className="attempts">
            {data.attempts.map((attempt) => (
              <AttemptView key={attempt.n} attempt={attempt} />
            ))}
          </ol>
        </>
      ) : null}
      {onRedelivered && summary.status === 'held' ? (
        <RedeliverForm deliveryId={summary.id} onDone={onRedelivered} verb="release" />
      ) : null}
      {onRedelivered && summary.status !== 'dropped' ? (
        <RedeliverForm deliveryId={summary.id} onDone={onRedelivered} />
      ) : null}
    </section>
  );
}

/** The VA payment or client a delivery's event is about, linked: its short id in lists, the whole id when `long`. */
export function Whose({ of: d, long = false }: { of: Pick<DeliveryView, 'vaPaymentId' | 'clientId'>; long?: boolean }) {
  const [what, path, id] = d.vaPaymentId
    ? ['VA payment', 'payments', d.vaPaymentId]
    : d.clientId
      ? ['Client', 'clients', d.clientId]
      : [];
  if (!id) return <span className="muted">—</span>;
  return (
    <Link to={`/${path}/${id}`} title={id} aria-label={`${what} ${id}`}>
      {what} {long ? id : id.slice(0, 8)}
    </Link>
  );
}

/** Where the delivery's last attempt went: its URL, or (forwarded, or redelivered elsewhere) the other URL, marked. */
export function SentTo({ delivery: d }: { delivery: Pick<DeliveryView, 'url' | 'forwardedTo' | 'reason'> }) {
  if (d.forwardedTo) return <span title={`configured: ${d.url ?? 'none'}`}>→ {d.forwardedTo}</span>;
  return <>{d.url ?? d.reason ?? <span className="muted">none</span>}</>;
}

function AttemptView({ attempt }: { attempt: AttemptDetail }) {
  const outcome = attempt.responseStatus !== null ? `HTTP ${attempt.responseStatus}` : (attempt.error ?? 'no response');
  const ok = attempt.responseStatus !== null && attempt.responseStatus >= 200 && attempt.responseStatus < 300;
  return (
    <li className="attempt">
      <h5>
        Attempt {attempt.n} · <span className={ok ? 'good' : 'bad'}>{outcome}</span> · {attempt.durationMs} ms ·{' '}
        <When at={attempt.startedAt} />
      </h5>
      {attempt.errorMessage ? <p className="bad">{attempt.errorMessage}</p> : null}
      <Facts items={[['Request', `${attempt.request.method} ${attempt.request.url ?? ''}`], ...extraFacts(attempt)]} />
      <JsonBlock title="Request headers" value={attempt.request.headers} open={false} />
      <JsonBlock title="Request body" value={attempt.request.body} open={false} />
      {attempt.responseBody ? (
        <JsonBlock title="Response body" value={attempt.responseBody} />
      ) : (
        <p className="muted">No response body.</p>
      )}
    </li>
  );
}

/** Fields the attempt may carry beyond these (where a forwarded or redirected attempt went), shown as they come. */
function extraFacts(attempt: AttemptDetail): [string, string][] {
  const known = new Set([
    'n',
    'startedAt',
    'durationMs',
    'responseStatus',
    'responseBody',
    'error',
    'errorMessage',
    'request',
  ]);
  return Object.entries(attempt)
    .filter(([name, value]) => !known.has(name) && value !== null && typeof value !== 'object')
    .map(([name, value]) => [name, String(value)]);
}

/**
 * `POST /sandbox/v1/deliveries/{id}/redeliver` (a new delivery of the same event) or, for a held one, `.../release`
 * (this delivery sent at last): optionally to another URL. `onDone` gets the delivery the answer names.
 */
export function RedeliverForm({
  deliveryId,
  onDone,
  verb = 'redeliver',
}: {
  deliveryId: string;
  onDone: (delivery: DeliveryDetail) => void;
  verb?: 'redeliver' | 'release';
}) {
  const { api } = useApp();
  const [url, setUrl] = useState('');
  const action = useAction(async () => {
    const redelivery = await api.deliveries[verb](deliveryId, url.trim() || undefined);
    setUrl('');
    onDone(redelivery);
  });
  const name = verb === 'release' ? 'Release' : 'Redeliver';
  return (
    <form
      className="inline-form"
      onSubmit={(event) => {
        event.preventDefault();
        void action.run();
      }}
    >
      <label>
        <span>
          {name} to{' '}
          <span className="muted">
            ({verb === 'release' ? 'empty: the forwarding URL, else its own' : 'empty: the same URL'})
          </span>
        </span>
        <input
          type="url"
          value={url}
          onChange={(event) => setUrl(event.target.value)}
          placeholder="http://127.0.0.1:3000/hooks"
        />
      </label>
      <button type="submit" disabled={action.busy}>
        {name}
      </button>
      <ErrorNote error={action.error} />
    </form>
  );
}

/** `/ui/deliveries/{id}`: one delivery on a page of its own (a link to share), live; a redelivery opens the new one. */
export function DeliveryPage({ id }: { id: string }) {
  const { api } = useApp();
  const delivery = useLoad(
    (signal) => api.get<DeliveryDetail>(`/sandbox/v1/deliveries/${id}`, undefined, signal),
    [id],
  );
  useLiveRefresh((message) => message.type === 'delivery' && message.delivery.id === id, delivery.reload);
  if (delivery.error instanceof SandboxApiError && delivery.error.status === 404)
    return <NotFound what="Delivery" id={id} />;
  const d = delivery.data;
  return (
    <main>
      <p>
        <Link to="/deliveries">← Deliveries</Link>
      </p>
      <ErrorNote error={delivery.error} />
      {d ? (
        <>
          <header className="page-head">
            <h1>
              Delivery <span className="mono">{d.id}</span>
            </h1>
            <Status value={d.status} />
            <CopyButton text={shareLink(api.key)} label="Copy link" />
          </header>
          <Facts
            items={[
              ['Event', `${d.event.eventType} · ${d.event.id}`],
              ['For', <Whose of={d} long />],
              ['Created', <When at={d.createdAt} />],
              ['URL', d.url ?? d.reason],
              ...(d.forwardedTo ? [['Sent to', d.forwardedTo] as [string, string]] : []),
              ['Attempts', d.attempts.length],
            ]}
          />
          <DeliveryCard
            summary={{ ...d, attempts: d.attempts.length }}
            title="Attempts"
            onItsPage
            onRedelivered={(next) => navigate(`/deliveries/${next.id}`)}
          />
        </>
      ) : delivery.error ? null : (
        <p aria-busy="true">Loading…</p>
      )}
    </main>
  );
}
