/**
 * Triggers (contract part 9): each event is made through the operations a user would call, so a real receiver gets
 * the callback of the real path; for `succeeded` and `client.cashin`, the very body and headers the same operations
 * made by hand produce.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from '../src/core/records/schemas.js';
import { TRIGGER_EVENTS } from '../src/core/records/trigger.js';
import { scenarioSchema } from '../src/core/scenarios/scenario.js';
import { loadScenarioFile, runScenarios } from '../src/sandbox/scenarios/scenario-runner.js';
import { type Api, api, eventually, type Received, ROOT, useReceiver, useServer } from './helpers.js';

const server = await useServer();
const receiver = await useReceiver();
let accounts = 0;
const account = () => api(server.url, `sk_trigger_${++accounts}`);

const ofEvent = (eventId: string) => (r: Received) => r.headers['x-service-event-id'] === eventId;
const settled = (client: Api) =>
  eventually(
    async () => (await client.list('/sandbox/v1/deliveries?status=pending,retrying')).pagination.total === 0,
    10_000,
    'every delivery done',
  );

/** A callback with what differs between two runs of the same operations (ids, times, CVUs, aliases, operation ids) masked. */
function masked(value: unknown): unknown {
  if (typeof value === 'string') {
    if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(value)) return '<id>';
    if (/^\d{4}-\d{2}-\d{2}T/.test(value)) return '<time>';
    if (/^\d{22}$/.test(value)) return '<cvu>';
    return value;
  }
  if (Array.isArray(value)) return value.map(masked);
  if (value && typeof value === 'object') {
    const hidden = new Set(['alias', 'operationId', 'taxId']);
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, hidden.has(key) ? '<masked>' : masked(item)]),
    );
  }
  return value;
}

const sent = (request: Received) => ({
  body: masked(request.body),
  headers: Object.fromEntries(
    Object.entries(request.headers).filter(
      ([name]) => !['host', 'connection', 'content-length', 'x-service-event-id'].includes(name),
    ),
  ),
});

