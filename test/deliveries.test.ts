import { describe, expect, it, vi } from 'vitest';
import { createApp } from '../src/sandbox/http/app.js';
import { startServer } from '../src/sandbox/http/server.js';
import { createRuntime } from '../src/sandbox/runtime/runtime.js';
import { memoryStore } from '../src/sandbox/store/database.js';
import {
  type Api,
  api,
  eventually,
  freePort,
  PAYMENT,
  type Received,
  useReceiver,
  useServer,
  useStream,
} from './helpers.js';

const server = await useServer();
let keyN = 0;
/** Each test gets its own account (a fresh API key), so tests never see each other's state. */
const account = () => api(server.url, `sk_deliveries_${++keyN}`);

/** One receiver for the tests that only need 200s; each test tells its requests apart by VA payment. */
const receiver = await useReceiver();

const create = (client: Api, body: Record<string, unknown>) =>
  client.data('POST', '/api/v1/va-payments', { ...PAYMENT, ...body });
const transfer = (client: Api, to: string, total: number, taxes = 0) =>
  client.data('POST', '/sandbox/v1/transfers', { to, total, taxes });
const advance = (client: Api, seconds: number) => client.data('POST', '/sandbox/v1/clock/advance', { seconds });
const deliveries = async (client: Api, query = '') => (await client.list(`/sandbox/v1/deliveries${query}`)).data;
const delivery = (client: Api, id: string) => client.data('GET', `/sandbox/v1/deliveries/${id}`);
const of = (paymentId: string) => (r: Received) => r.body?.vaPaymentId === paymentId;

/** The newest delivery of an event type in full, once `check` holds for its list entry. */
async function settled(client: Api, eventType: string, check: (d: any) => boolean) {
  const found = await eventually(
    async () => {
      const newest = (await deliveries(client, `?eventType=${eventType}`))[0];
      return newest && check(newest) ? newest : null;
    },
    10_000,
    `the ${eventType} delivery`,
  );
  return delivery(client, found.id);
}

