import { describe, expect, it } from 'vitest';
import { isValidCvu } from '../src/core/index.js';
import { type Api, api, CLIENT, spawnServer, useServer } from './helpers.js';

const server = await useServer();
let keyN = 0;
/** Each test gets its own account (a fresh API key), so tests never see each other's state. */
const account = () => api(server.url, `sk_clients_${++keyN}`);

const createClient = (a: Api, body: Record<string, unknown> = {}) =>
  a.data('POST', '/api/v1/clients', { ...CLIENT, name: 'Ana Pérez', taxId: '20-12345678-3', ...body });

const UNKNOWN_ID = '3f1c2b1e-1a2b-4c3d-8e9f-0a1b2c3d4e5f';

describe('POST /api/v1/clients', () => {
  it('creates an active client with a valid CVU and alias inline, and every field of contract part 3', async () => {
    const a = account();
    const body = {
      name: 'Ana Pérez',
      taxId: '20-12345678-3',
      cashinCallbackUrl: 'https://shop.example/cashin',
      emails: ['ana@example.com'],
      phones: ['+54 11 5555-0000'],
      aliasPrefixHint: 'ana',
      aliasSuffixHint: 'perez',
      externalReference: 'crm-42',
      metadata: { plan: 'gold' },
      paymentHubId: 1,
    };
    const response = await a.post('/api/v1/clients', body);
    expect(response.status).toBe(201);
    const client = response.body.data;
    expect(client).toEqual({
      ...body,
      id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      hubName: 'Sandbox Hub 1',
      cvu: expect.any(String),
      alias: 'ANA.PEREZ.SANDBOX',
      cvuStatus: 'active',
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect(isValidCvu(client.cvu)).toBe(true);
    expect(await a.data('GET', `/api/v1/clients/${client.id}`)).toEqual(client);
  });

  it('defaults the optional fields and gives a random alias when no hints are given', async () => {
    const client = await createClient(account());
    expect(client).toMatchObject({
      cashinCallbackUrl: null,
      emails: [],
      phones: [],
      aliasPrefixHint: null,
      aliasSuffixHint: null,
      externalReference: null,
      metadata: {},
      paymentHubId: 1,
    });
    expect(client.alias).toMatch(/^[A-Z0-9.-]{6,20}$/);
  });

  it('builds the alias PREFIX.SUFFIX.BRAND in upper case without accents, cut to 20 and unique in the account', async () => {
    const a = account();
    const long = await createClient(a, { taxId: '1', aliasPrefixHint: 'Supermercado', aliasSuffixHint: 'Central' });
    expect(long.alias).toBe('SUPERMERCADO.CENTRAL');
    const accents = await createClient(a, { taxId: '2', aliasPrefixHint: 'Ñandú' });
    expect(accents.alias).toBe('NANDU.SANDBOX');
    const again = await createClient(a, { taxId: '3', aliasPrefixHint: 'Ñandú' });
    expect(again.alias).toBe('NANDU.SANDBOX-2');
    // The hub's collection alias belongs to the same account: a client never gets it.
    await a.data('PATCH', '/sandbox/v1/hubs/1', { brand: 'COBROS' });
    const clash = await createClient(a, { taxId: '4', aliasPrefixHint: 'sandbox', aliasSuffixHint: 'hub' });
    expect(clash.alias).toBe('SANDBOX.HUB.COBROS-2');
    const transfer = await a.data('POST', '/sandbox/v1/transfers', { to: 'sandbox.hub.cobros', total: 10 });
    expect(transfer.target).toBeNull();
    expect(transfer.cvu).not.toBe(clash.cvu);
  });

  it('refuses a taxId already used in the account, compared by its digits (409 TAX_ID_ALREADY_EXISTS)', async () => {
    const a = account();
    await createClient(a, { taxId: '20-12345678-3' });
    const response = await a.post('/api/v1/clients', { ...CLIENT, name: 'Other', taxId: '20123456783' });
    expect(response.status).toBe(409);
    expect(response.body.error.code).toBe('TAX_ID_ALREADY_EXISTS');
    expect(response.body.error.details).toEqual([expect.stringMatching(/^taxId: /)]);
    // Another account may use the same taxId.
    expect((await account().post('/api/v1/clients', { ...CLIENT, name: 'Other', taxId: '20123456783' })).status).toBe(
      201,
    );
  });

  it('is refused with 422 DEDICATED_CVUS_DISABLED when the hub has dedicated client CVUs off', async () => {
    const a = account();
    await a.data('PATCH', '/sandbox/v1/hubs/1', { dedicated_client_cvus_enabled: false });
    const response = await a.post('/api/v1/clients', { ...CLIENT, name: 'Ana', taxId: '20-12345678-3' });
    expect(response.status).toBe(422);
    expect(response.body.error.code).toBe('DEDICATED_CVUS_DISABLED');
    expect((await a.list('/api/v1/clients')).pagination.total).toBe(0);
    await a.data('PATCH', '/sandbox/v1/hubs/1', { dedicated_client_cvus_enabled: true });
    expect((await a.post('/api/v1/clients', { ...CLIENT, name: 'Ana', taxId: '20-12345678-3' })).status).toBe(201);
  });

  it('gives provisioning_failed with no CVU when the hub provisions with "fail"; the sandbox switch activates it', async () => {
    const a = account();
    await a.data('PATCH', '/sandbox/v1/hubs/1', { cvuProvisioning: 'fail' });
    const client = await createClient(a);
    expect(client).toMatchObject({ cvuStatus: 'provisioning_failed', cvu: null, alias: null });
    const active = await a.data('POST', `/sandbox/v1/clients/${client.id}/cvu`, { cvuStatus: 'active' });
    expect(active.cvuStatus).toBe('active');
    expect(isValidCvu(active.cvu)).toBe(true);
  });

  it('answers 404 for a paymentHubId the sandbox was not started with (--hubs)', async () => {
    const limited = await useServer({ hubIds: [1] }, 'test');
    const response = await api(limited.url).post('/api/v1/clients', {
      ...CLIENT,
      name: 'Ana',
      taxId: '20-12345678-3',
      paymentHubId: 2,
    });
    expect(response.status).toBe(404);
    expect(response.body.error.code).toBe('NOT_FOUND');
  });

  it('names every bad field in a 400 VALIDATION_ERROR', async () => {
    const a = account();
    const empty = await a.post('/api/v1/clients', { ...CLIENT });
    expect(empty.status).toBe(400);
    expect(empty.body.error.code).toBe('VALIDATION_ERROR');
    expect(empty.body.error.details).toEqual(
      expect.arrayContaining([expect.stringMatching(/^name: /), expect.stringMatching(/^taxId: /)]),
    );

    const bad = await a.post('/api/v1/clients', {
      ...CLIENT,
      name: 'x'.repeat(256),
      taxId: '2'.repeat(65),
      cashinCallbackUrl: 'ftp://example.com',
      emails: ['not-an-email'],
      phones: [42],
      aliasPrefixHint: 'x'.repeat(31),
      aliasSuffixHint: 'x'.repeat(21),
      metadata: 'plan',
      nmae: 'typo',
    });
    expect(bad.status).toBe(400);
    const fields = bad.body.error.details.map((detail: string) => detail.split(':')[0]);
    expect(fields).toEqual(
      expect.arrayContaining([
        'name',
        'taxId',
        'cashinCallbackUrl',
        'emails.0',
        'phones.0',
        'aliasPrefixHint',
        'aliasSuffixHint',
        'metadata',
        'nmae',
      ]),
    );
    expect((await a.list('/api/v1/clients')).pagination.total).toBe(0);
  });
});

describe('GET /api/v1/clients and /api/v1/clients/{id}', () => {
  it('lists newest first with pagination, filtered by taxId (by digits) and externalReference', async () => {
    const a = account();
    const made: { id: string }[] = [];
    for (let i = 1; i <= 5; i++)
      made.push(await createClient(a, { taxId: `20-0000000${i}-1`, externalReference: i % 2 ? 'odd' : 'even' }));
    const page = await a.list('/api/v1/clients?page=2&limit=2');
    expect(page.data.map((c: { id: string }) => c.id)).toEqual([made[2]!.id, made[1]!.id]);
    expect(page.pagination).toEqual({ page: 2, limit: 2, total: 5, totalPages: 3 });
    const byTaxId = await a.list('/api/v1/clients?taxId=20000000031');
    expect(byTaxId.data.map((c: { id: string }) => c.id)).toEqual([made[2]!.id]);
    const odd = await a.list('/api/v1/clients?externalReference=odd');
    expect(odd.pagination.total).toBe(3);
    const badLimit = await a.get('/api/v1/clients?limit=101');
    expect(badLimit.status).toBe(400);
    expect(badLimit.body.error.details).toEqual([expect.stringMatching(/^limit: /)]);
  });

  it('answers 404 NOT_FOUND for an unknown or malformed client id on every client path', async () => {
    const a = account();
    const client = await createClient(a);
    const invoice = await a.data('POST', `/api/v1/clients/${client.id}/invoices`, { total_amount: 1 });
    const other = await createClient(a, { taxId: '27-1' });
    const calls: [string, string, unknown?][] = [];
    for (const id of [UNKNOWN_ID, 'not-a-uuid']) {
      calls.push(
        ['GET', `/api/v1/clients/${id}`],
        ['PATCH', `/api/v1/clients/${id}`, { name: 'B' }],
        ['GET', `/api/v1/clients/${id}/balance`],
        ['GET', `/api/v1/clients/${id}/transactions`],
        ['GET', `/api/v1/clients/${id}/invoices`],
        ['POST', `/api/v1/clients/${id}/invoices`, { total_amount: 1 }],
        ['PATCH', `/api/v1/clients/${id}/invoices/${invoice.id}`, { status: 'paid' }],
        ['PATCH', `/api/v1/clients/${client.id}/invoices/${id}`, { status: 'paid' }],
        ['POST', `/sandbox/v1/clients/${id}/cvu`, { cvuStatus: 'disabled' }],
        ['POST', `/sandbox/v1/clients/${id}/debits`, { amount: 1 }],
      );
    }
    // An invoice is found only under its own client.
    calls.push(['PATCH', `/api/v1/clients/${other.id}/invoices/${invoice.id}`, { status: 'paid' }]);
    for (const [method, path, body] of calls) {
      const response = await a.call(method, path, body);
      expect(response.status, `${method} ${path}`).toBe(404);
      expect(response.body.error.code).toBe('NOT_FOUND');
    }
    // Another account does not see this one's clients.
    expect((await account().get(`/api/v1/clients/${client.id}`)).status).toBe(404);
  });
});

describe('PATCH /api/v1/clients/{id}', () => {
  it('changes the given fields only and keeps the CVU and alias', async () => {
    const a = account();
    const client = await createClient(a, {
      cashinCallbackUrl: 'https://shop.example/cashin',
      externalReference: 'crm-1',
      aliasPrefixHint: 'ana',
    });
    const updated = await a.data('PATCH', `/api/v1/clients/${client.id}`, {
      name: 'Ana María',
      emails: ['am@example.com'],
      metadata: { tier: 2 },
    });
    expect(updated).toEqual({
      ...client,
      name: 'Ana María',
      emails: ['am@example.com'],
      metadata: { tier: 2 },
      updatedAt: expect.any(String),
    });
    const hints = await a.data('PATCH', `/api/v1/clients/${client.id}`, { aliasPrefixHint: 'maria' });
    expect(hints).toMatchObject({ aliasPrefixHint: 'maria', alias: client.alias, cvu: client.cvu });
  });

  it('removes the callback with cashinCallbackUrl: null', async () => {
    const a = account();
    const client = await createClient(a, { cashinCallbackUrl: 'https://shop.example/cashin' });
    const updated = await a.data('PATCH', `/api/v1/clients/${client.id}`, { cashinCallbackUrl: null });
    expect(updated.cashinCallbackUrl).toBeNull();
    expect((await a.data('GET', `/api/v1/clients/${client.id}`)).cashinCallbackUrl).toBeNull();
    // A cash-in now has nowhere to go: its event is dropped, with why.
    await a.data('POST', '/sandbox/v1/transfers', { to: client.cvu, total: 10 });
    const { data: events } = await a.list('/sandbox/v1/events');
    expect(events[0]).toMatchObject({
      eventType: 'client.cashin',
      url: null,
      droppedReason: 'the client has no cashinCallbackUrl',
    });
    expect(events[0].deliveries[0].status).toBe('dropped');
  });

  it('keeps a new taxId unique by its digits (409 TAX_ID_ALREADY_EXISTS), and lets a client keep its own in another format', async () => {
    const a = account();
    const ana = await createClient(a, { taxId: '20-12345678-3' });
    const beto = await createClient(a, { name: 'Beto', taxId: '23-22222222-9' });
    const clash = await a.patch(`/api/v1/clients/${beto.id}`, { taxId: '20123456783' });
    expect(clash.status).toBe(409);
    expect(clash.body.error.code).toBe('TAX_ID_ALREADY_EXISTS');
    expect((await a.data('GET', `/api/v1/clients/${beto.id}`)).taxId).toBe('23-22222222-9');
    expect((await a.data('PATCH', `/api/v1/clients/${ana.id}`, { taxId: '20123456783' })).taxId).toBe('20123456783');
    // The old taxId is free again once changed.
    await a.data('PATCH', `/api/v1/clients/${beto.id}`, { taxId: '27-33333333-1' });
    expect((await a.post('/api/v1/clients', { ...CLIENT, name: 'Carla', taxId: '23222222229' })).status).toBe(201);
  });

  it('refuses paymentHubId, unknown fields, null name and bad values, naming each field', async () => {
    const a = account();
    const client = await createClient(a);
    const response = await a.patch(`/api/v1/clients/${client.id}`, {
      paymentHubId: 1,
      name: null,
      emails: 'x',
      cashinCallbackUrl: 'nope',
    });
    expect(response.status).toBe(400);
    const fields = response.body.error.details.map((detail: string) => detail.split(':')[0]);
    expect(fields).toEqual(expect.arrayContaining(['paymentHubId', 'name', 'emails', 'cashinCallbackUrl']));
    expect(await a.data('GET', `/api/v1/clients/${client.id}`)).toEqual(client);
  });
});

describe('--strict-tax-id', () => {
  it('is off by default: a taxId with a wrong CUIT check digit is accepted', async () => {
    expect((await account().post('/api/v1/clients', { ...CLIENT, name: 'Ana', taxId: '20-12345678-3' })).status).toBe(
      201,
    );
  });

  it('checks the CUIT check digit (weights 5,4,3,2,7,6,5,4,3,2 mod 11) on create and PATCH', async () => {
    const strict = await useServer({ strictTaxId: true });
    const a = api(strict.url, 'sk_strict');
    const wrong = await a.post('/api/v1/clients', { ...CLIENT, name: 'Ana', taxId: '20-12345678-3' });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.code).toBe('VALIDATION_ERROR');
    expect(wrong.body.error.details).toEqual([expect.stringMatching(/^taxId: /)]);
    expect((await a.post('/api/v1/clients', { ...CLIENT, name: 'Ana', taxId: '123' })).status).toBe(400);
    const client = await a.data('POST', '/api/v1/clients', { ...CLIENT, name: 'Ana', taxId: '20-12345678-6' });
    expect((await a.patch(`/api/v1/clients/${client.id}`, { taxId: '30-71234567-0' })).status).toBe(400);
    expect((await a.data('PATCH', `/api/v1/clients/${client.id}`, { taxId: '30-71234567-1' })).taxId).toBe(
      '30-71234567-1',
    );
  });

  it('is a flag of `va-sandbox start`', async () => {
    const spawned = await spawnServer(['--memory', '--strict-tax-id']);
    const a = api(spawned.url);
    expect((await a.post('/api/v1/clients', { ...CLIENT, name: 'Ana', taxId: '20-12345678-3' })).status).toBe(400);
    expect((await a.post('/api/v1/clients', { ...CLIENT, name: 'Ana', taxId: '20-12345678-6' })).status).toBe(201);
  });
});