describe('POST /sandbox/v1/triggers', () => {
  it.each(TRIGGER_EVENTS.map((event) => [event]))(
    '%s: a real receiver gets that event, with the id the answer names',
    async (event) => {
      const client = account();
      const callbackUrl = `${receiver.url}/${event}`;
      const answer = await client.post('/sandbox/v1/triggers', { event, callbackUrl });
      expect(answer.status).toBe(201);
      const { data } = answer.body;
      expect(data.event).toBe(event);
      expect(data.steps.length).toBeGreaterThan(0);
      const [got] = await receiver.waitFor(1, ofEvent(data.eventId));
      expect(got!.url).toBe(`/${event}`);
      expect(got!.headers['x-service-event-type']).toBe(event);
      if (event === 'client.cashin') {
        expect(data).toMatchObject({ clientId: expect.any(String) });
        expect(got!.body).toMatchObject({ clientId: data.clientId, amount: 1500 });
        return;
      }
      expect(got!.body).toMatchObject({ eventType: event, vaPaymentId: data.vaPaymentId });
      const status = {
        created: 'waiting',
        cash_in_received: 'completed',
        succeeded: 'completed',
        underpaid: 'underpaid',
        overpaid: 'overpaid',
        failed: 'expired',
        cancelled: 'cancelled',
      }[event];
      expect(got!.body.status).toBe(status);
      const payment = await client.data('GET', `/api/v1/va-payments/${data.vaPaymentId}`);
      expect(payment.status).toBe(status);
    },
  );

  it('succeeded: the callback is the one a create and a transfer made by hand send', async () => {
    const triggered = account();
    const byHand = account();
    const callbackUrl = `${receiver.url}/same-succeeded`;
    const { data } = (await triggered.post('/sandbox/v1/triggers', { event: 'succeeded', callbackUrl, amount: 2500.5 }))
      .body;
    const payment = await byHand.data('POST', '/api/v1/va-payments', {
      paymentHubId: 1,
      currency: 'ARS',
      lockMode: 'time',
      amount: 2500.5,
      callbackUrl,
      externalReference: 'trigger succeeded',
    });
    const transfer = await byHand.data('POST', '/sandbox/v1/transfers', { to: payment.cvu, total: 2500.5 });
    const [fromTrigger] = await receiver.waitFor(1, ofEvent(data.eventId));
    const [fromHand] = await receiver.waitFor(1, ofEvent(transfer.eventIds[1]));
    expect(fromHand!.body.eventType).toBe('succeeded');
    expect(sent(fromTrigger!)).toEqual(sent(fromHand!));
    // The ledger of the real path: the payment's cash-in, and the transfer in the list.
    const transfers = await triggered.list('/sandbox/v1/transfers');
    expect(transfers.data).toMatchObject([
      { outcome: 'credited', total: 2500.5, target: { type: 'va_payment', id: data.vaPaymentId } },
    ]);
  });

  it('client.cashin: the callback and the ledger entry are those of a client made and paid by hand', async () => {
    const triggered = account();
    const byHand = account();
    const callbackUrl = `${receiver.url}/same-cashin`;
    const { data } = (
      await triggered.post('/sandbox/v1/triggers', { event: 'client.cashin', callbackUrl, amount: 320 })
    ).body;
    const made = await triggered.data('GET', `/api/v1/clients/${data.clientId}`);
    const client = await byHand.data('POST', '/api/v1/clients', {
      paymentHubId: 1,
      name: made.name,
      taxId: made.taxId,
      cashinCallbackUrl: callbackUrl,
    });
    const transfer = await byHand.data('POST', '/sandbox/v1/transfers', { to: client.cvu, total: 320 });
    const [fromTrigger] = await receiver.waitFor(1, ofEvent(data.eventId));
    const [fromHand] = await receiver.waitFor(1, ofEvent(transfer.eventIds[0]));
    expect(sent(fromTrigger!)).toEqual(sent(fromHand!));
    const ledger = async (who: Api, id: string) =>
      masked((await who.data('GET', `/api/v1/clients/${id}/transactions`)).transactions);
    expect(await ledger(triggered, data.clientId)).toEqual(await ledger(byHand, client.id));
    expect(await triggered.data('GET', `/api/v1/clients/${data.clientId}/balance`)).toMatchObject({
      totalCashIn: 320,
      balance: 320,
    });
  });

  it('failed: the clock moves no further than the payment ttl', async () => {
    const client = account();
    const before = Date.parse((await client.data('GET', '/sandbox/v1/clock')).now);
    const { data } = (
      await client.post('/sandbox/v1/triggers', { event: 'failed', callbackUrl: `${receiver.url}/ttl` })
    ).body;
    const payment = await client.data('GET', `/api/v1/va-payments/${data.vaPaymentId}`);
    const { offsetSeconds } = await client.data('GET', '/sandbox/v1/clock');
    expect(offsetSeconds).toBeLessThanOrEqual(payment.ttlSeconds);
    expect(Date.parse(payment.expiredAt) - before).toBeLessThan(5000);
    await settled(client);
  });

  it('without callbackUrl: to the forwarding URL while one is set, else dropped', async () => {
    const client = account();
    await client.data('PUT', '/sandbox/v1/forwarding', { url: `${receiver.url}/forwarded` });
    const forwarded = (await client.post('/sandbox/v1/triggers', { event: 'created' })).body.data;
    const [got] = await receiver.waitFor(1, ofEvent(forwarded.eventId));
    expect(got!.url).toBe('/forwarded');
    await client.data('DELETE', '/sandbox/v1/forwarding');
    const dropped = (await client.post('/sandbox/v1/triggers', { event: 'succeeded' })).body.data;
    const events = await client.list(`/sandbox/v1/events?vaPaymentId=${dropped.vaPaymentId}`);
    expect(events.data.find((e: { id: string }) => e.id === dropped.eventId)).toMatchObject({
      url: null,
      deliveries: [{ status: 'dropped' }],
    });
  });

  it('an unknown event: 400 VALIDATION_ERROR listing the known ones; an amount too small to underpay: 400, nothing made', async () => {
    const client = account();
    const unknown = await client.post('/sandbox/v1/triggers', { event: 'paid' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.code).toBe('VALIDATION_ERROR');
    expect(unknown.body.error.details).toEqual([`event: must be one of: ${TRIGGER_EVENTS.join(', ')}`]);
    const small = await client.post('/sandbox/v1/triggers', { event: 'underpaid', amount: 0.01 });
    expect(small.status).toBe(400);
    expect(small.body.error.details[0]).toMatch(/^amount: must be at least 0.02/);
    expect((await client.list('/api/v1/va-payments')).pagination.total).toBe(0);
  });

  it('client.cashin on a hub that provisions CVUs later: 409 naming the hub setting', async () => {
    const client = account();
    await client.data('PATCH', '/sandbox/v1/hubs/7', { cvuProvisioning: 'delayed' });
    const answer = await client.post('/sandbox/v1/triggers', { event: 'client.cashin', paymentHubId: 7 });
    expect(answer.status).toBe(409);
    expect(answer.body.error.message).toMatch(/cvuProvisioning|provisions client CVUs "delayed"/);
    expect((await client.list('/api/v1/clients')).pagination.total).toBe(0);
  });
});

describe('the scenario step {"trigger": {...}}', () => {
  it('makes the event, names its answer for later steps, and fails as the API does', async () => {
    const loaded = await loadScenarioFile(join(ROOT, 'test', 'scenario-files', 'trigger.json'));
    const run = await runScenarios([loaded], { url: server.url });
    const [result] = run.scenarios;
    expect(result!.steps.map((s) => [s.label, s.status, s.failures])).toEqual([
      ['paid: trigger succeeded', 'passed', []],
      [expect.stringMatching(/^expectVaPayment /), 'passed', []],
      [expect.stringMatching(/^expectCallbacks /), 'passed', []],
      ['cashin: trigger client.cashin', 'passed', []],
      [expect.stringMatching(/^expectBalance /), 'passed', []],
      [expect.stringMatching(/^expectCallbacks /), 'passed', []],
      ['trigger underpaid', 'passed', []],
    ]);
  });

  it('a trigger step whose callbacks differ fails, naming what was received', async () => {
    const scenario = {
      version: 1 as const,
      name: 'wrong',
      steps: [
        { trigger: { event: 'underpaid', callbackUrl: '${receiver.url}/u' } },
        {
          do: 'expectCallbacks',
          url: '${receiver.url}/u',
          callbacks: [{ eventType: 'created' }, { eventType: 'cash_in_received' }, { eventType: 'succeeded' }],
        },
      ],
    };
    const run = await runScenarios([{ file: 'inline', scenario: parse(scenarioSchema, scenario) }], {
      url: server.url,
    });
    expect(run.scenarios[0]!.steps[1]!.failures).toEqual([
      'callbacks[2].eventType: expected "succeeded", got "underpaid"',
    ]);
  });
});
