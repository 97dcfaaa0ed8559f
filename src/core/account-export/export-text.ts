import type { Account } from '../account/index.js';
import { droppedDelivery, sent } from '../callbacks/index.js';
import { type Delivery, type SandboxEvent, TABLES, type TableName, type VaPayment } from '../records/index.js';

/**
 * The account export as JSON text, a piece at a time, read from the store a batch at a time (`Account.rows`): the
 * server streams it, so an export of any size is never held whole. Its text is `JSON.stringify` of the document
 * `exportAccount` gives (which is this text, parsed). The records of a damaged database that cannot be read are
 * left out and named in `unreadable` (each table's in turn, then the events whose payment is gone).
 */
export function* exportText(
  account: Account,
  format: string,
  version: number,
  unreadable: string[],
): Generator<string> {
  const gone: string[] = [];
  yield `{"format":${JSON.stringify(format)},"version":${version},"exportedAt":${JSON.stringify(account.now())},"account":{`;
  let first = true;
  const member = (name: string, text: string) =>
    `${first ? ((first = false), '') : ','}${JSON.stringify(name)}:${text}`;
  // Forwarding and faults (of callbacks and of the API) are this sandbox's settings for the session, not part of the incident.
  for (const [name, value] of Object.entries(account.head)) {
    if (!SETTINGS.has(name) && value !== undefined) yield member(name, JSON.stringify(value));
  }
  for (const table of TABLES) {
    yield member(table, '{');
    first = true;
    if (table === 'events') yield* eventsText(account, unreadable, gone, member);
    else if (table === 'deliveries') yield* deliveriesText(account, unreadable, member);
    else yield* recordsText(account, table, unreadable, member);
    first = false;
    yield '}';
  }
  yield '}}';
  unreadable.push(...gone);
}

const SETTINGS = new Set(['clockOffsetMs', 'forwarding', 'faults', 'apiFaults', 'heldSince']);

type Member = (name: string, text: string) => string;

function* recordsText(account: Account, table: TableName, unreadable: string[], member: Member): Generator<string> {
  for (const [id, record] of account.rows(table, {}, unreadable)) {
    // A plain object's `__proto__` is its prototype, not a member: a read never listed it (Idempotency-Keys have no prototype).
    if (id !== '__proto__' || table === 'idempotency') yield member(id, JSON.stringify(record));
  }
}

/**
 * Every event with its body as sent; one whose body is its payment's, and that payment is not there (left out of a
 * damaged database's read, or the event's own link to it damaged), is left out too, and named (`gone`).
 */
function* eventsText(account: Account, unreadable: string[], gone: string[], member: Member): Generator<string> {
  const payment = (id: string) => account.rows('vaPayments', { id }, []).next().value?.[1] as VaPayment | undefined;
  for (const [key, event] of account.rows('events', {}, unreadable)) {
    if (key === '__proto__') continue;
    const of = event.body ? undefined : payment(event.vaPaymentId!);
    if (!event.body && !of) {
      gone.push(`events ${event.id}`);
      continue;
    }
    const { id, eventType, vaPaymentId, clientId, body, url, droppedReason, createdAt } = sent(event, () => of);
    yield member(id, JSON.stringify({ id, eventType, vaPaymentId, clientId, body, url, droppedReason, createdAt }));
  }
}

/**
 * Every delivery, dropped events' first ones included, in the order they were made (a dropped one before a stored one
 * made at the same instant): both are read in the order made, which is that of `createdAt`, and merged.
 */
function* deliveriesText(account: Account, unreadable: string[], member: Member): Generator<string> {
  const dropped = droppedDeliveries(account);
  const stored = account.rows('deliveries', {}, unreadable);
  let a = dropped.next();
  let b = stored.next();
  while (!a.done || !b.done) {
    const takeDropped = !a.done && (b.done || !(b.value[1].createdAt < a.value.createdAt));
    const delivery: Delivery = takeDropped ? a.value! : b.value![1];
    if (takeDropped) a = dropped.next();
    else b = stored.next();
    if (delivery.id !== '__proto__') yield member(delivery.id, JSON.stringify(delivery));
  }
}

/** The first deliveries of dropped events, never stored (`droppedDelivery`), unless an earlier release stored one. */
function* droppedDeliveries(account: Account): Generator<Delivery> {
  for (const [, event] of account.rows('events', { dropped: {} }, [])) {
    if (!storedFirst(account, event)) yield droppedDelivery(event);
  }
}

/** Whether an earlier release stored a dropped event's first delivery (see `normalizeAccount`). */
function storedFirst(account: Account, event: SandboxEvent): boolean {
  for (const [, delivery] of account.rows('deliveries', { event_id: event.id }, []))
    if (delivery.redeliveryOf === null) return true;
  return false;
}