describe('VA callbacks: bodies and headers', () => {
  it('sends each of the seven VA events with exactly the fields of spec 6.1 and the callback headers', async () => {
    const client = account();
    const callbackUrl = `${receiver.url}/hooks/va`;
    const partial = await create(client, { amount: 100, callbackUrl });
    const first = await transfer(client, partial.cvu, 40);
    const second = await transfer(client, partial.cvu, 80, 1.5);
    const exact = await create(client, { amount: 50, callbackUrl });
    await transfer(client, exact.cvu, 50);
    const cancelled = await create(client, { amount: 70, callbackUrl });
    const cancelResponse = await client.data('POST', `/api/v1/va-payments/${cancelled.id}/cancel`);
    const expiring = await create(client, { amount: 90, ttlSeconds: 60, callbackUrl });
    await advance(client, 60);

    const got = {
      partial: await receiver.waitFor(5, of(partial.id)),
      exact: await receiver.waitFor(3, of(exact.id)),
      cancelled: await receiver.waitFor(2, of(cancelled.id)),
      expiring: await receiver.waitFor(2, of(expiring.id)),
    };
    const all = Object.values(got).flat();
    expect(new Set(all.map((r) => r.body.eventType))).toEqual(
      new Set(['created', 'cash_in_received', 'succeeded', 'underpaid', 'overpaid', 'failed', 'cancelled']),
    );
    const events = (await client.list('/sandbox/v1/events?limit=100')).data;
    for (const request of all) {
      expect(request.method).toBe('POST');
      expect(request.url).toBe('/hooks/va');
      expect(Object.keys(request.body).sort()).toEqual([
        'createdAt',
        'eventId',
        'eventType',
        'payload',
        'status',
        'vaPaymentId',
      ]);
      expect(request.body.eventId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(request.body.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(request.headers['content-type']).toBe('application/json');
      expect(request.headers['user-agent']).toBe('Service-VA-Callback/1.0');
      expect(request.headers['x-service-event-id']).toBe(request.body.eventId);
      expect(request.headers['x-service-event-type']).toBe(request.body.eventType);
      // The body sent is the body the log keeps for the event.
      expect(events.find((e: any) => e.id === request.body.eventId).body).toEqual(request.body);
    }

    const pick = (list: Received[], eventType: string, n = 0) =>
      list.filter((r) => r.body.eventType === eventType)[n]!.body;
    expect(got.partial.map((r) => [r.body.eventType, r.body.status])).toEqual([
      ['created', 'waiting'],
      ['cash_in_received', 'underpaid'],
      ['underpaid', 'underpaid'],
      ['cash_in_received', 'overpaid'],
      ['overpaid', 'overpaid'],
    ]);
    const amounts = {
      vaPaymentId: partial.id,
      operationId: first.operationId,
      incomingAmount: 40,
      total: 40,
      totalWithoutTaxes: 40,
      taxes: 0,
      receivedAmount: 40,
      remainingAmount: 60,
    };
    expect(pick(got.partial, 'cash_in_received').payload).toMatchObject(amounts);
    expect(pick(got.partial, 'underpaid').payload).toMatchObject(amounts);
    const overpaid = pick(got.partial, 'overpaid').payload;
    expect(overpaid).toMatchObject({
      operationId: second.operationId,
      total: 80,
      taxes: 1.5,
      incomingAmount: 78.5,
      totalWithoutTaxes: 78.5,
      receivedAmount: 118.5,
      remainingAmount: 0,
    });
    expect(overpaid.total - overpaid.taxes).toBe(overpaid.incomingAmount);
    expect(pick(got.exact, 'succeeded')).toMatchObject({
      status: 'completed',
      payload: { total: 50, receivedAmount: 50, remainingAmount: 0 },
    });
    // `created` and `cancelled` carry the very body the endpoint answered.
    expect(pick(got.partial, 'created').payload).toEqual(partial);
    expect(pick(got.cancelled, 'cancelled')).toMatchObject({ status: 'cancelled', payload: cancelResponse });
    expect(pick(got.cancelled, 'cancelled').payload).toEqual(cancelResponse);
    expect(pick(got.expiring, 'failed')).toMatchObject({
      status: 'expired',
      payload: { id: expiring.id, status: 'expired' },
    });
  });

  it('keeps the request as sent and the response as received in GET /sandbox/v1/deliveries/{id}', async () => {
    const client = account();
    const payment = await create(client, { callbackUrl: `${receiver.url}/log` });
    const [request] = await receiver.waitFor(1, of(payment.id));
    const shown = await settled(client, 'created', (d) => d.status === 'delivered');
    expect(shown).toMatchObject({
      eventId: request!.body.eventId,
      eventType: 'created',
      url: `${receiver.url}/log`,
      status: 'delivered',
      attempts: [expect.any(Object)],
    });
    const [attempt] = shown.attempts;
    expect(attempt).toMatchObject({
      n: 1,
      responseStatus: 200,
      responseBody: 'ok',
      error: null,
      startedAt: expect.stringMatching(/Z$/),
    });
    expect(attempt.durationMs).toBeGreaterThanOrEqual(0);
    expect(attempt.request.method).toBe('POST');
    expect(attempt.request.url).toBe(`${receiver.url}/log`);
    expect(attempt.request.body).toEqual(request!.body);
    for (const [name, value] of Object.entries(attempt.request.headers as Record<string, string>)) {
      expect(request!.headers[name.toLowerCase()]).toBe(value);
    }
    expect(Object.keys(attempt.request.headers).sort()).toEqual([
      'Content-Type',
      'User-Agent',
      'X-Service-Event-Id',
      'X-Service-Event-Type',
    ]);
  });
});

describe('VA callbacks: routing (spec 6.1)', () => {
  /** Drives one payment to each outcome; answers the path each event arrived at. */
  async function outcomes(client: Api, extra: Record<string, unknown>) {
    const urls = { successUrl: `${receiver.url}/ok`, failureUrl: `${receiver.url}/ko`, ...extra };
    const [partial, exact, cancelled, expiring] = await Promise.all([
      create(client, { amount: 100, ...urls }),
      create(client, { amount: 50, ...urls }),
      create(client, { amount: 70, ...urls }),
      create(client, { amount: 90, ttlSeconds: 60, ...urls }),
    ]);
    await transfer(client, partial.cvu, 40);
    await transfer(client, partial.cvu, 80);
    await transfer(client, exact.cvu, 50);
    await client.data('POST', `/api/v1/va-payments/${cancelled.id}/cancel`);
    await advance(client, 60);
    const ids = new Set([partial.id, exact.id, cancelled.id, expiring.id]);
    const got = await receiver.waitFor(5, (r) => ids.has(r.body?.vaPaymentId));
    return Object.fromEntries(got.map((r) => [r.body.eventType, r.url]));
  }

  it('without a named client: succeeded to successUrl; underpaid, overpaid, failed and cancelled to failureUrl', async () => {
    expect(await outcomes(account(), {})).toEqual({
      underpaid: '/ko',
      overpaid: '/ko',
      succeeded: '/ok',
      cancelled: '/ko',
      failed: '/ko',
    });
  });

  it('with a clientTaxId: underpaid and overpaid go to successUrl too', async () => {
    expect(await outcomes(account(), { clientTaxId: '20-12345678-3' })).toEqual({
      underpaid: '/ok',
      overpaid: '/ok',
      succeeded: '/ok',
      cancelled: '/ko',
      failed: '/ko',
    });
  });

  it('with a clientId: underpaid and overpaid go to successUrl too', async () => {
    expect(await outcomes(account(), { clientId: '3f1c2b1e-1a2b-4c3d-8e9f-0a1b2c3d4e5f' })).toEqual({
      underpaid: '/ok',
      overpaid: '/ok',
      succeeded: '/ok',
      cancelled: '/ko',
      failed: '/ko',
    });
  });

  it('drops created and cash_in_received under successUrl/failureUrl and lists them as dropped, never sent', async () => {
    const client = account();
    const payment = await create(client, {
      amount: 50,
      successUrl: `${receiver.url}/ok`,
      failureUrl: `${receiver.url}/ko`,
    });
    await transfer(client, payment.cvu, 50);
    const got = await receiver.waitFor(1, of(payment.id));
    // First attempts leave in the order events were raised: a sent `created` would have arrived before `succeeded`.
    expect(got.map((r) => r.body.eventType)).toEqual(['succeeded']);

    const dropped = await deliveries(client, '?status=dropped');
    expect(dropped.map((d: any) => d.eventType).sort()).toEqual(['cash_in_received', 'created']);
    for (const d of dropped) {
      expect(d).toMatchObject({
        status: 'dropped',
        url: null,
        attempts: 0,
        nextAttemptAt: null,
        reason: expect.stringContaining('successUrl/failureUrl'),
      });
    }
    expect((await deliveries(client, '?eventType=created,cash_in_received')).map((d: any) => d.status)).toEqual([
      'dropped',
      'dropped',
    ]);
    expect((await deliveries(client, '?status=delivered')).map((d: any) => d.eventType)).toEqual(['succeeded']);
    const summary = (await client.data('GET', `/api/v1/va-payments/${payment.id}`)).callbackDelivery;
    expect(summary).toMatchObject({ events: 3, dropped: 2, lastEventType: 'succeeded' });
  });

  it('drops every event of a payment with no callback URL, saying why', async () => {
    const client = account();
    await create(client, { amount: 10 });
    const [created] = await deliveries(client, '?status=dropped');
    expect(created).toMatchObject({
      eventType: 'created',
      status: 'dropped',
      reason: expect.stringContaining('no callbackUrl'),
    });
  });
});

describe('GET /sandbox/v1/deliveries', () => {
  it('filters by status and eventType (comma-separated) and pages newest first', async () => {
    const client = account();
    const payment = await create(client, { amount: 50, callbackUrl: `${receiver.url}/filters` });
    await transfer(client, payment.cvu, 50);
    await receiver.waitFor(3, of(payment.id));
    await settled(client, 'succeeded', (d) => d.status === 'delivered');
    const page = await client.list('/sandbox/v1/deliveries?limit=2');
    expect(page.data.map((d: any) => d.eventType)).toEqual(['succeeded', 'cash_in_received']);
    expect(page.pagination).toEqual({ page: 1, limit: 2, total: 3, totalPages: 2 });
    expect((await deliveries(client, '?eventType=created')).map((d: any) => d.eventType)).toEqual(['created']);
    expect(await deliveries(client, '?status=failed,retrying')).toEqual([]);
    expect(await deliveries(client, '?status=delivered&eventType=cancelled')).toEqual([]);
  });

  it('answers 400 VALIDATION_ERROR naming a bad status or eventType, and 404 for an unknown delivery', async () => {
    const client = account();
    const bad = await client.get('/sandbox/v1/deliveries?status=lost&eventType=paid&limit=0');
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('VALIDATION_ERROR');
    const fields = bad.body.error.details.map((d: string) => d.split(':')[0]);
    expect(fields).toEqual(expect.arrayContaining(['status.0', 'eventType.0', 'limit']));
    for (const id of ['3f1c2b1e-1a2b-4c3d-8e9f-0a1b2c3d4e5f', 'not-a-uuid']) {
      const missing = await client.get(`/sandbox/v1/deliveries/${id}`);
      expect(missing.status).toBe(404);
      expect(missing.body).toMatchObject({
        success: false,
        error: { code: 'NOT_FOUND' },
        path: `/sandbox/v1/deliveries/${id}`,
      });
    }
  });
});

describe('retries (contract part 4)', () => {
  it('a receiver that fails twice then answers 200 gets exactly 3 attempts: pending → retrying → delivered', async () => {
    const flaky = await useReceiver((_request, index) =>
      index < 2 ? { status: 500, body: 'try later' } : { status: 200 },
    );
    const client = account();
    const stream = await useStream(server.url, client.key);
    const payment = await create(client, { callbackUrl: flaky.url, ttlSeconds: 28800 });

    await flaky.waitFor(1);
    const afterFirst = await settled(client, 'created', (d) => d.attempts === 1);
    expect(afterFirst.status).toBe('retrying');
    expect(Date.parse(afterFirst.nextAttemptAt) - Date.parse(afterFirst.updatedAt)).toBe(5000);
    // The retry waits for the sandbox clock, which the advance moves at once.
    await advance(client, 5);
    await flaky.waitFor(2);
    const afterSecond = await settled(client, 'created', (d) => d.attempts === 2);
    expect(afterSecond.status).toBe('retrying');
    expect(Date.parse(afterSecond.nextAttemptAt) - Date.parse(afterSecond.updatedAt)).toBe(25_000);
    await advance(client, 25);
    await flaky.waitFor(3);
    const done = await settled(client, 'created', (d) => d.attempts === 3);
    expect(done).toMatchObject({ status: 'delivered', nextAttemptAt: null });
    expect(done.attempts.map((a: any) => [a.n, a.responseStatus, a.error, a.responseBody])).toEqual([
      [1, 500, 'http_status', 'try later'],
      [2, 500, 'http_status', 'try later'],
      [3, 200, null, 'ok'],
    ]);

    // Every attempt carried the same event, byte for byte.
    expect(new Set(flaky.received.map((r) => r.raw)).size).toBe(1);
    expect(new Set(flaky.received.map((r) => r.headers['x-service-event-id']))).toEqual(new Set([done.eventId]));
    await stream.waitFor((m) => m.event === 'delivery' && m.data.delivery.id === done.id && m.data.attempt.n === 3);
    const statuses = stream.messages
      .filter((m) => m.event === 'delivery' && m.data.delivery.id === done.id)
      .map((m) => m.data.delivery.status);
    const pending = stream.messages.find((m) => m.event === 'event' && m.data.event.vaPaymentId === payment.id)!.data
      .event.deliveries[0].status;
    expect([pending, ...statuses]).toEqual(['pending', 'retrying', 'retrying', 'delivered']);
    await advance(client, 3600);
    expect((await delivery(client, done.id)).attempts).toHaveLength(3);
  });

  it('a receiver that always fails ends failed after exactly 3 attempts, and nothing more is sent', async () => {
    const down = await useReceiver(() => ({ status: 503 }));
    const client = account();
    await create(client, { callbackUrl: down.url, ttlSeconds: 28800 });
    await down.waitFor(1);
    await settled(client, 'created', (d) => d.attempts === 1);
    await advance(client, 5);
    await down.waitFor(2);
    await settled(client, 'created', (d) => d.attempts === 2);
    await advance(client, 25);
    await down.waitFor(3);
    const failed = await settled(client, 'created', (d) => d.attempts === 3);
    expect(failed).toMatchObject({ status: 'failed', nextAttemptAt: null });
    expect(failed.attempts.map((a: any) => a.responseStatus)).toEqual([503, 503, 503]);
    await advance(client, 3600);
    expect((await delivery(client, failed.id)).attempts).toHaveLength(3);
    expect((await deliveries(client, '?status=failed')).map((d: any) => d.id)).toEqual([failed.id]);
    expect(down.received).toHaveLength(3);
  });

  it('a redirect is a failed attempt, recorded as redirect and not followed', async () => {
    const target = await useReceiver();
    const redirecting = await useReceiver(() => ({ status: 302, headers: { location: `${target.url}/elsewhere` } }));
    const client = account();
    await create(client, { callbackUrl: redirecting.url });
    const shown = await settled(client, 'created', (d) => d.attempts === 1);
    expect(shown.status).toBe('retrying');
    expect(shown.attempts[0]).toMatchObject({
      responseStatus: 302,
      error: 'redirect',
      errorMessage: expect.stringContaining('/elsewhere'),
    });
    expect(target.received).toHaveLength(0);
  });

  it('a refused connection is recorded as connection_refused', async () => {
    const client = account();
    await create(client, { callbackUrl: `http://127.0.0.1:${await freePort()}/gone` });
    const shown = await settled(client, 'created', (d) => d.attempts === 1);
    expect(shown).toMatchObject({ status: 'retrying' });
    expect(shown.attempts[0]).toMatchObject({ responseStatus: null, responseBody: null, error: 'connection_refused' });
  });

  it('a connection closed without an answer is recorded as connection_reset', async () => {
    const rude = await useReceiver(() => 'reset');
    const client = account();
    await create(client, { callbackUrl: rude.url });
    const shown = await settled(client, 'created', (d) => d.attempts === 1);
    expect(shown.attempts[0]).toMatchObject({ responseStatus: null, error: 'connection_reset' });
  });

  it('an answer that never comes is recorded as timeout after the per-attempt timeout', async () => {
    const quick = await useServer({ callbackTimeoutMs: 300 });
    const hanging = await useReceiver(() => 'hang');
    const client = api(quick.url, 'sk_timeout');
    await create(client, { callbackUrl: hanging.url });
    const shown = await settled(client, 'created', (d) => d.attempts === 1);
    expect(shown.status).toBe('retrying');
    expect(shown.attempts[0]).toMatchObject({ responseStatus: null, responseBody: null, error: 'timeout' });
    // Each attempt has its own timeout: the retry times out the same way instead of failing at once.
    await advance(client, 5);
    const second = await settled(client, 'created', (d) => d.attempts === 2);
    expect(second.attempts[1]).toMatchObject({ error: 'timeout' });
    expect(hanging.received).toHaveLength(2);
  });

  it('reads at most 64 KiB of an answer: a 2xx whose body never ends is still delivered', async () => {
    const quick = await useServer({ callbackTimeoutMs: 2000 });
    const endless = await useReceiver(() => ({ status: 200, body: 'y'.repeat(256 * 1024), hold: true }));
    const client = api(quick.url, 'sk_endless');
    await create(client, { callbackUrl: endless.url });
    const shown = await settled(client, 'created', (d) => d.attempts === 1);
    expect(shown.attempts[0]).toMatchObject({ responseStatus: 200, error: null, responseBody: 'y'.repeat(2048) });
    expect(shown.status).toBe('delivered');
  });

  it('keeps the first 2 KiB of a huge answer, and huge answers do not hold up later deliveries', async () => {
    const huge = 'x'.repeat(1024 * 1024);
    const verbose = await useReceiver(() => ({ status: 200, body: huge }));
    const client = account();
    // More deliveries than the pool has connections: a body left unread would keep its connection busy.
    for (let i = 0; i < 12; i++) await create(client, { callbackUrl: verbose.url });
    await verbose.waitFor(12);
    const all = await eventually(
      async () => {
        const list = await deliveries(client, '?limit=100');
        return list.every((d: any) => d.status === 'delivered') && list;
      },
      10_000,
      'every delivery to be delivered',
    );
    expect(all).toHaveLength(12);
    const shown = await delivery(client, all[0].id);
    expect(shown.attempts[0].responseBody).toBe('x'.repeat(2048));
  });
});

describe('POST /sandbox/v1/deliveries/{id}/redeliver', () => {
  it('sends the same event again, with the same eventId and body, as a new delivery', async () => {
    const client = account();
    const payment = await create(client, { callbackUrl: `${receiver.url}/again` });
    const [first] = await receiver.waitFor(1, of(payment.id));
    const original = await settled(client, 'created', (d) => d.status === 'delivered');
    const response = await client.post(`/sandbox/v1/deliveries/${original.id}/redeliver`);
    expect(response.status).toBe(201);
    const copy = response.body.data;
    expect(copy).toMatchObject({
      eventId: original.eventId,
      redeliveryOf: original.id,
      status: 'pending',
      url: original.url,
    });
    expect(copy.id).not.toBe(original.id);
    const [, second] = await receiver.waitFor(2, of(payment.id));
    expect(second!.raw).toBe(first!.raw);
    expect(second!.headers['x-service-event-id']).toBe(original.eventId);
    await eventually(async () => (await delivery(client, copy.id)).status === 'delivered', 10_000, 'the redelivery');
    const events = (await client.list('/sandbox/v1/events')).data;
    expect(events[0].deliveries.map((d: any) => d.id).sort()).toEqual([original.id, copy.id].sort());
  });

  it('refuses a dropped delivery without a url (409 INVALID_STATE), an unknown one (404) and an unknown field (400)', async () => {
    const client = account();
    await create(client, { amount: 10 });
    const [dropped] = await deliveries(client, '?status=dropped');
    const refused = await client.post(`/sandbox/v1/deliveries/${dropped.id}/redeliver`);
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('INVALID_STATE');
    const unknown = await client.post('/sandbox/v1/deliveries/3f1c2b1e-1a2b-4c3d-8e9f-0a1b2c3d4e5f/redeliver');
    expect(unknown.status).toBe(404);
    const withBody = await client.post(`/sandbox/v1/deliveries/${dropped.id}/redeliver`, { to: 'http://x' });
    expect(withBody.status).toBe(400);
    expect(withBody.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: ['to: unknown field'] });
  });
});

describe('ordering of first attempts', () => {
  it("a payment's events reach the receiver in the order they were raised, even when an answer is slow", async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const gate = await useReceiver(async (request) => {
      if (request.body.eventType === 'created' && request.url === '/slow') await held;
      return { status: 200 };
    });
    const client = account();
    const slow = await create(client, { amount: 100, callbackUrl: `${gate.url}/slow` });
    await gate.waitFor(1, of(slow.id));
    await transfer(client, slow.cvu, 40);
    await transfer(client, slow.cvu, 60);
    // A later payment's events are not held up by another payment's slow receiver...
    const probe = await create(client, { amount: 5, callbackUrl: `${gate.url}/probe` });
    await gate.waitFor(1, of(probe.id));
    // ...but this payment's next events waited for its first answer.
    expect(gate.received.filter(of(slow.id)).map((r) => r.body.eventType)).toEqual(['created']);
    release();
    const got = await gate.waitFor(5, of(slow.id));
    expect(got.map((r) => r.body.eventType)).toEqual([
      'created',
      'cash_in_received',
      'underpaid',
      'cash_in_received',
      'succeeded',
    ]);
  });
});

