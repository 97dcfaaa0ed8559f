import { describe, expect, it } from 'vitest';
import { isValidCvu } from '../src/core/index.js';
import { api, PAYMENT, useServer } from './helpers.js';

const server = await useServer();
let keyN = 0;
/** Each test gets its own account (a fresh API key), so tests never see each other's state. */
const account = () => api(server.url, `sk_va_${++keyN}`);

const create = (client: ReturnType<typeof account>, body: Record<string, unknown>) =>
  client.data('POST', '/api/v1/va-payments', { ...PAYMENT, ...body });
const transfer = (client: ReturnType<typeof account>, body: Record<string, unknown>) =>
  client.data('POST', '/sandbox/v1/transfers', body);

describe('POST /api/v1/va-payments', () => {
  it('creates a waiting payment with defaults: ARS, lockMode time, ttl 1800, its own valid CVU and alias', async () => {
    const client = account();
    const response = await client.post('/api/v1/va-payments', { ...PAYMENT, amount: 1500 });
    expect(response.status).toBe(201);
    expect(response.body.success).toBe(true);
    expect(response.body.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const payment = response.body.data;
    expect(payment).toMatchObject({
      status: 'waiting',
      lockMode: 'time',
      amount: 1500,
      currency: 'ARS',
      ttlSeconds: 1800,
      clientId: null,
      callbackUrl: null,
      successUrl: null,
      failureUrl: null,
      metadata: {},
      paymentHubId: 1,
      totalReceived: 0,
      receivedAmount: 0,
      remainingAmount: 1500,
      cashIns: [],
      completedAt: null,
      cancelledAt: null,
      expiredAt: null,
    });
    expect(payment.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(isValidCvu(payment.cvu)).toBe(true);
    expect(payment.alias).toMatch(/^[A-Za-z0-9.-]{6,20}$/);
    expect(payment.paymentInstructions).toMatchObject({
      cvu: payment.cvu,
      alias: payment.alias,
      amount: 1500,
      currency: 'ARS',
      expiresAt: payment.expiresAt,
    });
    expect(Date.parse(payment.expiresAt) - Date.parse(payment.createdAt)).toBe(1800 * 1000);
    expect(payment.callbackDelivery).toMatchObject({ events: 1, dropped: 1, lastEventType: 'created' });
  });

  it('keeps every field of contract 2.1 as given', async () => {
    const client = account();
    const body = {
      currency: 'ARS',
      lockMode: 'amount_and_time',
      amount: 2500.5,
      ttlSeconds: 600,
      clientId: '3f1c2b1e-1a2b-4c3d-8e9f-0a1b2c3d4e5f',
      clientTaxId: '20-12345678-3',
      clientName: 'Ana Pérez',
      successUrl: 'https://shop.example/ok',
      failureUrl: 'https://shop.example/ko',
      externalReference: 'order-42',
      metadata: { cart: 7, tags: ['a'] },
      paymentHubId: 1,
    };
    const payment = await create(client, body);
    const { currency, paymentHubId, ...rest } = body;
    expect(payment).toMatchObject({ ...rest, currency, paymentHubId, callbackUrl: null });
    expect(await client.data('GET', `/api/v1/va-payments/${payment.id}`)).toEqual({ ...payment });
  });

  it('an open-amount time lock has amount null and nothing remaining', async () => {
    const payment = await create(account(), { lockMode: 'time' });
    expect(payment.amount).toBeNull();
    expect(payment.remainingAmount).toBe(0);
  });

  it('amount locks share the hub collection CVU; time locks get CVUs of their own', async () => {
    const client = account();
    const hub = await client.data('GET', '/sandbox/v1/hubs/1');
    const a = await create(client, { lockMode: 'amount', amount: 100 });
    const b = await create(client, { lockMode: 'amount', amount: 200 });
    const t1 = await create(client, { amount: 100 });
    const t2 = await create(client, { amount: 100, lockMode: 'amount_and_time' });
    expect(a.cvu).toBe(hub.collectionCvu);
    expect(b.cvu).toBe(hub.collectionCvu);
    expect(new Set([t1.cvu, t2.cvu, hub.collectionCvu]).size).toBe(3);
    expect(new Set([t1.alias.toUpperCase(), t2.alias.toUpperCase(), hub.collectionAlias.toUpperCase()]).size).toBe(3);
  });

  it('a second active amount lock with the same amount is 409 AMOUNT_LOCK_CONFLICT; once the first ends it is free', async () => {
    const client = account();
    const first = await create(client, { lockMode: 'amount', amount: 777.77 });
    const clash = await client.post('/api/v1/va-payments', { ...PAYMENT, lockMode: 'amount', amount: 777.77 });
    expect(clash.status).toBe(409);
    expect(clash.body.error.code).toBe('AMOUNT_LOCK_CONFLICT');
    expect(clash.body.error.details).toEqual(['amount: already locked by an active VA payment']);
    await client.data('POST', `/api/v1/va-payments/${first.id}/cancel`);
    expect((await client.post('/api/v1/va-payments', { ...PAYMENT, lockMode: 'amount', amount: 777.77 })).status).toBe(
      201,
    );
  });

  it('rejects a currency other than ARS with 422 UNSUPPORTED_CURRENCY', async () => {
    const response = await account().post('/api/v1/va-payments', { ...PAYMENT, currency: 'USD', amount: 10 });
    expect(response.status).toBe(422);
    expect(response.body.error).toMatchObject({ code: 'UNSUPPORTED_CURRENCY', details: ['currency: must be ARS'] });
  });

  it('rejects a paymentHubId the sandbox was not started with (--hubs) with 404', async () => {
    const limited = await useServer({ hubIds: [1] }, 'test');
    const response = await api(limited.url).post('/api/v1/va-payments', { ...PAYMENT, amount: 10, paymentHubId: 2 });
    expect(response.status).toBe(404);
    expect(response.body.error.code).toBe('NOT_FOUND');
  });

  it.each([
    [{ lockMode: 'amount' }, 'amount: is required with lockMode "amount"'],
    [{ lockMode: 'amount_and_time' }, 'amount: is required with lockMode "amount_and_time"'],
    [
      { amount: 10, callbackUrl: 'http://a.example', successUrl: 'http://b.example', failureUrl: 'http://c.example' },
      'callbackUrl: cannot be combined',
    ],
    [{ amount: 10, successUrl: 'http://b.example' }, 'failureUrl: is required'],
    [{ amount: 10, failureUrl: 'http://b.example' }, 'successUrl: is required'],
    [{ amount: 10, callbackUrl: 'ftp://x.example' }, 'callbackUrl: must be an http(s) URL'],
    [{ amount: 10.001 }, 'amount: must have at most 2 decimals'],
    [{ amount: -5 }, 'amount: must be greater than 0'],
    [{ amount: 0 }, 'amount: must be greater than 0'],
    [{ amount: 1e12 }, 'amount: must be at most 999999999.99'],
    [{ amount: 1e21 }, 'amount: must be at most 999999999.99'],
    // Parsed, so `__proto__` is an own key as in a request body (an object literal would set the prototype).
    [
      JSON.parse('{"amount": 10, "metadata": {"__proto__": {"x": 1}, "a": 1}}'),
      'metadata.__proto__: is not a key the sandbox can keep',
    ],
    [{ amount: '10' }, 'amount: Invalid input'],
    [{ ttlSeconds: 0 }, 'ttlSeconds:'],
    [{ ttlSeconds: 28801 }, 'ttlSeconds:'],
    [{ ttlSeconds: 60.5 }, 'ttlSeconds:'],
    [{ lockMode: 'both' }, 'lockMode:'],
    [{ clientId: 'not-a-uuid' }, 'clientId: must be a UUID'],
    [{ clientTaxId: '2'.repeat(65) }, 'clientTaxId: Too big: expected string to have <=64 characters'],
    [{ clientName: 'x'.repeat(256) }, 'clientName:'],
    [{ externalReference: 'x'.repeat(256) }, 'externalReference:'],
    [
      { metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i])) },
      'metadata: must have at most 50 keys',
    ],
    [{ metadata: { big: 'x'.repeat(9000) } }, 'metadata: must be at most 8 KiB as JSON'],
    [{ metadata: [1, 2] }, 'metadata:'],
    [{ amount: 10, colour: 'red' }, 'colour: unknown field'],
  ])('rejects %j with 400 VALIDATION_ERROR naming the field', async (body, detail) => {
    const response = await account().post('/api/v1/va-payments', { ...PAYMENT, ...body });
    expect(response.status).toBe(400);
    expect(response.body.success).toBe(false);
    expect(response.body.error.code).toBe('VALIDATION_ERROR');
    expect(response.body.error.details.some((d: string) => d.startsWith(detail))).toBe(true);
    expect(response.body.path).toBe('/api/v1/va-payments');
  });

  it('names every bad field at once', async () => {
    const response = await account().post('/api/v1/va-payments', {
      ...PAYMENT,
      amount: 1.234,
      ttlSeconds: 0,
      oops: true,
      clientId: 'x',
    });
    const fields = response.body.error.details.map((d: string) => d.split(':')[0]);
    expect(fields.sort()).toEqual(['amount', 'clientId', 'oops', 'ttlSeconds']);
  });
});

