import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FakeClock, isValidCvu } from '../src/core/index.js';
import { startServer } from '../src/sandbox/http/server.js';
import { type Api, api, CLIENT, eventually, ROOT, stored, useReceiver, useServer, useTmp } from './helpers.js';

const server = await useServer();
let keyN = 0;
const account = () => api(server.url, `sk_cvu_${++keyN}`);

const createClient = (a: Api, body: Record<string, unknown> = {}) =>
  a.data('POST', '/api/v1/clients', { ...CLIENT, name: 'Ana Pérez', taxId: '20-12345678-3', ...body });
const transfer = (a: Api, body: Record<string, unknown>) => a.data('POST', '/sandbox/v1/transfers', body);
const entries = async (a: Api, clientId: string) =>
  (await a.data('GET', `/api/v1/clients/${clientId}/transactions`)).pagination.total;

describe('cvuProvisioning delayed', () => {
  it('creates the client provisioning with null cvu and alias; active 5 clock seconds later, then a transfer is credited', async () => {
    const a = account();
    await a.data('PATCH', '/sandbox/v1/hubs/1', { cvuProvisioning: 'delayed' });
    const client = await createClient(a, { aliasPrefixHint: 'ana' });
    expect(client).toMatchObject({ cvuStatus: 'provisioning', cvu: null, alias: null });

    await a.data('POST', '/sandbox/v1/clock/advance', { seconds: 4 });
    expect(await a.data('GET', `/api/v1/clients/${client.id}`)).toMatchObject({ cvuStatus: 'provisioning', cvu: null });

    await a.data('POST', '/sandbox/v1/clock/advance', { seconds: 1 });
    const active = await a.data('GET', `/api/v1/clients/${client.id}`);
    expect(active).toMatchObject({ cvuStatus: 'active', alias: 'ANA.SANDBOX' });
    expect(isValidCvu(active.cvu)).toBe(true);

    const credited = await transfer(a, { to: active.cvu, total: 250 });
    expect(credited).toMatchObject({ outcome: 'credited', target: { type: 'client', id: client.id } });
    expect(await entries(a, client.id)).toBe(1);
  });

  it('is activated by the timer when its time comes, without any request', async () => {
    const key = `sk_cvu_${++keyN}`;
    const a = api(server.url, key);
    await a.data('PATCH', '/sandbox/v1/hubs/1', { cvuProvisioning: 'delayed' });
    const client = await createClient(a);
    await a.data('POST', '/sandbox/v1/clock/advance', { seconds: 4 });
    // No more requests: only the runtime's timer can make it active (within about a second of real time).
    const stored = () => server.runtime.store.records(key).get('clients', client.id)!;
    expect(stored().cvuStatus).toBe('provisioning');
    await eventually(() => stored().cvuStatus === 'active', 10_000, 'the timer to activate the CVU');
    expect(isValidCvu(stored().cvu!)).toBe(true);
  });
});