describe('callbackDelivery summary of the VA payment', () => {
  it('counts the deliveries of the payment by status, with the last event type and attempt time', async () => {
    const picky = await useReceiver((request) =>
      request.body.eventType === 'underpaid' ? { status: 500 } : { status: 200 },
    );
    const client = account();
    const payment = await create(client, { amount: 100, callbackUrl: picky.url });
    expect(payment.callbackDelivery).toEqual({
      events: 1,
      delivered: 0,
      pending: 1,
      retrying: 0,
      failed: 0,
      dropped: 0,
      held: 0,
      lastEventType: 'created',
      lastAttemptAt: null,
    });
    await transfer(client, payment.cvu, 40);
    await settled(client, 'underpaid', (d) => d.attempts === 1);
    await settled(client, 'cash_in_received', (d) => d.status === 'delivered');
    const get = () => client.data('GET', `/api/v1/va-payments/${payment.id}`);
    const log = await deliveries(client, '?limit=100');
    const lastAttemptAt = (await Promise.all(log.map((d: any) => delivery(client, d.id))))
      .flatMap((d: any) => d.attempts.map((a: any) => a.startedAt))
      .sort()
      .at(-1);
    expect((await get()).callbackDelivery).toEqual({
      events: 3,
      delivered: 2,
      pending: 0,
      retrying: 1,
      failed: 0,
      dropped: 0,
      held: 0,
      lastEventType: 'underpaid',
      lastAttemptAt,
    });
    await advance(client, 5);
    await settled(client, 'underpaid', (d) => d.attempts === 2);
    await advance(client, 25);
    await settled(client, 'underpaid', (d) => d.attempts === 3);
    expect((await get()).callbackDelivery).toMatchObject({ events: 3, delivered: 2, retrying: 0, failed: 1 });
  });
});