describe('transfers credit VA payments (contract 2.3)', () => {
  it('exact payment with taxes: total 5000, taxes 30 -> incomingAmount 4970, receivedAmount 4970, remaining 0, completed', async () => {
    const client = account();
    const payment = await create(client, { amount: 5000, lockMode: 'amount_and_time' });
    const result = await transfer(client, { to: payment.cvu, total: 5000, taxes: 30 });
    expect(result).toMatchObject({
      outcome: 'credited',
      total: 5000,
      taxes: 30,
      netAmount: 4970,
      target: { type: 'va_payment', id: payment.id },
      reason: null,
    });
    expect(result.eventIds).toHaveLength(2);
    const after = await client.data('GET', `/api/v1/va-payments/${payment.id}`);
    expect(after).toMatchObject({ status: 'completed', totalReceived: 5000, receivedAmount: 4970, remainingAmount: 0 });
    expect(after.completedAt).toBe(result.createdAt);
    expect(after.cashIns).toEqual([
      {
        operationId: result.operationId,
        transferId: result.id,
        total: 5000,
        taxes: 30,
        incomingAmount: 4970,
        totalWithoutTaxes: 4970,
        receivedAt: result.createdAt,
      },
    ]);
    const events = (await client.list('/sandbox/v1/events')).data;
    const types = events.map((e: { eventType: string }) => e.eventType).reverse();
    expect(types).toEqual(['created', 'cash_in_received', 'succeeded']);
    const succeeded = events[0].body;
    expect(succeeded).toMatchObject({
      vaPaymentId: payment.id,
      eventType: 'succeeded',
      status: 'completed',
      payload: {
        vaPaymentId: payment.id,
        operationId: result.operationId,
        incomingAmount: 4970,
        total: 5000,
        totalWithoutTaxes: 4970,
        taxes: 30,
        receivedAmount: 4970,
        remainingAmount: 0,
      },
    });
    expect(succeeded.payload.total - succeeded.payload.taxes).toBe(succeeded.payload.incomingAmount);
  });

  it('time lock: underpaid, then underpaid again, then overpaid; every transfer is credited whatever its amount', async () => {
    const client = account();
    const payment = await create(client, { amount: 1000 });
    await transfer(client, { to: payment.alias.toLowerCase(), total: 300 });
    let now = await client.data('GET', `/api/v1/va-payments/${payment.id}`);
    expect(now).toMatchObject({ status: 'underpaid', totalReceived: 300, remainingAmount: 700, completedAt: null });
    await transfer(client, { to: payment.cvu, total: 0.1 });
    await transfer(client, { to: payment.cvu, total: 0.2 });
    now = await client.data('GET', `/api/v1/va-payments/${payment.id}`);
    expect(now).toMatchObject({ status: 'underpaid', totalReceived: 300.3, remainingAmount: 699.7 });
    const last = await transfer(client, { to: payment.cvu, total: 800, taxes: 8 });
    expect(last.outcome).toBe('credited');
    now = await client.data('GET', `/api/v1/va-payments/${payment.id}`);
    expect(now).toMatchObject({
      status: 'overpaid',
      totalReceived: 1100.3,
      receivedAmount: 1092.3,
      remainingAmount: 0,
    });
    const types = (await client.list('/sandbox/v1/events?limit=100')).data
      .map((e: { eventType: string }) => e.eventType)
      .reverse();
    expect(types).toEqual([
      'created',
      'cash_in_received',
      'underpaid',
      'cash_in_received',
      'underpaid',
      'cash_in_received',
      'underpaid',
      'cash_in_received',
      'overpaid',
    ]);
  });

  it('time lock: an exact single transfer completes; a larger one overpays', async () => {
    const client = account();
    const exact = await create(client, { amount: 250 });
    const over = await create(client, { amount: 250 });
    await transfer(client, { to: exact.cvu, total: 250 });
    await transfer(client, { to: over.cvu, total: 251 });
    expect((await client.data('GET', `/api/v1/va-payments/${exact.id}`)).status).toBe('completed');
    expect(await client.data('GET', `/api/v1/va-payments/${over.id}`)).toMatchObject({
      status: 'overpaid',
      remainingAmount: 0,
      totalReceived: 251,
    });
  });

  it('open amount: the first transfer completes it, with nothing remaining', async () => {
    const client = account();
    const payment = await create(client, {});
    await transfer(client, { to: payment.cvu, total: 1234.56, taxes: 4.56 });
    expect(await client.data('GET', `/api/v1/va-payments/${payment.id}`)).toMatchObject({
      status: 'completed',
      amount: null,
      totalReceived: 1234.56,
      receivedAmount: 1230,
      remainingAmount: 0,
    });
  });

  it('amount lock: a transfer to the collection CVU is matched by its gross total; others are returned', async () => {
    const client = account();
    const hub = await client.data('GET', '/sandbox/v1/hubs/1');
    const a = await create(client, { lockMode: 'amount', amount: 100 });
    const b = await create(client, { lockMode: 'amount', amount: 200 });
    const miss = await transfer(client, { to: hub.collectionCvu, total: 150 });
    expect(miss).toMatchObject({ outcome: 'returned', target: null, eventIds: [] });
    expect(miss.reason).toContain('150');
    const hit = await transfer(client, { to: hub.collectionAlias, total: 200, taxes: 2 });
    expect(hit).toMatchObject({ outcome: 'credited', target: { type: 'va_payment', id: b.id } });
    expect((await client.data('GET', `/api/v1/va-payments/${b.id}`)).status).toBe('completed');
    expect((await client.data('GET', `/api/v1/va-payments/${a.id}`)).status).toBe('waiting');
    // b is done: another 200 finds nobody waiting for it
    expect((await transfer(client, { to: hub.collectionCvu, total: 200 })).outcome).toBe('returned');
  });

  it('amount_and_time: only a transfer whose total equals the amount is credited', async () => {
    const client = account();
    const payment = await create(client, { lockMode: 'amount_and_time', amount: 500 });
    const wrong = await transfer(client, { to: payment.cvu, total: 499.99 });
    expect(wrong.outcome).toBe('returned');
    expect(wrong.reason).toContain('does not match');
    expect(await client.data('GET', `/api/v1/va-payments/${payment.id}`)).toMatchObject({
      status: 'waiting',
      totalReceived: 0,
      cashIns: [],
    });
    expect((await transfer(client, { to: payment.cvu, total: 500 })).outcome).toBe('credited');
  });

  it('a transfer to an ended payment is returned and changes nothing; its CVU goes back to the pool', async () => {
    const client = account();
    const first = await create(client, { amount: 10 });
    await transfer(client, { to: first.cvu, total: 10 });
    const late = await transfer(client, { to: first.cvu, total: 10 });
    expect(late).toMatchObject({ outcome: 'returned', reason: 'no active VA payment holds this CVU' });
    expect((await client.data('GET', `/api/v1/va-payments/${first.id}`)).totalReceived).toBe(10);
    const second = await create(client, { amount: 20 });
    expect(second.cvu).toBe(first.cvu);
  });

  it('an unknown CVU or alias is 404; bad transfer bodies name the field', async () => {
    const client = account();
    const unknown = await client.post('/sandbox/v1/transfers', { to: '0000003100000000000017', total: 10 });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('NOT_FOUND');
    const bad = await client.post('/sandbox/v1/transfers', { to: 'X', total: 10, taxes: 10, extra: 1 });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details).toEqual(
      expect.arrayContaining(['taxes: must be less than total', 'extra: unknown field']),
    );
    const missing = await client.post('/sandbox/v1/transfers', {});
    expect(missing.body.error.details.map((d: string) => d.split(':')[0]).sort()).toEqual(['to', 'total']);
  });

  it('GET /sandbox/v1/transfers lists transfers newest first', async () => {
    const client = account();
    const payment = await create(client, { amount: 10 });
    const one = await transfer(client, { to: payment.cvu, total: 1 });
    const two = await transfer(client, {
      to: payment.cvu,
      total: 2,
      from: { name: 'Juan', taxId: '20-1', cbu: '0'.repeat(22) },
    });
    const list = await client.list('/sandbox/v1/transfers');
    expect(list.data.map((t: { id: string }) => t.id)).toEqual([two.id, one.id]);
    expect(list.data[0].from).toEqual({ name: 'Juan', taxId: '20-1', cbu: '0'.repeat(22) });
    expect(list.pagination).toEqual({ page: 1, limit: 20, total: 2, totalPages: 1 });
  });
});

