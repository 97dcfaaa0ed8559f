import { HttpHandler } from 'msw';
import { setupServer } from 'msw/node';
import mswPackage from 'msw/package.json' with { type: 'json' };
// The package's msw entry, as a user's suite imports it (the built dist).
import { type Callback, sandboxHandlers } from 'va-sandbox/msw';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENT, PAYMENT, useReceiver } from './helpers.js';

const BASE = 'https://va-sandbox.test/base';
const callbacks: Callback[] = [];
let failNext = 0;
const inProcess = sandboxHandlers({
  baseUrl: BASE,
  onCallback: (callback) => {
    callbacks.push(callback);
    if (failNext > 0) {
      failNext--;
      return 503;
    }
  },
});
const receiver = await useReceiver();
const overHttp = sandboxHandlers({ baseUrl: 'http://sandbox.internal' });
let hangNext = 0;
const hanging = sandboxHandlers({
  baseUrl: 'https://hanging.test',
  callbackTimeoutMs: 200,
  // The first callback is never answered: the attempt must time out rather than hold its slot for ever.
  onCallback: () => (hangNext > 0 ? (hangNext--, new Promise<number>(() => {})) : 200),
});
const server = setupServer(...inProcess, ...overHttp, ...hanging);
// This file runs once per supported msw major (vitest.config.ts): msw 3 renamed listen()'s onUnhandledRequest.
const mswMajor = Number(mswPackage.version.split('.')[0]);
const strict =
  mswMajor >= 3
    ? { onUnhandledFrame: 'error' as const }
    : ({ onUnhandledRequest: 'error' } as Parameters<typeof server.listen>[0]);
beforeAll(() => server.listen(strict));
afterAll(async () => {
  server.close();
  await inProcess.close();
  await overHttp.close();
  await hanging.close();
});