describe('GET /sandbox/v1/stream', () => {
  it('streams the account’s events, transfers and delivery attempts as server-sent events, and no other account’s', async () => {
    const client = account();
    const other = account();
    const stream = await useStream(server.url, client.key);
    expect(stream.response.status).toBe(200);
    expect(stream.response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    await create(other, { callbackUrl: receiver.url });
    const payment = await create(client, { amount: 50, callbackUrl: receiver.url });
    const paid = await transfer(client, payment.cvu, 50);

    const created = await stream.waitFor((m) => m.event === 'event' && m.data.event.eventType === 'created');
    expect(created.data).toEqual({
      type: 'event',
      event: expect.objectContaining({
        vaPaymentId: payment.id,
        body: expect.objectContaining({ eventType: 'created' }),
      }),
    });
    const moved = await stream.waitFor((m) => m.event === 'transfer');
    expect(moved.data).toEqual({ type: 'transfer', transfer: paid });
    const attempt = await stream.waitFor((m) => m.event === 'delivery' && m.data.delivery.eventType === 'succeeded');
    expect(attempt.data).toMatchObject({
      type: 'delivery',
      delivery: { status: 'delivered', attempts: 1 },
      attempt: { n: 1, responseStatus: 200, error: null },
    });
    expect(Object.keys(attempt.data).sort()).toEqual(['attempt', 'delivery', 'event', 'type']);
    expect(attempt.data.event).toEqual({
      vaPaymentId: attempt.data.event.body.vaPaymentId,
      clientId: null,
      body: expect.objectContaining({ eventType: 'succeeded' }),
    });

    expect(stream.messages.every((m) => m.event === m.data.type && !('account' in m.data))).toBe(true);
    expect(stream.messages.some((m) => JSON.stringify(m.data).includes(other.key))).toBe(false);
    expect(
      stream.messages.filter((m) => m.event === 'event').every((m) => m.data.event.vaPaymentId === payment.id),
    ).toBe(true);
    // The wire format: a comment first, then `event:` and one `data:` line per message.
    expect(stream.raw()).toMatch(/^: connected\n\nevent: event\ndata: \{"type":"event","event":\{/);
  });

  it('ends when the server closes, and close() does not wait for open streams', async () => {
    const own = await startServer({ port: 0, memory: true });
    const first = await useStream(own.url, 'sk_a');
    const second = await useStream(own.url, 'sk_b');
    await own.close();
    await Promise.all([first.ended, second.ended]);
  });

  it('stops listening to the account when the client goes away', async () => {
    const own = await useServer({}, 'test');
    let listening = 0;
    const on = own.runtime.sandbox.on;
    own.runtime.sandbox.on = (listener) => {
      listening++;
      const off = on(listener);
      return () => (listening--, off());
    };
    const stream = await useStream(own.url, 'sk_gone');
    expect(listening).toBe(1);
    await stream.close();
    await eventually(() => listening === 0, 5000, 'the stream to unsubscribe');
  });

  it('sends a heartbeat comment every 15 s while nothing happens', async () => {
    // Only the stream's interval is faked: the app runs in-process, its other timers stay real.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      const runtime = await createRuntime({ store: memoryStore() });
      const response = await createApp(runtime).fetch(
        new Request('http://sandbox.test/sandbox/v1/stream', { headers: { authorization: 'Bearer sk_beat' } }),
      );
      const reader = response.body!.getReader();
      const next = async () => new TextDecoder().decode((await reader.read()).value);
      expect(await next()).toBe(': connected\n\n');
      vi.advanceTimersByTime(14_999);
      const beat = next();
      vi.advanceTimersByTime(1);
      expect(await beat).toBe(': heartbeat\n\n');
      vi.advanceTimersByTime(15_000);
      expect(await next()).toBe(': heartbeat\n\n');
      await reader.cancel();
      await runtime.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it('answers 401 without a key', async () => {
    const response = await fetch(`${server.url}/sandbox/v1/stream`);
    expect(response.status).toBe(401);
    expect(((await response.json()) as any).error.code).toBe('UNAUTHORIZED');
  });
});

describe('a hanging receiver never slows the API', () => {
  it('100 API calls all succeed while every delivery hangs', async () => {
    const hanging = await useReceiver(() => 'hang');
    const client = account();
    const first = await create(client, { amount: 10, callbackUrl: hanging.url });
    await hanging.waitFor(1);
    const calls: Promise<unknown>[] = [];
    for (let i = 0; i < 100; i++) {
      const call =
        i % 4 === 0
          ? client.post('/api/v1/va-payments', { ...PAYMENT, amount: 100 + i, callbackUrl: hanging.url })
          : i % 4 === 1
            ? client.post('/sandbox/v1/transfers', { to: first.cvu, total: 1 })
            : i % 4 === 2
              ? client.get('/sandbox/v1/deliveries')
              : client.get(`/api/v1/va-payments/${first.id}`);
      calls.push(call);
      if (calls.length % 10 === 0) await Promise.all(calls.slice(-10));
    }
    const statuses = ((await Promise.all(calls)) as { status: number }[]).map((r) => r.status);
    expect(statuses.filter((s) => s >= 200 && s < 300)).toHaveLength(100);
    // The receiver really was holding several deliveries open.
    await hanging.waitFor(2);
  });
});
