import { useRef } from 'react';
import type { eventView, VaPaymentView } from '../../core/records/views.js';
import { SandboxApiError } from '../api.js';
import { Link, shareLink } from '../router.js';
import {
  type Column,
  CopyButton,
  DataTable,
  ErrorNote,
  Facts,
  JsonBlock,
  money,
  NotFound,
  Status,
  useAction,
  useApp,
  useLiveRefresh,
  useLoad,
  When,
} from '../ui.js';
import { OtherFacts } from '../view-facts.js';
import { DeliveryCard, RedeliverForm } from './delivery.js';
import { TransferForm } from './transfer-form.js';

export type EventView = ReturnType<typeof eventView>;
const ACTIVE = ['waiting', 'underpaid'];
/** A payment raises a handful of events; this covers any real one in one read. */
const TIMELINE_LIMIT = 100;

const CASH_IN_COLUMNS: Column<VaPaymentView['cashIns'][number]>[] = [
  ['Received', (cashIn) => <When at={cashIn.receivedAt} />],
  ['Total', (cashIn) => money(cashIn.total), 'num'],
  ['Taxes', (cashIn) => money(cashIn.taxes), 'num'],
  ['Net', (cashIn) => money(cashIn.incomingAmount), 'num'],
  ['Operation', (cashIn) => cashIn.operationId, 'mono'],
];

/** `/ui/payments/{id}`: a VA payment's whole story on one page, live. */
export function PaymentPage({ id }: { id: string }) {
  const { api } = useApp();
  const payment = useLoad((signal) => api.get<VaPaymentView>(`/api/v1/va-payments/${id}`, undefined, signal), [id]);
  const events = useLoad(
    (signal) => api.list<EventView>('/sandbox/v1/events', { vaPaymentId: id, limit: TIMELINE_LIMIT }, signal),
    [id],
  );
  const eventIds = useRef(new Set<string>());
  for (const event of events.data?.items ?? []) eventIds.current.add(event.id);
  const refresh = () => {
    payment.reload();
    events.reload();
  };
  useLiveRefresh((message) => {
    if (message.type === 'event' && message.event.vaPaymentId === id) {
      // Known at once, so the attempts that follow it are recognised before the timeline is read again.
      eventIds.current.add(message.event.id);
      return true;
    }
    if (message.type === 'delivery') return eventIds.current.has(message.delivery.eventId);
    return message.type === 'transfer' && message.transfer.target?.id === id;
  }, refresh);

  if (payment.error instanceof SandboxApiError && payment.error.status === 404)
    return <NotFound what="VA payment" id={id} />;
  const p = payment.data;
  const timeline = [...(events.data?.items ?? [])].reverse();
  return (
    <main>
      <p>
        <Link to="/payments">← VA payments</Link>
      </p>
      <ErrorNote error={payment.error} />
      {p ? (
        <>
          <header className="page-head">
            <h1>
              VA payment <span className="mono">{p.id}</span>
            </h1>
            <Status value={p.status} />
            <CopyButton text={shareLink(api.key)} label="Copy link" />
          </header>
          <PaymentFacts payment={p} />
          {ACTIVE.includes(p.status) ? <PaymentActions payment={p} onDone={refresh} /> : null}
          <section aria-labelledby="cash-ins">
            <h2 id="cash-ins">Cash-ins</h2>
            {p.cashIns.length === 0 ? (
              <p className="muted">None yet.</p>
            ) : (
              <DataTable items={p.cashIns} rowKey={(cashIn) => cashIn.operationId} columns={CASH_IN_COLUMNS} />
            )}
          </section>
          <section aria-labelledby="timeline">
            <h2 id="timeline">Timeline</h2>
            <ErrorNote error={events.error} />
            <ol className="timeline">
              {timeline.map((event) => (
                <EventItem key={event.id} event={event} onRedelivered={refresh} />
              ))}
            </ol>
          </section>
        </>
      ) : payment.error ? null : (
        <p aria-busy="true">Loading…</p>
      )}
    </main>
  );
}

/** The fields the page shows in its header, cards, cash-ins and timeline; `OtherFacts` shows the rest. */
const SHOWN = [
  'id',
  'status',
  'amount',
  'lockMode',
  'totalReceived',
  'receivedAmount',
  'remainingAmount',
  'createdAt',
  'expiresAt',
  'completedAt',
  'cancelledAt',
  'expiredAt',
  'cvu',
  'alias',
  'callbackUrl',
  'successUrl',
  'failureUrl',
  'clientId',
  'clientName',
  'clientTaxId',
  'externalReference',
] as const satisfies readonly (keyof VaPaymentView)[];

