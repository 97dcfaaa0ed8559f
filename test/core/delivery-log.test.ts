import { describe, expect, it } from 'vitest';
import type { Attempt } from '../../src/core/index.js';
import { CLIENT, PAYMENT } from '../helpers.js';
import { accountModules, codeOf } from './context.js';

type Modules = ReturnType<typeof accountModules>;

const CALLBACK = 'http://127.0.0.1:9/callback';

/** What the log gives to attempt now (nothing in flight): each delivery with the URL and headers of its attempt. */
const due = (m: Modules, inFlight: string[] = []) =>
  [...m.log.dueDeliveries(new Set(inFlight))].map(({ delivery, url, headers }) => ({
    id: delivery.id,
    eventId: delivery.eventId,
    eventType: delivery.eventType,
    url,
    headers,
  }));

/** Records an attempt as the deliverer would: answered with `status` (2xx is success), at the account's clock. */
function answer(m: Modules, deliveryId: string, status: number, more: Partial<Attempt> = {}) {
  const failed = status < 200 || status >= 300;
  const attempt = {
    startedAt: m.ctx.now(),
    durationMs: 3,
    responseStatus: status,
    responseBody: 'ok',
    error: failed ? ('http_status' as const) : null,
    errorMessage: failed ? `HTTP ${status}` : null,
  };
  return m.log.recordAttempt(m.ctx.get('deliveries', deliveryId)!, { ...attempt, ...more });
}

describe('the retry schedule: 5 s, then 25 s of sandbox clock, 3 attempts at most', () => {
  it('pending → retrying → failed, each retry due at its instant and not a millisecond before', () => {
    const m = accountModules();
    m.payments.createVaPayment({ ...PAYMENT, callbackUrl: CALLBACK });
    const { id } = due(m)[0]!;
    const start = m.ctx.nowMs();
    expect(answer(m, id, 500)).toMatchObject({
      status: 'retrying',
      nextAttemptAt: new Date(start + 5000).toISOString(),
    });
    expect([due(m), m.log.nextRetryAt(new Set())]).toEqual([[], start + 5000]);
    m.clock.advance(4999);
    expect(due(m)).toEqual([]);
    m.clock.advance(1);
    expect(due(m).map((d) => d.id)).toEqual([id]);
    expect(answer(m, id, 503).nextAttemptAt).toBe(new Date(start + 30_000).toISOString());
    m.clock.advance(24_999);
    expect(due(m)).toEqual([]);
    m.clock.advance(1);
    expect(due(m).map((d) => d.id)).toEqual([id]);
    expect(answer(m, id, 500)).toMatchObject({ status: 'failed', nextAttemptAt: null });
    m.clock.advance(3600_000);
    expect([due(m), m.log.nextRetryAt(new Set())]).toEqual([[], null]);
    expect(m.log.getDelivery(id)).toMatchObject({
      status: 'failed',
      attempts: [{ n: 1 }, { n: 2, responseStatus: 503 }, { n: 3 }],
      lastError: 'http_status',
    });
  });

  it('a 2xx at any attempt delivers it; a redirect or a network error is a failure like any other', () => {
    const m = accountModules();
    m.payments.createVaPayment({ ...PAYMENT, callbackUrl: CALLBACK });
    const { id } = due(m)[0]!;
    answer(m, id, 302, { error: 'redirect', errorMessage: 'redirect to /elsewhere' });
    m.clock.advance(5000);
    answer(m, id, 0, { responseStatus: null, responseBody: null, error: 'connection_refused' });
    m.clock.advance(25_000);
    expect(answer(m, id, 204)).toMatchObject({ status: 'delivered', nextAttemptAt: null });
    expect(m.log.listDeliveries({ status: 'delivered' }).data).toMatchObject([
      { id, attempts: 3, lastResponseStatus: 204, lastError: null },
    ]);
  });
});

