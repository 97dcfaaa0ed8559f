import { cpSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { api, CLIENT, PAYMENT, ROOT, runCli, spawnServer, useServer, useTmp } from './helpers.js';

/**
 * Code written against the provider's public API reference works here unchanged: its example bodies, sent exactly as
 * its pages print them, and the shapes its clients parse (lists, ledger entries, rate-limit headers). Where the
 * reference and the service disagree, the service wins, and the test says so.
 */

/** The reference's CreateClientRequest example, verbatim. */
const CREATE_CLIENT_EXAMPLE =
  '{"paymentHubId": 4, "name": "Acme SA", "taxId": "30-12345678-9", "cashinCallbackUrl": "https://tu-sistema.com/webhooks/cashin", "emails": ["contacto@acme.com"], "phones": ["+541112345678"], "aliasPrefixHint": "acmesa", "aliasSuffixHint": "555", "externalReference": "ERP-001", "metadata": {}}';

/**
 * The reference's CreateVaPaymentRequest example, exactly as its page prints it: `callbackUrl` together with
 * `successUrl` + `failureUrl`, which the service says cannot be combined.
 */
const CREATE_VA_PAYMENT_EXAMPLE =
  '{"paymentHubId": 123, "amount": 125000, "currency": "ARS", "lockMode": "amount_and_time", "ttlSeconds": 1800, "clientId": "4f0de7f2-7cd9-4ea2-bb82-f3118ddbe940", "clientTaxId": "30712345678", "clientName": "Acme SA", "callbackUrl": "https://merchant.example/webhooks/basilic", "successUrl": "https://merchant.example/payments/success", "failureUrl": "https://merchant.example/payments/failure", "externalReference": "order-123", "metadata": {"orderId": "order-123"}}';

/** The two configurations the service allows, each the example with the other one taken out. */
const CREATE_VA_PAYMENT_PAIR_EXAMPLE = CREATE_VA_PAYMENT_EXAMPLE.replace(
  '"callbackUrl": "https://merchant.example/webhooks/basilic", ',
  '',
);
const CREATE_VA_PAYMENT_CALLBACK_EXAMPLE = CREATE_VA_PAYMENT_EXAMPLE.replace(
  ', "successUrl": "https://merchant.example/payments/success", "failureUrl": "https://merchant.example/payments/failure"',
  '',
);

/** The reference's UpdateClientRequest example, exactly as its page prints it (placeholders and all). */
const UPDATE_CLIENT_EXAMPLE =
  '{"name": "string", "taxId": "string", "cashinCallbackUrl": "string", "emails": ["user@example.com"], "phones": ["string"], "aliasPrefixHint": "string", "aliasSuffixHint": "string", "externalReference": "string", "metadata": {}}';

describe('the reference examples, sent exactly as its pages print them', () => {
  it('create a client on hub 4: 201 with every field echoed', async () => {
    const server = await useServer();
    const response = await api(server.url, 'sk_ref_client').post('/api/v1/clients', CREATE_CLIENT_EXAMPLE);
    expect(response.status).toBe(201);
    const sent = JSON.parse(CREATE_CLIENT_EXAMPLE);
    expect(response.body.data).toMatchObject({ ...sent, hubName: 'Sandbox Hub 4', cvuStatus: 'active' });
    expect(response.body.data.cvu).toMatch(/^\d{22}$/);
  });

  it('the VA payment example (callbackUrl with successUrl + failureUrl) is 400 naming callbackUrl: the service says they cannot be combined', async () => {
    const server = await useServer();
    const response = await api(server.url, 'sk_ref_va').post('/api/v1/va-payments', CREATE_VA_PAYMENT_EXAMPLE);
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: [
        'callbackUrl: cannot be combined with successUrl/failureUrl: configure callbackUrl alone, or successUrl and failureUrl together',
      ],
    });
  });

  it('its two allowed variants differ from it only in the callback configuration taken out', () => {
    const { callbackUrl, successUrl, failureUrl, ...common } = JSON.parse(CREATE_VA_PAYMENT_EXAMPLE);
    expect(JSON.parse(CREATE_VA_PAYMENT_PAIR_EXAMPLE)).toEqual({ ...common, successUrl, failureUrl });
    expect(JSON.parse(CREATE_VA_PAYMENT_CALLBACK_EXAMPLE)).toEqual({ ...common, callbackUrl });
  });

  it.each([
    ['successUrl and failureUrl', CREATE_VA_PAYMENT_PAIR_EXAMPLE],
    ['callbackUrl', CREATE_VA_PAYMENT_CALLBACK_EXAMPLE],
  ])('create a VA payment on hub 123 (%s): 201 with every field echoed', async (_kind, body) => {
    const server = await useServer();
    const response = await api(server.url, 'sk_ref_va').post('/api/v1/va-payments', body);
    expect(response.status).toBe(201);
    const sent = JSON.parse(body);
    expect(response.body.data).toMatchObject({ ...sent, status: 'waiting', remainingAmount: 125000 });
    expect(response.body.data.cvu).toMatch(/^\d{22}$/);
  });

  it('the UpdateClientRequest example: its taxId "string" is a tax id; its cashinCallbackUrl "string" is not a URL (400 naming only it)', async () => {
    const server = await useServer();
    const client = api(server.url, 'sk_ref_update');
    const created = await client.data('POST', '/api/v1/clients', CREATE_CLIENT_EXAMPLE);
    const refused = await client.patch(`/api/v1/clients/${created.id}`, UPDATE_CLIENT_EXAMPLE);
    expect(refused.status).toBe(400);
    expect(refused.body.error.details).toEqual(['cashinCallbackUrl: must be an http(s) URL']);
    // With a URL there, the rest of the example is taken as it is, placeholders included.
    const withUrl = UPDATE_CLIENT_EXAMPLE.replace(
      '"cashinCallbackUrl": "string"',
      '"cashinCallbackUrl": "https://tu-sistema.com/webhooks/cashin"',
    );
    const updated = await client.patch(`/api/v1/clients/${created.id}`, withUrl);
    expect(updated.status).toBe(200);
    expect(updated.body.data).toMatchObject({ ...JSON.parse(withUrl), id: created.id });
    // A tax id without digits is compared as given: another client may not take "string", but may take "strings".
    const clash = await client.post('/api/v1/clients', { paymentHubId: 4, name: 'Other', taxId: 'string' });
    expect(clash.body.error?.code).toBe('TAX_ID_ALREADY_EXISTS');
    expect((await client.post('/api/v1/clients', { paymentHubId: 4, name: 'Other', taxId: 'strings' })).status).toBe(
      201,
    );
  });

  it('with --strict-tax-id the same example is refused for its taxId too: the CUIT check digit is checked', async () => {
    const server = await useServer({ strictTaxId: true });
    const client = api(server.url, 'sk_ref_strict');
    const created = await client.data('POST', '/api/v1/clients', {
      paymentHubId: 4,
      name: 'Acme SA',
      taxId: '20-12345678-6',
    });
    const refused = await client.patch(`/api/v1/clients/${created.id}`, UPDATE_CLIENT_EXAMPLE);
    expect(refused.body.error.details).toEqual(expect.arrayContaining(['cashinCallbackUrl: must be an http(s) URL']));
    const taxOnly = await client.patch(`/api/v1/clients/${created.id}`, { taxId: 'string' });
    expect(taxOnly.body.error.details).toEqual([expect.stringMatching(/^taxId: must be a CUIT of 11 digits/)]);
  });

  it('with --hubs 1, both create examples are 404 NOT_FOUND, as production answers an unknown hub', async () => {
    const server = await useServer({ hubIds: [1] });
    const client = api(server.url, 'sk_ref_hubs');
    for (const [path, body, hub] of [
      ['/api/v1/clients', CREATE_CLIENT_EXAMPLE, 4],
      ['/api/v1/va-payments', CREATE_VA_PAYMENT_PAIR_EXAMPLE, 123],
    ] as const) {
      const response = await client.post(path, body);
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe('NOT_FOUND');
      expect(response.body.error.message).toContain(`Payment hub ${hub}`);
    }
    expect((await client.post('/api/v1/va-payments', { ...PAYMENT, amount: 10 })).status).toBe(201);
    expect((await client.call('GET', '/sandbox/v1/hubs/4')).status).toBe(404);
  });

  it('the CLI starts with --hubs and fills in the hub from --hub or VA_SANDBOX_HUB_ID', async () => {
    const server = await spawnServer(['--memory', '--hubs', '123,4']);
    const env = { VA_SANDBOX_URL: server.url, VA_SANDBOX_API_KEY: 'sk_ref_cli' };
    const viaEnv = await runCli(['payments', 'create', '--amount', '10', '--json'], {
      ...env,
      VA_SANDBOX_HUB_ID: '123',
    });
    expect(viaEnv.code).toBe(0);
    expect(JSON.parse(viaEnv.stdout)).toMatchObject({ paymentHubId: 123, currency: 'ARS', lockMode: 'time' });
    const viaOption = await runCli(
      ['clients', 'create', '--name', 'Ana', '--tax-id', '20-12345678-6', '--hub', '4', '--json'],
      env,
    );
    expect(JSON.parse(viaOption.stdout)).toMatchObject({ paymentHubId: 4, hubName: 'Sandbox Hub 4' });
    const refused = await runCli(['payments', 'create', '--amount', '10'], env);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toBe(
      'va-sandbox: NOT_FOUND: Payment hub 1 not found; --hub: must be one of 4, 123 (the hubs this sandbox was started with)\n',
    );
    const hubs = await runCli(['hub', 'list', '--json'], env);
    expect(JSON.parse(hubs.stdout).data.map((hub: { id: number }) => hub.id)).toEqual([4, 123]);
  });
});