/** What a VA payment asks and has received, and the instructions to pay it. */
function PaymentFacts({ payment: p }: { payment: VaPaymentView }) {
  return (
    <div className="columns">
      <section className="card" aria-labelledby="amounts">
        <h2 id="amounts">Amounts</h2>
        <Facts
          items={[
            ['Amount', money(p.amount, p.currency)],
            ['Lock mode', p.lockMode],
            ['Total received', money(p.totalReceived, p.currency)],
            ['Received (net)', money(p.receivedAmount, p.currency)],
            ['Remaining', money(p.remainingAmount, p.currency)],
            ['Created', <When at={p.createdAt} />],
            ['Expires', <When at={p.expiresAt} />],
            ['Completed', <When at={p.completedAt ?? p.cancelledAt ?? p.expiredAt} />],
          ]}
        />
      </section>
      <section className="card" aria-labelledby="instructions">
        <h2 id="instructions">Payment instructions</h2>
        <Facts
          items={[
            ['CVU', <span className="mono">{p.paymentInstructions.cvu}</span>],
            ['Alias', <span className="mono">{p.paymentInstructions.alias}</span>],
            ['Holder', p.paymentInstructions.holderName],
            ['Bank', p.paymentInstructions.bankName],
            ['Amount', money(p.paymentInstructions.amount, p.currency)],
            ['Callback', p.callbackUrl ?? (p.successUrl ? `${p.successUrl} / ${p.failureUrl}` : 'none')],
            [
              'Client',
              p.clientId ? (
                <Link to={`/clients/${p.clientId}`}>{p.clientName ?? p.clientId}</Link>
              ) : (
                (p.clientTaxId ?? p.clientName)
              ),
            ],
            ['Reference', p.externalReference],
          ]}
        />
      </section>
      <section className="card" aria-labelledby="other-fields">
        <h2 id="other-fields">Other fields</h2>
        <OtherFacts view={p} shown={SHOWN} />
      </section>
    </div>
  );
}

/** What can still be done to an active VA payment: pay it by a transfer, or cancel it. */
function PaymentActions({ payment: p, onDone }: { payment: VaPaymentView; onDone: () => void }) {
  const { api } = useApp();
  const cancel = useAction(async () => {
    if (!confirm('Cancel this VA payment? Its CVU is released and a "cancelled" callback is sent.')) return;
    await api.vaPayments.cancel(p.id);
    onDone();
  });
  return (
    <div className="columns">
      <TransferForm
        key={`${p.id}:${p.remainingAmount}`}
        addresses={[p.cvu, p.alias].filter((a): a is string => !!a)}
        total={p.amount === null ? 1000 : p.remainingAmount}
        onDone={onDone}
      />
      <section className="card" aria-labelledby="cancel">
        <h3 id="cancel">Cancel</h3>
        <p className="muted">Ends the payment as the integrator's cancel call would.</p>
        <button type="button" className="danger" onClick={() => void cancel.run()} disabled={cancel.busy}>
          Cancel VA payment
        </button>
        <ErrorNote error={cancel.error} />
      </section>
    </div>
  );
}

/** One event: what was raised, where it was routed, and every delivery of it with every attempt. */
export function EventItem({ event, onRedelivered }: { event: EventView; onRedelivered: () => void }) {
  const titleOf = (id: string | null) => {
    const index = event.deliveries.findIndex((delivery) => delivery.id === id);
    return index < 0 ? undefined : `Delivery ${index + 1}`;
  };
  return (
    <li className="event" data-event-type={event.eventType}>
      <h3>
        <span className="event-type">{event.eventType}</span> <When at={event.createdAt} />
      </h3>
      <p className="routing">
        {event.url ? <>→ {event.url}</> : <span className="bad">dropped: {event.droppedReason}</span>}
      </p>
      <JsonBlock title="Payload" value={event.body} open={false} />
      {event.deliveries.map((delivery, index) => (
        <DeliveryCard
          key={delivery.id}
          summary={delivery}
          title={`Delivery ${index + 1}`}
          redeliveryOf={titleOf(delivery.redeliveryOf)}
        />
      ))}
      {event.url && event.deliveries.length > 0 ? (
        <RedeliverForm deliveryId={event.deliveries.at(-1)!.id} onDone={onRedelivered} />
      ) : null}
    </li>
  );
}