describe('first attempts in the order events were raised, per VA payment and per client', () => {
  it('an event’s first attempt waits for the previous event’s of the same payment or client to finish; others do not wait', () => {
    const m = accountModules();
    const a = m.payments.createVaPayment({ ...PAYMENT, callbackUrl: CALLBACK });
    const client = m.ledger.createClient({ ...CLIENT, name: 'Ana', taxId: '20-1', cashinCallbackUrl: CALLBACK });
    m.payments.cancelVaPayment(a.id);
    for (const total of [1, 2]) m.transfers.createTransfer({ to: client.cvu!, total });
    const b = m.payments.createVaPayment({ ...PAYMENT, callbackUrl: CALLBACK });
    const [aCreated, aCancelled, cash1, cash2, bCreated] = m.log.listDeliveries({}).data.reverse();
    expect(due(m).map((d) => d.id)).toEqual([aCreated!.id, cash1!.id, bCreated!.id]);
    expect(due(m, [aCreated!.id, cash1!.id]).map((d) => d.id)).toEqual([bCreated!.id]); // in flight: not given again, and still holding
    answer(m, aCreated!.id, 500); // a first attempt that failed has finished: its retry does not hold the next
    answer(m, cash1!.id, 200);
    expect(due(m).map((d) => d.id)).toEqual([aCancelled!.id, cash2!.id, bCreated!.id]);
    expect(b.callbackDelivery.pending).toBe(1);
  });

  it('an event with nowhere to go holds nothing back: it is never attempted, and says why', () => {
    const m = accountModules();
    const payment = m.payments.createVaPayment({
      ...PAYMENT,
      successUrl: 'http://127.0.0.1:9/ok',
      failureUrl: 'http://127.0.0.1:9/ko',
    });
    m.payments.cancelVaPayment(payment.id);
    expect(due(m).map((d) => [d.eventType, d.url])).toEqual([['cancelled', 'http://127.0.0.1:9/ko']]);
    const created = m.events.listEvents({ vaPaymentId: payment.id }).data.find((e) => e.eventType === 'created')!;
    expect(created.droppedReason).toBe('created is not delivered when successUrl/failureUrl are configured');
  });
});

describe('what an attempt sends', () => {
  it('VA events as Service-VA-Callback/1.0, client cash-ins as Service-Client-Callback/1.0, with the same event id every attempt', () => {
    const m = accountModules();
    m.payments.createVaPayment({ ...PAYMENT, callbackUrl: CALLBACK });
    const client = m.ledger.createClient({ ...CLIENT, name: 'Ana', taxId: '20-1', cashinCallbackUrl: CALLBACK });
    m.transfers.createTransfer({ to: client.cvu!, total: 1 });
    const [va, cash] = due(m);
    const headers = (agent: string, event: { eventId: string; eventType: string }) => ({
      'Content-Type': 'application/json',
      'User-Agent': agent,
      'X-Service-Event-Id': event.eventId,
      'X-Service-Event-Type': event.eventType,
    });
    expect([va!.headers, cash!.headers]).toEqual([
      headers('Service-VA-Callback/1.0', va!),
      headers('Service-Client-Callback/1.0', cash!),
    ]);
    answer(m, va!.id, 500);
    m.clock.advance(5000);
    expect(due(m).find((d) => d.id === va!.id)!.headers).toEqual(va!.headers);
    expect(m.log.getDelivery(va!.id).request).toMatchObject({
      method: 'POST',
      url: CALLBACK,
      headers: va!.headers,
      body: { eventId: va!.eventId, eventType: 'created' },
    });
  });
});

describe('forwarding and faults, recorded on the attempts', () => {
  it('while forwarding is set every attempt goes there; the log keeps the configured url and where each attempt went', () => {
    const m = accountModules();
    m.payments.createVaPayment({ ...PAYMENT, callbackUrl: CALLBACK });
    m.clock.advance(1000);
    expect(m.log.setForwarding({ url: 'http://127.0.0.1:7/laptop' })).toEqual({
      url: 'http://127.0.0.1:7/laptop',
      events: null,
      since: m.ctx.now(),
    });
    const [first] = due(m);
    expect(first!.url).toBe('http://127.0.0.1:7/laptop');
    answer(m, first!.id, 500, { forwardedTo: first!.url });
    m.log.deleteForwarding();
    m.clock.advance(5000);
    const [retry] = due(m);
    expect(retry!.url).toBe(CALLBACK);
    answer(m, retry!.id, 200);
    const delivery = m.log.getDelivery(first!.id);
    expect([delivery.url, delivery.forwardedTo, m.log.forwarding()]).toEqual([
      CALLBACK,
      null,
      { url: null, events: null, since: null },
    ]);
    expect(delivery.attempts.map((a) => [a.forwardedTo, a.request.url])).toEqual([
      ['http://127.0.0.1:7/laptop', 'http://127.0.0.1:7/laptop'],
      [null, CALLBACK],
    ]);
  });

  it('faults are set whole (a field left out is off); a duplicate send is logged as a fault attempt and changes nothing else', () => {
    const m = accountModules();
    expect(m.log.faults()).toEqual({ duplicate: false, delayMs: 0, shuffle: false });
    m.log.setFaults({ shuffle: true, delayMs: 20 });
    expect(m.log.setFaults({ duplicate: true })).toEqual({ duplicate: true, delayMs: 0, shuffle: false });
    m.payments.createVaPayment({ ...PAYMENT, callbackUrl: CALLBACK });
    const { id } = due(m)[0]!;
    const delivered = answer(m, id, 200);
    const duplicated = answer(m, id, 500, { fault: 'duplicate' });
    expect({ ...duplicated, attempts: undefined, updatedAt: undefined }).toEqual({
      ...delivered,
      attempts: undefined,
      updatedAt: undefined,
    });
    expect(m.log.getDelivery(id).attempts.map((a) => [a.n, a.fault])).toEqual([
      [1, null],
      [2, 'duplicate'],
    ]);
  });
});

