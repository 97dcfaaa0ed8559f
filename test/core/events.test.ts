import { describe, expect, it } from 'vitest';
import { CLIENT, PAYMENT } from '../helpers.js';
import { accountModules } from './context.js';

type Modules = ReturnType<typeof accountModules>;

/** Every event as `GET /sandbox/v1/events` lists it, oldest first. */
const allEvents = ({ events }: Modules) => events.listEvents({ limit: '100' }).data.reverse();

/** Where the log attempts each event's deliveries, every attempt failing, until it has none left to make. */
function attempted(m: Modules): Map<string, string> {
  const to = new Map<string, string>();
  for (let made = true; made || m.log.nextRetryAt(new Set()) !== null; m.clock.advance(30_000)) {
    made = false;
    for (const { delivery, url } of m.log.dueDeliveries(new Set())) {
      made = true;
      to.set(delivery.eventId, url);
      m.log.recordAttempt(delivery, {
        startedAt: m.ctx.now(),
        durationMs: 1,
        responseStatus: 500,
        responseBody: '',
        error: 'http_status',
        errorMessage: 'HTTP 500',
      });
    }
  }
  return to;
}

/**
 * The seven VA events for payments configured with `fields`: one paid in two transfers (underpaid, succeeded), one
 * overpaid, one expired (failed), one cancelled; each event type with where it went, or why it was dropped.
 */
function routes(fields: Record<string, unknown>): Record<string, string[]> {
  const m = accountModules();
  const create = (more: Record<string, unknown>) => m.payments.createVaPayment({ ...PAYMENT, ...fields, ...more });
  const paid = create({ amount: 100 });
  for (const total of [60, 40]) m.transfers.createTransfer({ to: paid.cvu, total });
  m.transfers.createTransfer({ to: create({ amount: 10 }).cvu, total: 20 });
  create({ ttlSeconds: 60 });
  m.payments.cancelVaPayment(create({}).id);
  m.clock.advance(60_000);
  m.due.runDue();
  const sent = attempted(m);
  const routed: Record<string, Set<string>> = {};
  for (const event of allEvents(m)) {
    // What the event says, and where its attempts went: a dropped event is never attempted.
    const said = event.url ?? `dropped: ${event.droppedReason}`;
    expect(sent.get(event.id) ?? `dropped: ${event.droppedReason}`).toBe(said);
    (routed[event.eventType] ??= new Set()).add(said);
  }
  return Object.fromEntries(Object.entries(routed).map(([type, to]) => [type, [...to]]));
}

const CALLBACK = 'http://127.0.0.1:9/callback';
const SUCCESS = 'http://127.0.0.1:9/success';
const FAILURE = 'http://127.0.0.1:9/failure';

describe('routing (spec 6.1)', () => {
  it('callbackUrl: all seven events go to it', () => {
    const to = [CALLBACK];
    expect(routes({ callbackUrl: CALLBACK })).toEqual({
      created: to,
      cash_in_received: to,
      underpaid: to,
      succeeded: to,
      overpaid: to,
      failed: to,
      cancelled: to,
    });
  });

  it('successUrl + failureUrl: succeeded to success; failed, cancelled, and underpaid/overpaid of a payment naming no client to failure; created and cash_in_received dropped', () => {
    const dropped = (type: string) => [`dropped: ${type} is not delivered when successUrl/failureUrl are configured`];
    const common = {
      created: dropped('created'),
      cash_in_received: dropped('cash_in_received'),
      succeeded: [SUCCESS],
      failed: [FAILURE],
      cancelled: [FAILURE],
    };
    const urls = { successUrl: SUCCESS, failureUrl: FAILURE };
    expect(routes(urls)).toEqual({ ...common, underpaid: [FAILURE], overpaid: [FAILURE] });
    for (const namesClient of [{ clientTaxId: '20-1' }, { clientId: '0f4e2a1c-1111-4222-8333-444455556666' }]) {
      expect(routes({ ...urls, ...namesClient }), JSON.stringify(namesClient)).toEqual({
        ...common,
        underpaid: [SUCCESS],
        overpaid: [SUCCESS],
      });
    }
  });

  it('no URL at all: every event is dropped and says why, and none is ever attempted', () => {
    const why = ['dropped: no callbackUrl or successUrl/failureUrl configured'];
    expect(routes({})).toEqual({
      created: why,
      cash_in_received: why,
      underpaid: why,
      succeeded: why,
      overpaid: why,
      failed: why,
      cancelled: why,
    });
  });

  it('client.cashin goes to the client’s cashinCallbackUrl as it is when the transfer comes; without one it is dropped', () => {
    const m = accountModules();
    const client = m.ledger.createClient({ ...CLIENT, name: 'Ana', taxId: '20-1', cashinCallbackUrl: CALLBACK });
    m.transfers.createTransfer({ to: client.cvu!, total: 1 });
    m.ledger.updateClient(client.id, { cashinCallbackUrl: null });
    m.transfers.createTransfer({ to: client.cvu!, total: 2 });
    const sent = attempted(m);
    const [routed, dropped] = allEvents(m);
    expect([routed!.url, sent.get(routed!.id)]).toEqual([CALLBACK, CALLBACK]);
    expect([dropped!.url, dropped!.droppedReason, sent.has(dropped!.id)]).toEqual([
      null,
      'the client has no cashinCallbackUrl',
      false,
    ]);
  });
});