describe('required fields (contract 2.1 and 3)', () => {
  it('a VA payment create without paymentHubId, currency and lockMode is 400 naming each', async () => {
    const server = await useServer();
    const response = await api(server.url, 'sk_required').post('/api/v1/va-payments', {});
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('VALIDATION_ERROR');
    const fields = response.body.error.details.map((detail: string) => detail.split(':')[0]);
    expect(fields).toEqual(expect.arrayContaining(['paymentHubId', 'currency', 'lockMode']));
  });

  it('a client create without paymentHubId is 400 naming it', async () => {
    const server = await useServer();
    const response = await api(server.url, 'sk_required').post('/api/v1/clients', {
      name: 'Ana',
      taxId: '20-12345678-6',
    });
    expect(response.status).toBe(400);
    expect(response.body.error.details).toEqual([expect.stringMatching(/^paymentHubId: /)]);
  });

  it.each([0, -4, 1.5, '4'])('paymentHubId %j is not a hub id: 400', async (paymentHubId) => {
    const server = await useServer();
    const response = await api(server.url, 'sk_required').post('/api/v1/va-payments', { ...PAYMENT, paymentHubId });
    expect(response.status).toBe(400);
    expect(response.body.error.details).toEqual([expect.stringMatching(/^paymentHubId: /)]);
  });

  it('ttlSeconds goes from 1 to 28800: short ttls test expiry', async () => {
    const server = await useServer();
    const client = api(server.url, 'sk_ttl');
    expect((await client.post('/api/v1/va-payments', { ...PAYMENT, ttlSeconds: 1 })).status).toBe(201);
    expect((await client.post('/api/v1/va-payments', { ...PAYMENT, ttlSeconds: 28800 })).status).toBe(201);
    for (const ttlSeconds of [0, 28801]) {
      const response = await client.post('/api/v1/va-payments', { ...PAYMENT, ttlSeconds });
      expect(response.status).toBe(400);
      expect(response.body.error.details).toEqual([expect.stringMatching(/^ttlSeconds: /)]);
    }
  });
});