const call = async (method: string, path: string, body?: unknown, base = BASE) => {
  const response = await fetch(base + path, {
    method,
    headers: { authorization: 'Bearer sk_msw', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as any };
};

/** Polls until `check` holds: callbacks are sent beside the requests that raise them. */
async function until(check: () => boolean | Promise<boolean>) {
  for (let i = 0; i < 500 && !(await check()); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(await check()).toBe(true);
}

describe("sandboxHandlers() from 'va-sandbox/msw' under setupServer, with plain fetch", () => {
  it(`runs on the msw major this project asked for (${process.env.VA_SANDBOX_MSW_MAJOR}), in the test and in dist/msw.js alike`, () => {
    expect(mswMajor).toBe(Number(process.env.VA_SANDBOX_MSW_MAJOR));
    // The handlers the built entry made are the classes of the msw this file imports, not of another copy.
    expect(inProcess.every((handler) => handler instanceof HttpHandler)).toBe(true);
  });

  it('answers the API at the chosen base URL with the same envelopes as the server', async () => {
    const health = await fetch(`${BASE}/health`);
    expect(await health.json()).toMatchObject({ status: 'ok' });
    const created = await call('POST', '/api/v1/va-payments', {
      ...PAYMENT,
      amount: 1500,
      lockMode: 'amount',
      callbackUrl: 'https://app.test/hooks',
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ success: true, data: { status: 'waiting', amount: 1500 } });
    const transfer = await call('POST', '/sandbox/v1/transfers', { to: created.body.data.cvu, total: 1500 });
    expect(transfer.body.data.outcome).toBe('credited');
    expect((await call('GET', `/api/v1/va-payments/${created.body.data.id}`)).body.data.status).toBe('completed');
    const invalid = await call('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 1.234, colour: 'red' });
    expect(invalid.status).toBe(400);
    expect(invalid.body.error.details).toEqual(
      expect.arrayContaining(['colour: unknown field', 'amount: must have at most 2 decimals']),
    );
    expect((await fetch(`${BASE}/api/v1/va-payments`)).status).toBe(401);
    expect((await call('GET', '/sandbox/v1/hubs/1')).body.data.name).toBe('Sandbox Hub 1');
    const doc = (await (await fetch(`${BASE}/openapi.json`)).json()) as any;
    expect(doc.openapi).toBe('3.1.0');
  });

  it('settle() resolves once every callback due so far is attempted: no polling in the test', async () => {
    const seen = callbacks.length;
    const payment = (
      await call('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 77, callbackUrl: 'https://app.test/settle' })
    ).body.data;
    await call('POST', '/sandbox/v1/transfers', { to: payment.cvu, total: 77 });
    await inProcess.settle();
    const mine = callbacks.slice(seen).filter((c) => c.body.vaPaymentId === payment.id);
    expect(mine.map((c) => c.eventType)).toEqual(['created', 'cash_in_received', 'succeeded']);

    // A failed attempt waits for its retry (5 s of sandbox clock): settle does not wait for it...
    failNext = 1;
    const retried = (
      await call('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 78, callbackUrl: 'https://app.test/settle' })
    ).body.data;
    await inProcess.settle();
    const attempts = () => callbacks.filter((c) => c.body.vaPaymentId === retried.id).length;
    expect(attempts()).toBe(1);
    // ...until the clock makes it due.
    await call('POST', '/sandbox/v1/clock/advance', { seconds: 5 });
    await inProcess.settle();
    expect(attempts()).toBe(2);
  });

  it('hands callbacks to onCallback, and retries the ones it fails', async () => {
    failNext = 1;
    const payment = (
      await call('POST', '/api/v1/va-payments', { ...PAYMENT, ttlSeconds: 60, callbackUrl: 'https://app.test/va' })
    ).body.data;
    const mine = () => callbacks.filter((c) => c.body.vaPaymentId === payment.id);
    await until(() => mine().length === 1);
    expect(mine()[0]).toMatchObject({
      url: 'https://app.test/va',
      eventType: 'created',
      body: { eventType: 'created', vaPaymentId: payment.id },
    });
    expect(mine()[0]!.headers['User-Agent']).toBe('Service-VA-Callback/1.0');
    const delivery = async () =>
      (await call('GET', '/sandbox/v1/deliveries?eventType=created')).body.data.find(
        (d: any) => d.eventId === mine()[0]!.eventId,
      );
    await until(async () => (await delivery()).attempts === 1);
    expect(await delivery()).toMatchObject({ status: 'retrying', lastResponseStatus: 503, lastError: 'http_status' });
    await call('POST', '/sandbox/v1/clock/advance', { seconds: 5 });
    await until(() => mine().length === 2);
    expect(mine()[1]!.eventId).toBe(mine()[0]!.eventId);
    await until(async () => (await delivery()).status === 'delivered');
    await call('POST', '/sandbox/v1/clock/advance', { seconds: 60 });
    await until(() => mine().some((c) => c.eventType === 'failed'));
  });

  it('an onCallback that never settles is a timeout after callbackTimeoutMs, and the retry goes on', async () => {
    const base = 'https://hanging.test';
    hangNext = 1;
    const payment = (
      await call('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 10, callbackUrl: 'https://app.test/slow' }, base)
    ).body.data;
    const delivery = async () =>
      (await call('GET', '/sandbox/v1/deliveries?eventType=created', undefined, base)).body.data[0];
    await until(async () => (await delivery())?.attempts === 1);
    expect(await delivery()).toMatchObject({ status: 'retrying', lastError: 'timeout', lastResponseStatus: null });
    await call('POST', '/sandbox/v1/clock/advance', { seconds: 5 }, base);
    await until(async () => (await delivery()).status === 'delivered');
    expect(
      (await call('GET', `/api/v1/va-payments/${payment.id}`, undefined, base)).body.data.callbackDelivery,
    ).toMatchObject({ delivered: 1 });
  });

  it('without onCallback, sends callbacks over real HTTP (msw does not see them)', async () => {
    const base = 'http://sandbox.internal';
    const client = (
      await call(
        'POST',
        '/api/v1/clients',
        { ...CLIENT, name: 'Uno', taxId: '20-12345678-3', cashinCallbackUrl: `${receiver.url}/cashin` },
        base,
      )
    ).body.data;
    await call('POST', '/sandbox/v1/transfers', { to: client.cvu, total: 250, taxes: 2.5 }, base);
    const [cashIn] = await receiver.waitFor(1);
    expect(cashIn!.url).toBe('/cashin');
    expect(cashIn!.headers['user-agent']).toBe('Service-Client-Callback/1.0');
    expect(cashIn!.body).toMatchObject({
      eventType: 'client.cashin',
      clientId: client.id,
      amount: 247.5,
      total: 250,
      taxes: 2.5,
    });
    // The two handler sets are two sandboxes: the client is not in the other one.
    expect((await call('GET', `/api/v1/clients/${client.id}`)).status).toBe(404);
  });
});