describe('bodies', () => {
  it('created, cancelled and failed carry the VA payment object: created and cancelled as their endpoint answered', () => {
    const m = accountModules();
    const created = m.payments.createVaPayment({ ...PAYMENT, amount: 5, callbackUrl: CALLBACK });
    m.clock.advance(1000);
    const cancelled = m.payments.cancelVaPayment(created.id);
    const expiring = m.payments.createVaPayment({ ...PAYMENT, amount: 5, ttlSeconds: 1, callbackUrl: CALLBACK });
    m.clock.advance(1000);
    m.due.runDue();
    const [onCreate, onCancel, , onExpiry] = allEvents(m);
    expect(created.callbackDelivery).toMatchObject({ events: 1, pending: 1, lastEventType: 'created' }); // it counts its own event
    expect(onCreate!.body).toEqual({
      eventId: onCreate!.id,
      vaPaymentId: created.id,
      eventType: 'created',
      status: 'waiting',
      payload: created,
      createdAt: created.createdAt,
    });
    expect(onCancel!.body).toEqual({
      eventId: onCancel!.id,
      vaPaymentId: created.id,
      eventType: 'cancelled',
      status: 'cancelled',
      payload: cancelled,
      createdAt: cancelled.cancelledAt,
    });
    expect(onExpiry!.body).toMatchObject({
      eventType: 'failed',
      status: 'expired',
      payload: { ...m.payments.getVaPayment(expiring.id), callbackDelivery: expect.anything() },
    });
  });

  it('a transfer’s events carry its amount fields, with receivedAmount and remainingAmount the payment’s after it', () => {
    const m = accountModules();
    const payment = m.payments.createVaPayment({ ...PAYMENT, amount: 100, callbackUrl: CALLBACK });
    const first = m.transfers.createTransfer({ to: payment.cvu, total: 60, taxes: 0.5 });
    m.clock.advance(1000);
    const second = m.transfers.createTransfer({ to: payment.cvu, total: 50.25 });
    const bodies = allEvents(m)
      .slice(1)
      .map((event) => event.body);
    const payload = (transfer: typeof first, receivedAmount: number, remainingAmount: number) => ({
      vaPaymentId: payment.id,
      operationId: transfer.operationId,
      incomingAmount: transfer.netAmount,
      total: transfer.total,
      totalWithoutTaxes: transfer.netAmount,
      taxes: transfer.taxes,
      receivedAmount,
      receivedAt: transfer.createdAt,
      remainingAmount,
    });
    expect(bodies.map((body) => [body.eventType, body.status, body.payload])).toEqual([
      ['cash_in_received', 'underpaid', payload(first, 59.5, 40)],
      ['underpaid', 'underpaid', payload(first, 59.5, 40)],
      ['cash_in_received', 'overpaid', payload(second, 109.75, 0)],
      ['overpaid', 'overpaid', payload(second, 109.75, 0)],
    ]);
  });

  it('client.cashin is spec 6.2 field for field', () => {
    const m = accountModules();
    const client = m.ledger.createClient({
      ...CLIENT,
      name: 'Ana',
      taxId: '20-12345678-3',
      cashinCallbackUrl: CALLBACK,
    });
    const transfer = m.transfers.createTransfer({ to: client.alias!, total: 1000, taxes: 12.34 });
    const [event] = allEvents(m);
    expect(event!.body).toEqual({
      eventId: event!.id,
      clientId: client.id,
      eventType: 'client.cashin',
      taxId: '20-12345678-3',
      amount: 987.66,
      total: 1000,
      totalWithoutTaxes: 987.66,
      taxes: 12.34,
      currency: 'ARS',
      cvu: client.cvu,
      alias: client.alias,
      operationId: transfer.operationId,
      createdAt: transfer.createdAt,
    });
  });
});

describe('the order of a payment’s events', () => {
  it('are listed by payment or client newest first, in the order raised, each at the time it happened', () => {
    const m = accountModules();
    const payment = m.payments.createVaPayment({ ...PAYMENT, amount: 10, callbackUrl: CALLBACK });
    const client = m.ledger.createClient({ ...CLIENT, name: 'Ana', taxId: '20-1', cashinCallbackUrl: CALLBACK });
    const transfers = [4, 6].map((total) => {
      m.clock.advance(1000);
      m.transfers.createTransfer({ to: client.cvu!, total });
      return m.transfers.createTransfer({ to: payment.cvu, total });
    });
    const ofPayment = m.events.listEvents({ vaPaymentId: payment.id.toUpperCase() }).data.reverse();
    expect(ofPayment.map((e) => e.eventType)).toEqual([
      'created',
      'cash_in_received',
      'underpaid',
      'cash_in_received',
      'succeeded',
    ]);
    expect(ofPayment.slice(1).map((e) => e.id)).toEqual(transfers.flatMap((t) => t.eventIds));
    expect(ofPayment.map((e) => e.createdAt)).toEqual([
      payment.createdAt,
      ...transfers.flatMap((t) => [t.createdAt, t.createdAt]),
    ]);
    expect(m.events.listEvents({ clientId: client.id, limit: '1' })).toMatchObject({
      data: [{ eventType: 'client.cashin', body: { total: 6 } }],
      pagination: { total: 2 },
    });
    expect(m.payments.getVaPayment(payment.id).callbackDelivery).toMatchObject({
      events: 5,
      pending: 5,
      lastEventType: 'succeeded',
    });
  });

  it('an expiry met by a clock move is raised at its due instant, not when the move ends', () => {
    const m = accountModules();
    const payment = m.payments.createVaPayment({ ...PAYMENT, ttlSeconds: 60, callbackUrl: CALLBACK });
    const move = m.due.move('advance', { seconds: 3600 });
    for (let at = m.due.nextInstant(move.until(), null); at !== null; at = m.due.nextInstant(move.until(), null))
      m.due.standAt(at);
    move.finish();
    expect(allEvents(m).map((e) => [e.eventType, e.createdAt])).toEqual([
      ['created', payment.createdAt],
      ['failed', payment.expiresAt],
    ]);
  });
});