describe('payment hubs (contract part 1)', () => {
  it('each hub is made on first use with its own collection CVU, alias and settings', async () => {
    const server = await useServer();
    const client = api(server.url, 'sk_hubs');
    await client.data('POST', '/api/v1/va-payments', { ...PAYMENT, paymentHubId: 4 });
    await client.data('POST', '/api/v1/va-payments', { ...PAYMENT, paymentHubId: 123 });
    const { data: hubs } = await client.list('/sandbox/v1/hubs');
    expect(hubs.map((hub: any) => [hub.id, hub.name])).toEqual([
      [4, 'Sandbox Hub 4'],
      [123, 'Sandbox Hub 123'],
    ]);
    expect(new Set(hubs.map((hub: any) => hub.collectionCvu)).size).toBe(2);
    expect(new Set(hubs.map((hub: any) => hub.collectionAlias)).size).toBe(2);

    // Settings are per hub.
    await client.patch('/sandbox/v1/hubs/4', { dedicated_client_cvus_enabled: false });
    const disabled = await client.post('/api/v1/clients', {
      ...CLIENT,
      paymentHubId: 4,
      name: 'Ana',
      taxId: '20-12345678-6',
    });
    expect(disabled.body.error?.code).toBe('DEDICATED_CVUS_DISABLED');
    expect(
      (await client.post('/api/v1/clients', { ...CLIENT, paymentHubId: 123, name: 'Ana', taxId: '20-12345678-6' }))
        .status,
    ).toBe(201);
    await client.patch('/sandbox/v1/hubs/123', { brand: 'ACME', cvuProvisioning: 'delayed' });
    const delayed = await client.data('POST', '/api/v1/clients', {
      ...CLIENT,
      paymentHubId: 123,
      name: 'Bea',
      taxId: '27-12345678-0',
    });
    expect(delayed.cvuStatus).toBe('provisioning');
    const other = await client.data('POST', '/api/v1/clients', {
      ...CLIENT,
      paymentHubId: 7,
      name: 'Cid',
      taxId: '23-12345678-9',
    });
    expect(other.cvuStatus).toBe('active');
  });

  it('amount locks are per hub, and a transfer to a hub collection CVU pays that hub only', async () => {
    const server = await useServer();
    const client = api(server.url, 'sk_locks');
    const on4 = await client.data('POST', '/api/v1/va-payments', {
      ...PAYMENT,
      paymentHubId: 4,
      lockMode: 'amount',
      amount: 500,
    });
    const on123 = await client.data('POST', '/api/v1/va-payments', {
      ...PAYMENT,
      paymentHubId: 123,
      lockMode: 'amount',
      amount: 500,
    });
    expect(on4.cvu).not.toBe(on123.cvu);
    const clash = await client.post('/api/v1/va-payments', {
      ...PAYMENT,
      paymentHubId: 4,
      lockMode: 'amount',
      amount: 500,
    });
    expect(clash.body.error.code).toBe('AMOUNT_LOCK_CONFLICT');
    const transfer = await client.data('POST', '/sandbox/v1/transfers', { to: on123.alias.toLowerCase(), total: 500 });
    expect(transfer.target).toEqual({ type: 'va_payment', id: on123.id });
    expect((await client.data('GET', `/api/v1/va-payments/${on4.id}`)).status).toBe('waiting');
  });

  it('GET and PATCH /sandbox/v1/hubs/{id} refuse ids that are not positive whole numbers', async () => {
    const server = await useServer();
    const client = api(server.url, 'sk_hub_ids');
    for (const id of ['0', '-1', '1e3', 'abc'])
      expect((await client.call('GET', `/sandbox/v1/hubs/${id}`)).status).toBe(400);
    expect((await client.data('GET', '/sandbox/v1/hubs/9')).id).toBe(9);
  });
});

