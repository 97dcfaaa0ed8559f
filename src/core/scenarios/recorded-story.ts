import type { Account } from '../account/index.js';
import { ms } from '../conventions/index.js';
import type { Delivery, SandboxEvent } from '../records/index.js';
import { push } from '../store/index.js';

/** An account's story as the scenario recorder reads it: its records, their names in the replay, and the timeline. */

export type Story = ReturnType<typeof storyOf>;

/** An account's records, looked up once (an incident file may hold thousands of each), and the timeline steps go on. */
export function storyOf(account: Account) {
  const state = account.read();
  const payments = Object.values(state.vaPayments);
  const clients = Object.values(state.clients);
  const invoices = Object.values(state.invoices);
  const events = Object.values(state.events);
  const transfers = Object.values(state.transfers);
  const firstDelivery = new Map(
    Object.values(state.deliveries)
      .filter((d) => d.redeliveryOf === null)
      .map((d) => [d.eventId, d]),
  );
  /** What happened at a sandbox instant, in the order it happened there. */
  const timeline: { at: number; steps: Record<string, unknown>[] }[] = [];
  const story = {
    state,
    payments,
    clients,
    invoices,
    transfers,
    timeline,
    paymentName: new Map(payments.map((p, i) => [p.id, `payment_${i + 1}`])),
    clientName: new Map(clients.map((c, i) => [c.id, `client_${i + 1}`])),
    invoiceName: new Map(invoices.map((invoice, i) => [invoice.id, `invoice_${i + 1}`])),
    /** A VA payment's or a client's own events (a client's: those of no payment), oldest first. */
    eventsOf: groupBy(events, (e) => e.vaPaymentId ?? e.clientId),
    transfersTo: groupBy(transfers, (t) => t.cvu),
    creditedTimes: groupBy(transfers, (t) => t.target?.id ?? null),
    paymentsAt: groupBy(payments, (p) => p.cvu),
    /** Each event's callback that failed before it got through: the receiver answers so again, right before it is raised. */
    failures: new Map<string, Record<string, unknown>>(),
    at: (time: string, ...steps: Record<string, unknown>[]) => timeline.push({ at: ms(time), steps }),
    /** The failReceiver steps for the events a record raised at `time`. */
    failing: (source: string, time: string) =>
      (story.eventsOf.get(source) ?? [])
        .filter((e) => e.createdAt === time && story.failures.has(e.id))
        .map((e) => story.failures.get(e.id)!),
  };
  for (const event of events) {
    const first = firstDelivery.get(event.id);
    const step = first && failuresOf(first, pathOf(story, event));
    if (step) story.failures.set(event.id, step);
  }
  return story;
}

/** Where an event's callbacks go in the replay: its payment's or client's path, by the URL it was routed to. */
function pathOf(story: Pick<Story, 'state' | 'paymentName' | 'clientName'>, event: SandboxEvent): string {
  if (event.clientId !== null && event.vaPaymentId === null) return `${story.clientName.get(event.clientId)!}/cashin`;
  const payment = story.state.vaPayments[event.vaPaymentId!]!;
  const own = story.paymentName.get(payment.id)!;
  return `${own}/${event.url === payment.successUrl ? 'success' : event.url === payment.failureUrl ? 'failure' : 'callback'}`;
}

/** The failed answers a delivery got before it got through (or gave up): one failReceiver step, or none. */
function failuresOf(delivery: Delivery, path: string): Record<string, unknown> | undefined {
  const attempts = delivery.attempts.filter((a) => !a.fault);
  const failed = attempts.findIndex(
    (a) => a.responseStatus !== null && a.responseStatus >= 200 && a.responseStatus < 300,
  );
  const times = failed < 0 ? attempts.length : failed;
  if (times === 0) return undefined;
  const status = attempts[0]!.responseStatus;
  return { do: 'failReceiver', times, status: status !== null && status >= 300 ? status : 500, path: `/${path}` };
}

/** Records by a key of theirs, each list in the records' order. */
function groupBy<T, K>(records: T[], key: (record: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>();
  for (const record of records) push(groups, key(record), record);
  return groups;
}