describe('POST /api/v1/va-payments/{id}/cancel', () => {
  it('cancels a waiting payment: 200 with message, status cancelled, lock released, event cancelled carrying the payment', async () => {
    const client = account();
    const payment = await create(client, { amount: 10, callbackUrl: 'http://127.0.0.1:9/cb' });
    const response = await client.post(`/api/v1/va-payments/${payment.id}/cancel`);
    expect(response.status).toBe(200);
    expect(response.body.message).toBe('VA payment cancelled');
    expect(response.body.data).toMatchObject({ id: payment.id, status: 'cancelled' });
    expect(response.body.data.cancelledAt).not.toBeNull();
    const cancelled = (await client.list('/sandbox/v1/events')).data[0];
    expect(cancelled.eventType).toBe('cancelled');
    expect(cancelled.body.payload).toMatchObject({
      id: payment.id,
      status: 'cancelled',
      cancelledAt: response.body.data.cancelledAt,
    });
    expect((await transfer(client, { to: payment.cvu, total: 10 })).outcome).toBe('returned');
  });

  it('cancels an underpaid payment', async () => {
    const client = account();
    const payment = await create(client, { amount: 10 });
    await transfer(client, { to: payment.cvu, total: 4 });
    expect((await client.data('POST', `/api/v1/va-payments/${payment.id}/cancel`)).status).toBe('cancelled');
  });

  it.each(['completed', 'cancelled', 'expired'])(
    'a %s payment cannot be cancelled: 409 INVALID_STATE naming the status',
    async (status) => {
      const client = account();
      const payment = await create(client, { amount: 10 });
      if (status === 'completed') await transfer(client, { to: payment.cvu, total: 10 });
      if (status === 'cancelled') await client.data('POST', `/api/v1/va-payments/${payment.id}/cancel`);
      if (status === 'expired') await client.data('POST', '/sandbox/v1/clock/advance', { seconds: 1800 });
      const response = await client.post(`/api/v1/va-payments/${payment.id}/cancel`);
      expect(response.status).toBe(409);
      expect(response.body.error.code).toBe('INVALID_STATE');
      expect(response.body.error.message).toContain(`is ${status}`);
    },
  );

  it('takes no body: unknown fields are 400, an unknown id 404', async () => {
    const client = account();
    const payment = await create(client, { amount: 10 });
    expect((await client.post(`/api/v1/va-payments/${payment.id}/cancel`, { reason: 'x' })).body.error.details).toEqual(
      ['reason: unknown field'],
    );
    expect((await client.post(`/api/v1/va-payments/${payment.id}/cancel`, {})).status).toBe(200);
    expect((await client.post('/api/v1/va-payments/00000000-0000-4000-8000-000000000000/cancel')).status).toBe(404);
  });
});