describe('POST /sandbox/v1/clients/{id}/cvu', () => {
  it('while disabled, a transfer to the CVU or alias is returned with no entry and no event; re-activated, it is credited', async () => {
    const a = account();
    const client = await createClient(a, { cashinCallbackUrl: 'http://127.0.0.1:9/never' });
    const disabled = await a.data('POST', `/sandbox/v1/clients/${client.id}/cvu`, { cvuStatus: 'disabled' });
    expect(disabled).toMatchObject({ cvuStatus: 'disabled', cvu: client.cvu, alias: client.alias });

    for (const to of [client.cvu, client.alias]) {
      const returned = await transfer(a, { to, total: 100 });
      expect(returned).toMatchObject({ outcome: 'returned', target: null, eventIds: [], cvu: client.cvu });
      expect(returned.reason).toContain('disabled');
    }
    expect(await entries(a, client.id)).toBe(0);
    expect((await a.list('/sandbox/v1/events')).pagination.total).toBe(0);
    expect((await a.data('GET', `/api/v1/clients/${client.id}/balance`)).totalCashIn).toBe(0);

    const active = await a.data('POST', `/sandbox/v1/clients/${client.id}/cvu`, { cvuStatus: 'active' });
    expect(active).toMatchObject({ cvuStatus: 'active', cvu: client.cvu, alias: client.alias });
    expect((await transfer(a, { to: client.cvu, total: 100 })).outcome).toBe('credited');
    expect(await entries(a, client.id)).toBe(1);
  });

  it('active provisions a CVU now for a client still provisioning (once); disabled leaves a client without CVU without one', async () => {
    const a = account();
    await a.data('PATCH', '/sandbox/v1/hubs/1', { cvuProvisioning: 'delayed' });
    const provisioning = await createClient(a);
    const active = await a.data('POST', `/sandbox/v1/clients/${provisioning.id}/cvu`, { cvuStatus: 'active' });
    expect(active.cvuStatus).toBe('active');
    // Activated by hand, it is not provisioned a second time when its delay runs out.
    await a.data('POST', '/sandbox/v1/clock/advance', { seconds: 10 });
    expect(await a.data('GET', `/api/v1/clients/${provisioning.id}`)).toMatchObject({
      cvu: active.cvu,
      alias: active.alias,
    });

    const other = await createClient(a, { taxId: '27-1' });
    const disabled = await a.data('POST', `/sandbox/v1/clients/${other.id}/cvu`, { cvuStatus: 'disabled' });
    expect(disabled).toMatchObject({ cvuStatus: 'disabled', cvu: null });
    await a.data('POST', '/sandbox/v1/clock/advance', { seconds: 10 });
    expect((await a.data('GET', `/api/v1/clients/${other.id}`)).cvuStatus).toBe('disabled');
  });

  it('accepts only provisioning, active or disabled, naming the field; provisioning is for a client without a CVU yet', async () => {
    const a = account();
    const client = await createClient(a);
    for (const body of [{ cvuStatus: 'not_provisioned' }, {}]) {
      const response = await a.post(`/sandbox/v1/clients/${client.id}/cvu`, body);
      expect(response.status).toBe(400);
      expect(response.body.error.details).toEqual([expect.stringMatching(/^cvuStatus: /)]);
    }
    const back = await a.post(`/sandbox/v1/clients/${client.id}/cvu`, { cvuStatus: 'provisioning' });
    expect(back.status).toBe(409);
    expect(back.body.error).toMatchObject({
      code: 'INVALID_STATE',
      details: ['cvuStatus: provisioning is for a client without a CVU yet'],
    });
  });

  it('a manual hub makes clients not_provisioned, with no CVU, until the switch says provisioning, then active', async () => {
    const a = account();
    await a.patch('/sandbox/v1/hubs/1', { cvuProvisioning: 'manual' });
    const client = await createClient(a);
    expect(client).toMatchObject({ cvuStatus: 'not_provisioned', cvu: null, alias: null });
    // Time does not provision it.
    await a.post('/sandbox/v1/clock/advance', { seconds: 3600 });
    expect((await a.data('GET', `/api/v1/clients/${client.id}`)).cvuStatus).toBe('not_provisioned');
    const requested = await a.data('POST', `/sandbox/v1/clients/${client.id}/cvu`, { cvuStatus: 'provisioning' });
    expect(requested).toMatchObject({ cvuStatus: 'provisioning', cvu: null });
    await a.post('/sandbox/v1/clock/advance', { seconds: 3600 });
    expect((await a.data('GET', `/api/v1/clients/${client.id}`)).cvuStatus).toBe('provisioning');
    const active = await a.data('POST', `/sandbox/v1/clients/${client.id}/cvu`, { cvuStatus: 'active' });
    expect(active).toMatchObject({ cvuStatus: 'active', cvu: expect.stringMatching(/^\d{22}$/) });
    expect((await a.data('POST', '/sandbox/v1/transfers', { to: active.alias, total: 5 })).outcome).toBe('credited');
    // Straight to active works too.
    const other = await createClient(a, { taxId: '27-12345678-0' });
    expect(other.cvuStatus).toBe('not_provisioned');
    expect((await a.data('POST', `/sandbox/v1/clients/${other.id}/cvu`, { cvuStatus: 'active' })).cvuStatus).toBe(
      'active',
    );
  });
});