describe('redeliver', () => {
  it('makes a new delivery of the same event (same eventId), to its URL or for this one to {url}, due at once; the original stays', () => {
    const m = accountModules();
    m.payments.createVaPayment({ ...PAYMENT, callbackUrl: CALLBACK });
    const { id, eventId } = due(m)[0]!;
    answer(m, id, 200);
    m.clock.advance(1000);
    const again = m.log.redeliver(id, undefined);
    expect(again).toMatchObject({
      eventId,
      redeliveryOf: id,
      url: CALLBACK,
      status: 'pending',
      attempts: [],
      createdAt: m.ctx.now(),
    });
    expect(due(m).map((d) => [d.id, d.url])).toEqual([[again.id, CALLBACK]]);
    answer(m, again.id, 200);
    const elsewhere = m.log.redeliver(id, { url: 'http://127.0.0.1:8/other' });
    m.log.setForwarding({ url: 'http://127.0.0.1:7/laptop' }); // a redelivery's own URL goes before forwarding
    expect(due(m).map((d) => [d.id, d.url, d.headers['X-Service-Event-Id']])).toEqual([
      [elsewhere.id, 'http://127.0.0.1:8/other', eventId],
    ]);
    expect(m.log.getDelivery(id)).toMatchObject({ status: 'delivered', attempts: [{ n: 1 }] });
    expect(m.log.listDeliveries({ eventType: 'created' }).pagination.total).toBe(3);
    expect(codeOf(() => m.log.redeliver('00000000-0000-4000-8000-000000000000', {}))).toBe('NOT_FOUND');
  });
});

describe('held deliveries (an import’s): never attempted until released', () => {
  it('held is never due at any clock; a release makes it a first attempt with the whole retry schedule again', () => {
    const m = accountModules();
    const payment = m.payments.createVaPayment({ ...PAYMENT, callbackUrl: CALLBACK });
    const { id } = due(m)[0]!;
    answer(m, id, 500);
    m.clock.advance(5000);
    answer(m, id, 500);
    m.log.holdOpen();
    expect(m.log.getDelivery(id)).toMatchObject({
      status: 'held',
      nextAttemptAt: null,
      attempts: [{ n: 1 }, { n: 2 }],
    });
    expect([due(m), m.log.nextRetryAt(new Set()), m.log.waitingFirst([])]).toEqual([[], null, 0]);
    m.clock.advance(3600_000);
    expect(due(m)).toEqual([]);
    expect(m.payments.getVaPayment(payment.id).callbackDelivery).toMatchObject({ events: 1, held: 1, retrying: 0 });
    expect(m.log.listDeliveries({ status: 'held' }).data.map((d) => d.id)).toEqual([id]);

    expect(m.log.release(id, {})).toMatchObject({ status: 'pending', reason: null });
    expect(due(m).map((d) => d.id)).toEqual([id]);
    // The two attempts the file brought are not counted: three more, on the 5 s and 25 s schedule.
    expect(answer(m, id, 500)).toMatchObject({ status: 'retrying' });
    m.clock.advance(5000);
    expect(answer(m, id, 500)).toMatchObject({ status: 'retrying' });
    m.clock.advance(25_000);
    expect(answer(m, id, 500)).toMatchObject({
      status: 'failed',
      attempts: [{ n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }, { n: 5 }],
    });
    expect(codeOf(() => m.log.release(id, {}))).toBe('INVALID_STATE');
  });

  it('release to {"url"} sends that one there; without one, to the forwarding URL when set; releaseAll takes them in the order made', () => {
    const m = accountModules();
    const a = m.payments.createVaPayment({ ...PAYMENT, callbackUrl: CALLBACK });
    const b = m.payments.createVaPayment({ ...PAYMENT, callbackUrl: CALLBACK });
    m.payments.cancelVaPayment(a.id);
    m.log.holdOpen();
    const held = m.log
      .listDeliveries({ status: 'held' })
      .data.map((d) => d.id)
      .reverse();
    expect(held).toHaveLength(3);
    m.log.release(held[1]!, { url: 'http://127.0.0.1:9/elsewhere' });
    m.clock.advance(1000);
    m.log.setForwarding({ url: 'http://127.0.0.1:9/laptop' });
    expect(m.log.releaseAll()).toEqual({ released: 2 });
    expect(m.log.releaseAll()).toEqual({ released: 0 });
    // In the order released: b's created first; a's cancelled waits for a's created (the order rule).
    expect(due(m).map((d) => [d.eventId, d.url])).toEqual([
      [m.log.getDelivery(held[1]!).eventId, 'http://127.0.0.1:9/elsewhere'],
      [m.log.getDelivery(held[0]!).eventId, 'http://127.0.0.1:9/laptop'],
    ]);
    expect(m.payments.getVaPayment(b.id).callbackDelivery).toMatchObject({ pending: 1, held: 0 });
  });
});