describe('expiry', () => {
  it('clock/advance to expiresAt expires waiting and underpaid payments (event failed), not completed ones', async () => {
    const client = account();
    const waiting = await create(client, { amount: 10, ttlSeconds: 60 });
    const underpaid = await create(client, { amount: 10, ttlSeconds: 60 });
    const done = await create(client, { amount: 10, ttlSeconds: 60 });
    const later = await create(client, { amount: 10, ttlSeconds: 120 });
    await transfer(client, { to: underpaid.cvu, total: 5 });
    await transfer(client, { to: done.cvu, total: 10 });
    const clock = await client.data('POST', '/sandbox/v1/clock/advance', { seconds: 59 });
    expect(clock.offsetSeconds).toBe(59);
    expect((await client.data('GET', `/api/v1/va-payments/${waiting.id}`)).status).toBe('waiting');
    await client.data('POST', '/sandbox/v1/clock/advance', { seconds: 1 });
    const after = (await client.list('/api/v1/va-payments')).data;
    const byId = Object.fromEntries(after.map((p: { id: string }) => [p.id, p]));
    expect(byId[waiting.id]).toMatchObject({ status: 'expired', expiredAt: waiting.expiresAt });
    expect(byId[underpaid.id]).toMatchObject({ status: 'expired', totalReceived: 5 });
    expect(byId[done.id].status).toBe('completed');
    expect(byId[later.id].status).toBe('waiting');
    const failed = (await client.list('/sandbox/v1/events?limit=100')).data.filter(
      (e: { eventType: string }) => e.eventType === 'failed',
    );
    expect(failed.map((e: { vaPaymentId: string }) => e.vaPaymentId).sort()).toEqual([waiting.id, underpaid.id].sort());
    expect(failed[0].body).toMatchObject({ eventType: 'failed', status: 'expired', payload: { status: 'expired' } });
    // the expired payment's CVU is free again
    expect((await transfer(client, { to: waiting.cvu, total: 10 })).outcome).toBe('returned');
  });

  it('the timer expires a payment when its time comes, with nobody calling', async () => {
    const client = account();
    const payment = await create(client, { amount: 10, ttlSeconds: 60 });
    const failed = new Promise<string>((resolve) => {
      const off = server.runtime.sandbox.on((live) => {
        if (live.type === 'event' && live.event.eventType === 'failed' && live.event.vaPaymentId === payment.id) {
          off();
          resolve(live.event.body.status as string);
        }
      });
    });
    // 59.7 s of sandbox time pass at once; the last 0.3 s pass in real time, with no request at all
    const { head } = server.runtime.sandbox.account(client.key);
    head.clockOffsetMs += 59_700;
    server.runtime.store.writeHead(client.key, head); // as the core writes a clock move
    await server.runtime.commit();
    expect(await failed).toBe('expired');
    expect(server.runtime.store.records(client.key).get('vaPayments', payment.id)!.status).toBe('expired');
  });

  it('clock/advance takes whole positive seconds', async () => {
    const client = account();
    for (const body of [{ seconds: 0 }, { seconds: 1.5 }, { seconds: '5' }, {}, { seconds: 5, extra: 1 }]) {
      const response = await client.post('/sandbox/v1/clock/advance', body);
      expect(response.status).toBe(400);
      expect(response.body.error.code).toBe('VALIDATION_ERROR');
    }
    expect((await client.data('GET', '/sandbox/v1/clock')).offsetSeconds).toBe(0);
  });
});