describe('the client.cashin event', () => {
  const SPEC_FIELDS = [
    'eventId',
    'clientId',
    'eventType',
    'taxId',
    'amount',
    'total',
    'totalWithoutTaxes',
    'taxes',
    'currency',
    'cvu',
    'alias',
    'operationId',
    'createdAt',
  ];

  it('has exactly the body of spec 6.2, and a real receiver gets it with the spec 6.2 headers', async () => {
    const receiver = await useReceiver();
    const a = account();
    const client = await createClient(a, { cashinCallbackUrl: `${receiver.url}/cashin` });
    const credited = await transfer(a, { to: client.cvu, total: 1000, taxes: 30.25 });

    const { data: events } = await a.list('/sandbox/v1/events');
    expect(events).toHaveLength(1);
    const event = events[0];
    expect(event).toMatchObject({
      id: credited.eventIds[0],
      eventType: 'client.cashin',
      clientId: client.id,
      vaPaymentId: null,
      url: `${receiver.url}/cashin`,
    });
    expect(Object.keys(event.body).sort()).toEqual([...SPEC_FIELDS].sort());
    expect(event.body).toEqual({
      eventId: event.id,
      clientId: client.id,
      eventType: 'client.cashin',
      taxId: '20-12345678-3',
      amount: 969.75,
      total: 1000,
      totalWithoutTaxes: 969.75,
      taxes: 30.25,
      currency: 'ARS',
      cvu: client.cvu,
      alias: client.alias,
      operationId: credited.operationId,
      createdAt: credited.createdAt,
    });

    const [request] = await receiver.waitFor(1);
    expect(request!.method).toBe('POST');
    expect(request!.url).toBe('/cashin');
    expect(request!.headers['content-type']).toBe('application/json');
    expect(request!.headers['user-agent']).toBe('Service-Client-Callback/1.0');
    expect(request!.headers['x-service-event-id']).toBe(event.id);
    expect(request!.headers['x-service-event-type']).toBe('client.cashin');
    expect(request!.body).toEqual(event.body);
    await eventually(async () => (await a.list('/sandbox/v1/events')).data[0].deliveries[0].status === 'delivered');
  });

  it('is raised for every credited transfer, in order, to the URL the client has at that moment', async () => {
    const receiver = await useReceiver();
    const a = account();
    const client = await createClient(a, { cashinCallbackUrl: `${receiver.url}/first` });
    await transfer(a, { to: client.cvu, total: 1 });
    await a.data('PATCH', `/api/v1/clients/${client.id}`, { cashinCallbackUrl: `${receiver.url}/second` });
    await transfer(a, { to: client.alias, total: 2 });
    const received = await receiver.waitFor(2);
    expect(received.map((r) => [r.url, r.body.amount])).toEqual([
      ['/first', 1],
      ['/second', 2],
    ]);
  });
});

describe('persistence', () => {
  it('a provisioning client survives a restart and becomes active when its time has passed', async () => {
    const data = join(useTmp(), 'state.db');
    const clock = new FakeClock();
    const key = 'sk_restart';
    const first = await startServer({ port: 0, host: '127.0.0.1', data, clock });
    let clientId: string;
    try {
      const a = api(first.url, key);
      await a.data('PATCH', '/sandbox/v1/hubs/1', { cvuProvisioning: 'delayed' });
      clientId = (await createClient(a)).id;
    } finally {
      await first.close();
    }
    const storedClient = () => stored(data, key).clients[clientId];
    expect(storedClient()).toMatchObject({ cvuStatus: 'provisioning', cvu: null });

    clock.advance(6000);
    const second = await useServer({ data, clock });
    // Activated on start, before any request, and written to the database.
    const activated = storedClient();
    expect(activated.cvuStatus).toBe('active');
    expect(isValidCvu(activated.cvu!)).toBe(true);
    const a = api(second.url, key);
    const client = await a.data('GET', `/api/v1/clients/${clientId}`);
    expect(client).toMatchObject({ cvuStatus: 'active', cvu: activated.cvu });
    expect((await transfer(a, { to: client.cvu, total: 10 })).outcome).toBe('credited');
  });

  it('a data set written before clients existed is copied in, and takes clients', async () => {
    const dir = useTmp();
    cpSync(join(ROOT, 'test', 'data', 'previous-release', 'clean'), dir, { recursive: true });
    const state = JSON.parse(readFileSync(join(dir, 'state.json'), 'utf8'));
    const key = 'sk_prev';
    for (const table of ['clients', 'entries', 'invoices']) delete state.accounts[key][table];
    writeFileSync(join(dir, 'state.json'), JSON.stringify(state));
    rmSync(join(dir, 'state.json.journal'));
    const paymentId = Object.keys(state.accounts[key].vaPayments)[0]!;

    const server = await useServer({ data: join(dir, 'state.db') });
    const a = api(server.url, key);
    expect((await a.data('GET', `/api/v1/va-payments/${paymentId}`)).id).toBe(paymentId);
    expect((await a.list('/api/v1/clients')).pagination.total).toBe(0);
    const client = await createClient(a);
    expect((await transfer(a, { to: client.cvu, total: 1 })).outcome).toBe('credited');
  });
});