describe('list shapes (contract part 0): data is the array, pagination beside it', () => {
  it('on every list endpoint but transactions', async () => {
    const server = await useServer();
    const client = api(server.url, 'sk_lists');
    const customer = await client.data('POST', '/api/v1/clients', { ...CLIENT, name: 'Ana', taxId: '20-12345678-6' });
    await client.data('POST', `/api/v1/clients/${customer.id}/invoices`, { total_amount: 10 });
    const payment = await client.data('POST', '/api/v1/va-payments', {
      ...PAYMENT,
      callbackUrl: 'http://127.0.0.1:9/hook',
    });
    await client.data('POST', '/sandbox/v1/transfers', { to: payment.cvu, total: 5 });
    for (const path of [
      '/api/v1/va-payments',
      '/api/v1/clients',
      `/api/v1/clients/${customer.id}/invoices`,
      '/sandbox/v1/transfers',
      '/sandbox/v1/events',
      '/sandbox/v1/deliveries',
      '/sandbox/v1/hubs',
    ]) {
      const { body } = await client.call('GET', `${path}?limit=1`);
      expect(Object.keys(body), path).toEqual(['success', 'data', 'pagination', 'timestamp']);
      expect(Array.isArray(body.data), path).toBe(true);
      expect(body.data).toHaveLength(1);
      expect(body.pagination).toEqual({
        page: 1,
        limit: 1,
        total: expect.any(Number),
        totalPages: body.pagination.total,
      });
    }
    const { body } = await client.call('GET', `/api/v1/clients/${customer.id}/transactions`);
    expect(Object.keys(body.data)).toEqual(['transactions', 'pagination']);
    expect(body.pagination).toBeUndefined();
  });
});