describe('GET /api/v1/va-payments', () => {
  it('filters by status (comma-separated), client, reference and creation dates; paginates newest first', async () => {
    const client = account();
    const made: any[] = [];
    for (let i = 0; i < 5; i++) {
      made.push(
        await create(client, {
          amount: 10 + i,
          externalReference: `ref-${i % 2}`,
          clientTaxId: i < 2 ? '20-1' : null,
          clientId: i === 4 ? 'AAAAAAAA-AAAA-4AAA-8AAA-AAAAAAAAAAAA' : null,
        }),
      );
    }
    await client.data('POST', `/api/v1/va-payments/${made[0].id}/cancel`);
    await transfer(client, { to: made[1].cvu, total: 1 });
    const ids = async (query: string) =>
      (await client.list(`/api/v1/va-payments${query}`)).data.map((p: { id: string }) => p.id);
    expect(await ids('')).toEqual(made.map((p) => p.id).reverse());
    expect(await ids('?status=cancelled,underpaid')).toEqual([made[1].id, made[0].id]);
    expect(await ids('?status=waiting')).toEqual([made[4].id, made[3].id, made[2].id]);
    expect(await ids('?externalReference=ref-1')).toEqual([made[3].id, made[1].id]);
    expect(await ids('?clientTaxId=20-1')).toEqual([made[1].id, made[0].id]);
    expect(await ids('?clientId=aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa')).toEqual([made[4].id]);
    expect(await ids(`?createdFrom=${made[2].createdAt}&createdTo=${made[3].createdAt}`)).toEqual(
      made
        .filter((p) => p.createdAt >= made[2].createdAt && p.createdAt <= made[3].createdAt)
        .map((p) => p.id)
        .reverse(),
    );
    const page2 = await client.list('/api/v1/va-payments?page=2&limit=2');
    expect(page2.pagination).toEqual({ page: 2, limit: 2, total: 5, totalPages: 3 });
    expect(page2.data.map((p: { id: string }) => p.id)).toEqual([made[2].id, made[1].id]);
    expect((await client.list('/api/v1/va-payments?page=9')).data).toEqual([]);
  });

  it.each(['page=0', 'page=x', 'limit=0', 'limit=101', 'limit=1.5', 'status=paid', 'createdFrom=yesterday'])(
    'rejects ?%s with 400 naming the parameter',
    async (query) => {
      const response = await account().get(`/api/v1/va-payments?${query}`);
      expect(response.status).toBe(400);
      expect(response.body.error.code).toBe('VALIDATION_ERROR');
      expect(response.body.error.details[0]).toMatch(new RegExp(`^${query.split('=')[0]}`));
    },
  );
});

describe('GET /api/v1/va-payments/{id}', () => {
  it('is 404 NOT_FOUND for an unknown or malformed id', async () => {
    const client = account();
    for (const id of ['00000000-0000-4000-8000-000000000000', 'nope', '%20', "1' OR 1=1"]) {
      const response = await client.get(`/api/v1/va-payments/${encodeURIComponent(id)}`);
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe('NOT_FOUND');
    }
  });
});