describe('ledger entries (contract part 3): the real sourceType values and tempLinkId', () => {
  it('a transfer to the CVU is manual_deposit; a VA cash-in and a debit are other; tempLinkId is null', async () => {
    const server = await useServer();
    const client = api(server.url, 'sk_ledger');
    const customer = await client.data('POST', '/api/v1/clients', { ...CLIENT, name: 'Ana', taxId: '20-12345678-6' });
    const payment = await client.data('POST', '/api/v1/va-payments', { ...PAYMENT, clientId: customer.id });
    await client.data('POST', '/sandbox/v1/transfers', { to: payment.cvu, total: 30 });
    await client.data('POST', '/sandbox/v1/transfers', { to: customer.cvu, total: 20 });
    await client.data('POST', `/sandbox/v1/clients/${customer.id}/debits`, { amount: 5 });
    const { transactions } = await client.data('GET', `/api/v1/clients/${customer.id}/transactions`);
    expect(transactions.map((e: any) => [e.entryType, e.amount, e.sourceType, e.tempLinkId])).toEqual([
      ['debit', -5, 'other', null],
      ['cash_in', 20, 'manual_deposit', null],
      ['cash_in', 30, 'other', null],
    ]);
  });
});

describe('rate limit (contract part 0): per minute, on by default', () => {
  const fixed = Date.parse('2026-11-23T12:00:30.000Z');

  it('every /api/v1 answer carries the headers; the 6001st request in a minute is 429 while another key is served', {
    timeout: 120_000,
  }, async () => {
    const server = await useServer({ clock: { now: () => fixed } });
    const client = api(server.url, 'sk_flood');
    const created = await client.post('/api/v1/va-payments', { ...PAYMENT });
    expect(created.headers.get('x-ratelimit-limit')).toBe('6000');
    expect(created.headers.get('x-ratelimit-remaining')).toBe('5999');
    expect(created.headers.get('x-ratelimit-reset')).toBe(String(Date.parse('2026-11-23T12:01:00.000Z') / 1000));
    const missing = await client.call('GET', '/api/v1/va-payments/nope');
    expect(missing.status).toBe(404);
    expect(missing.headers.get('x-ratelimit-remaining')).toBe('5998');
    // The sandbox's own controls are not the production API: not limited, no headers.
    expect((await client.call('GET', '/sandbox/v1/clock')).headers.get('x-ratelimit-limit')).toBeNull();

    for (let sent = 2; sent < 6000; sent += 200) {
      await Promise.all(
        Array.from({ length: Math.min(200, 6000 - sent) }, () => client.get('/api/v1/va-payments?limit=1')),
      );
    }
    const over = await client.get('/api/v1/va-payments');
    expect(over.status).toBe(429);
    expect(over.body.error.code).toBe('RATE_LIMIT_EXCEEDED');
    expect(over.headers.get('retry-after')).toBe('30');
    expect(over.headers.get('x-ratelimit-remaining')).toBe('0');
    expect((await api(server.url, 'sk_other').get('/api/v1/va-payments')).status).toBe(200);
  });

  it('--rate-limit 0 turns it off', async () => {
    const server = await useServer({ rateLimit: 0 });
    const response = await api(server.url, 'sk_unlimited').get('/api/v1/va-payments');
    expect(response.status).toBe(200);
    expect(response.headers.get('x-ratelimit-limit')).toBeNull();
  });
});

describe('a state file written by the previous release (0.1.0)', () => {
  it.each(['clean', 'crash'])('loads and answers as before (%s stop)', async (how) => {
    const dir = useTmp();
    const from = join(ROOT, 'test', 'data', 'previous-release', how);
    cpSync(from, dir, { recursive: true });
    const before = JSON.parse(readFileSync(join(from, 'answers.json'), 'utf8'));
    const server = await useServer({ data: join(dir, 'state.json') });
    const client = api(server.url, 'sk_prev');

    // Its payments have expired since (the sandbox clock runs with real time): their money does not change.
    const stable = ({ status: _s, updatedAt: _u, expiredAt: _e, callbackDelivery: _c, ...rest }: any) => rest;
    expect(stable(await client.data('GET', `/api/v1/va-payments/${before.payment.data.id}`))).toEqual(
      stable(before.payment.data),
    );
    expect(await client.data('GET', `/api/v1/clients/${before.client.data.id}`)).toEqual(before.client.data);
    expect(await client.data('GET', `/api/v1/clients/${before.client.data.id}/balance`)).toEqual(before.balance.data);
    const { transactions } = await client.data('GET', `/api/v1/clients/${before.client.data.id}/transactions`);
    // The same entries, in the real API's words: tempLinkId added, sourceType transfer/va_payment/sandbox renamed.
    const renamed: Record<string, string> = { transfer: 'manual_deposit', va_payment: 'other', sandbox: 'other' };
    expect(transactions).toEqual(
      before.transactions.data.transactions.map((entry: any) => ({
        ...entry,
        tempLinkId: null,
        sourceType: renamed[entry.sourceType],
      })),
    );
    // Its invoice (total_amount, status issued) reads as today's: numbered, type B, buyer from its client, pending.
    const { data: invoices } = await client.list(`/api/v1/clients/${before.client.data.id}/invoices`);
    expect(invoices).toEqual([
      expect.objectContaining({
        invoiceNumber: '0001-00000001',
        invoiceType: 'B',
        buyerTaxId: before.client.data.taxId,
        buyerName: before.client.data.name,
        totalAmount: before.balance.data.totalInvoiced,
        total_amount: before.balance.data.totalInvoiced,
        paymentStatus: 'pending',
        observations: null,
        dueAt: null,
      }),
    ]);
    // Its one hub is hub 1, with its settings and collection CVU.
    expect(await client.data('GET', '/sandbox/v1/hubs/1')).toEqual(before.hub.data);
    expect((await client.list('/sandbox/v1/hubs')).data).toEqual([before.hub.data]);
    const collection = await client.data('POST', '/sandbox/v1/transfers', {
      to: before.hub.data.collectionAlias,
      total: 1,
    });
    expect(collection.cvu).toBe(before.hub.data.collectionCvu);
    // And it takes writes: a new payment on hub 1 and one on a hub of its own.
    expect((await client.post('/api/v1/va-payments', { ...PAYMENT, amount: 3 })).status).toBe(201);
    expect((await client.post('/api/v1/va-payments', { ...PAYMENT, paymentHubId: 77, amount: 3 })).status).toBe(201);
  });
});

describe('an export written by the previous release (format version 1, one hub)', () => {
  it('imports with its hub as hub 1', async () => {
    const server = await useServer();
    const source = api(server.url, 'sk_v1_from');
    await source.patch('/sandbox/v1/hubs/1', { brand: 'ACME' });
    const payment = await source.data('POST', '/api/v1/va-payments', { ...PAYMENT, lockMode: 'amount', amount: 42 });
    const { hubs, ...records } = (await source.data('GET', '/sandbox/v1/export')).account;
    const v1 = {
      format: 'va-sandbox-account',
      version: 1,
      exportedAt: await source.data('GET', '/sandbox/v1/clock').then((c: any) => c.now),
      account: { hub: hubs['1'], ...records },
    };

    const target = api(server.url, 'sk_v1_to');
    expect((await target.post('/sandbox/v1/import', v1)).status).toBe(200);
    expect(await target.data('GET', '/sandbox/v1/hubs/1')).toEqual(hubs['1']);
    const paid = await target.data('POST', '/sandbox/v1/transfers', { to: hubs['1'].collectionAlias, total: 42 });
    expect(paid.target).toEqual({ type: 'va_payment', id: payment.id });
  });
});
