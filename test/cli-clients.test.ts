import { describe, expect, it } from 'vitest';
import { CLIENT, keyValues, useCliSandbox, useReceiver } from './helpers.js';

const { account } = await useCliSandbox('sk_cli_clients');

describe('clients create, get, list, update', () => {
  it('create --json: every option lands in its contract field, with an active CVU and alias', async () => {
    const { api, json } = account();
    const client = await json([
      'clients',
      'create',
      '--name',
      'Ana Pérez',
      '--tax-id',
      '20-12345678-6',
      '--cashin-callback-url',
      'https://shop.test/cashin',
      '--email',
      'ana@shop.test',
      '--email',
      'billing@shop.test',
      '--phone',
      '+54 11 5555-0000',
      '--alias-prefix-hint',
      'ANA',
      '--alias-suffix-hint',
      'SHOP',
      '--external-reference',
      'cust-1',
      '--metadata',
      'tier=gold',
      '--hub',
      '1',
    ]);
    expect(client).toMatchObject({
      name: 'Ana Pérez',
      taxId: '20-12345678-6',
      cashinCallbackUrl: 'https://shop.test/cashin',
      emails: ['ana@shop.test', 'billing@shop.test'],
      phones: ['+54 11 5555-0000'],
      aliasPrefixHint: 'ANA',
      aliasSuffixHint: 'SHOP',
      externalReference: 'cust-1',
      metadata: { tier: 'gold' },
      paymentHubId: 1,
      cvuStatus: 'active',
    });
    expect(client.cvu).toMatch(/^\d{22}$/);
    expect(client.alias).toEqual(expect.any(String));
    expect(await json(['clients', 'get', client.id])).toEqual(await api.data('GET', `/api/v1/clients/${client.id}`));
  });

  it('get in human mode: a key/value block with the CVU, its status and the callback URL', async () => {
    const { cli, api } = account();
    const client = await api.data('POST', '/api/v1/clients', {
      ...CLIENT,
      name: 'Bruno',
      taxId: '20-11111111-1',
      cashinCallbackUrl: 'https://shop.test/c',
    });
    const run = await cli(['clients', 'get', client.id]);
    expect(keyValues(run.stdout)).toMatchObject({
      id: client.id,
      name: 'Bruno',
      taxId: '20-11111111-1',
      cvuStatus: 'active',
      cvu: client.cvu,
      alias: client.alias,
      cashinCallbackUrl: 'https://shop.test/c',
      paymentHubId: '1 (Sandbox Hub 1)',
    });
  });

  it('list --json with filters; human mode a table and the page line', async () => {
    const { cli, api, json } = account();
    const ana = await api.data('POST', '/api/v1/clients', {
      ...CLIENT,
      name: 'Ana',
      taxId: '20-1',
      externalReference: 'x',
    });
    const bea = await api.data('POST', '/api/v1/clients', { ...CLIENT, name: 'Bea', taxId: '27-2' });
    const all = await json(['clients', 'list']);
    expect(all.data.map((c: { id: string }) => c.id)).toEqual([bea.id, ana.id]);
    expect(all.pagination).toEqual({ page: 1, limit: 20, total: 2, totalPages: 1 });
    expect((await json(['clients', 'list', '--tax-id', '27-2'])).data.map((c: { id: string }) => c.id)).toEqual([
      bea.id,
    ]);
    expect(
      (await json(['clients', 'list', '--external-reference', 'x'])).data.map((c: { id: string }) => c.id),
    ).toEqual([ana.id]);

    const [header, first, , footer] = (await cli(['clients', 'list'])).stdout.trimEnd().split('\n');
    expect(header).toMatch(/^id\s+name\s+taxId\s+cvuStatus\s+cvu\s+alias\s+createdAt$/);
    expect(first).toMatch(
      new RegExp(`^${bea.id}\\s+Bea\\s+27-2\\s+active\\s+${bea.cvu}\\s+${bea.alias.replaceAll('.', '\\.')}\\s`),
    );
    expect(footer).toBe('page 1 of 1 · 2 clients');
  });

  it('update changes only the fields given; --no-cashin-callback-url removes the callback URL', async () => {
    const { api, json } = account();
    const client = await api.data('POST', '/api/v1/clients', {
      ...CLIENT,
      name: 'Ana',
      taxId: '20-1',
      cashinCallbackUrl: 'https://shop.test/c',
      emails: ['a@shop.test'],
    });
    const renamed = await json(['clients', 'update', client.id, '--name', 'Ana María', '--phone', '1155']);
    expect(renamed).toMatchObject({
      name: 'Ana María',
      phones: ['1155'],
      emails: ['a@shop.test'],
      cashinCallbackUrl: 'https://shop.test/c',
      taxId: '20-1',
    });
    const removed = await json(['clients', 'update', client.id, '--no-cashin-callback-url']);
    expect(removed).toMatchObject({ name: 'Ana María', cashinCallbackUrl: null });
  });
});

describe('clients balance and transactions', () => {
  it('a transfer to the client CVU is a cash_in; invoices count in the balance; the cash-in callback reaches its URL', async () => {
    const { cli, api, json } = account();
    const target = await useReceiver();
    const client = await api.data('POST', '/api/v1/clients', {
      ...CLIENT,
      name: 'Ana',
      taxId: '20-1',
      cashinCallbackUrl: `${target.url}/cashin`,
    });
    const transfer = await json(['transfer', '--to', client.alias, '--amount', '5000', '--taxes', '30']);
    expect(transfer).toMatchObject({ outcome: 'credited', target: { type: 'client', id: client.id } });
    await json(['invoices', 'create', client.id, '--total-amount', '1200.50']);

    const balance = await json(['clients', 'balance', client.id]);
    expect(balance).toEqual({
      clientId: client.id,
      currency: 'ARS',
      totalCashIn: 4970,
      totalCashOut: 0,
      totalInvoiced: 1200.5,
      balance: 3769.5,
    });
    expect(keyValues((await cli(['clients', 'balance', client.id])).stdout)).toEqual({
      clientId: client.id,
      totalCashIn: 'ARS 4970.00',
      totalCashOut: 'ARS 0.00',
      totalInvoiced: 'ARS 1200.50',
      balance: 'ARS 3769.50',
    });

    const { transactions, pagination } = await json(['clients', 'transactions', client.id, '--entry-type', 'cash_in']);
    expect(pagination.total).toBe(1);
    expect(transactions[0]).toMatchObject({
      clientId: client.id,
      entryType: 'cash_in',
      amount: 4970,
      operationId: transfer.operationId,
    });
    const [header, row] = (await cli(['clients', 'transactions', client.id])).stdout.split('\n');
    expect(header).toMatch(/^createdAt\s+entryType\s+amount\s+description\s+paymentId\s+operationId$/);
    expect(row).toMatch(new RegExp(`cash_in\\s+ARS 4970\\.00\\s.*${transfer.operationId}$`));

    const [callback] = await target.waitFor(1);
    expect(callback!.headers['x-service-event-type']).toBe('client.cashin');
    expect(callback!.body).toMatchObject({ clientId: client.id, amount: 4970, total: 5000, taxes: 30 });
  });
});

describe('invoices create, update, get, list, allocate', () => {
  it('create --json with each field an option of its name, update, cancel, get, list newest first; human mode in ARS', async () => {
    const { cli, api, json } = account();
    const client = await api.data('POST', '/api/v1/clients', { ...CLIENT, name: 'Ana', taxId: '20-1' });
    const invoice = await json([
      'invoices',
      'create',
      client.id,
      '--total-amount',
      '12100',
      '--subtotal-net',
      '10000',
      '--vat-amount',
      '2100',
      '--invoice-type',
      'A',
      '--seller-name',
      'Shop SA',
      '--issued-at',
      '2026-03-01',
      '--due-at',
      '2026-03-31',
      '--observations',
      'March fee',
      '--payment-terms',
      '30 days',
    ]);
    expect(invoice).toMatchObject({
      clientId: client.id,
      invoiceNumber: '0001-00000001',
      invoiceType: 'A',
      totalAmount: 12100,
      total_amount: 12100,
      subtotalNet: 10000,
      vatAmount: 2100,
      sellerName: 'Shop SA',
      buyerName: 'Ana',
      buyerTaxId: '20-1',
      dueAt: '2026-03-31T00:00:00.000Z',
      paymentStatus: 'pending',
      observations: 'March fee',
      paymentTerms: '30 days',
    });
    const second = await json(['invoices', 'create', client.id, '--total-amount', '1']);
    const { data: invoices, pagination } = await json(['invoices', 'list', client.id]);
    expect(invoices.map((i: { id: string }) => i.id)).toEqual([second.id, invoice.id]);
    expect(pagination.total).toBe(2);
    expect(await json(['invoices', 'get', client.id, invoice.id])).toEqual(invoice);

    const human = await cli(['invoices', 'update', client.id, second.id, '--total-amount', '99.5']);
    expect(keyValues(human.stdout)).toMatchObject({
      id: second.id,
      paymentStatus: 'pending',
      totalAmount: 'ARS 99.50',
      invoiceNumber: '0001-00000001',
    });
    const [header, row] = (await cli(['invoices', 'list', client.id])).stdout.split('\n');
    expect(header).toMatch(/^id\s+invoiceNumber\s+paymentStatus\s+totalAmount\s+dueAt\s+issuedAt$/);
    expect(row).toMatch(new RegExp(`^${second.id}\\s+B 0001-00000001\\s+pending\\s+ARS 99\\.50\\s`));
    expect((await json(['invoices', 'update', client.id, second.id, '--cancel'])).paymentStatus).toBe('cancelled');
  });

  it('allocate applies cash to an invoice; refusals are one line, exit 1', async () => {
    const { cli, api, json } = account();
    const client = await api.data('POST', '/api/v1/clients', { ...CLIENT, name: 'Bea', taxId: '20-2' });
    await api.data('POST', '/sandbox/v1/transfers', { to: client.cvu, total: 100 });
    const invoice = await api.data('POST', `/api/v1/clients/${client.id}/invoices`, { totalAmount: 80 });
    expect(await json(['invoices', 'allocate', client.id, invoice.id, '--amount', '30'])).toMatchObject({
      entryType: 'invoice_allocation',
      amount: 30,
      invoiceId: invoice.id,
    });
    expect((await api.data('GET', `/api/v1/clients/${client.id}/invoices/${invoice.id}`)).paymentStatus).toBe(
      'partial',
    );
    const tooMuch = await cli(['invoices', 'allocate', client.id, invoice.id, '--amount', '60']);
    expect(tooMuch).toMatchObject({
      code: 1,
      stdout: '',
      stderr: expect.stringMatching(/^va-sandbox: INVALID_STATE: Invoice .+ owes 50\.00 \(--amount\)\n$/),
    });
  });
});

describe('ledger credit, debit, adjust, reverse; clients cvu', () => {
  it('each records its entry, and the balance moves as the formula says', async () => {
    const { cli, api, json } = account();
    const client = await api.data('POST', '/api/v1/clients', { ...CLIENT, name: 'Cid', taxId: '20-3' });
    const transfer = await api.data('POST', '/sandbox/v1/transfers', { to: client.cvu, total: 100 });
    expect(await json(['ledger', 'credit', client.id, '--amount', '5', '--operation-id', 'op-c'])).toMatchObject({
      entryType: 'credit',
      amount: 5,
      operationId: 'op-c',
    });
    expect(await json(['ledger', 'debit', client.id, '--amount', '10', '--description', 'Fee'])).toMatchObject({
      entryType: 'debit',
      amount: -10,
      description: 'Fee',
    });
    expect(await json(['ledger', 'adjust', client.id, '--amount', '-2.5'])).toMatchObject({
      entryType: 'adjustment',
      amount: -2.5,
    });
    const human = await cli(['ledger', 'reverse', client.id, '--operation-id', transfer.operationId]);
    expect(keyValues(human.stdout)).toMatchObject({
      entryType: 'reversal',
      amount: 'ARS -100.00',
      operationId: transfer.operationId,
    });
    expect(await api.data('GET', `/api/v1/clients/${client.id}/balance`)).toMatchObject({
      totalCashIn: 100,
      totalCashOut: 112.5,
      balance: -12.5,
    });
    const again = await cli(['ledger', 'reverse', client.id, '--operation-id', transfer.operationId]);
    expect(again).toMatchObject({
      code: 1,
      stderr: `va-sandbox: INVALID_STATE: Operation ${transfer.operationId} was reversed already (--operation-id)\n`,
    });
    expect((await cli(['ledger', 'debit', client.id, '--amount', '-3'])).code).toBe(2);
    // A refusal whose message does not quote the field still names the flag behind it.
    const taken = await cli(['ledger', 'credit', client.id, '--amount', '1', '--operation-id', 'op-c']);
    expect(taken).toMatchObject({
      code: 1,
      stderr: `va-sandbox: VALIDATION_ERROR: Operation op-c is already in the ledger of client ${client.id} (--operation-id)\n`,
    });
  });

  it("clients cvu moves a manual hub's client from not_provisioned to provisioning to active", async () => {
    const { api, json } = account();
    await api.patch('/sandbox/v1/hubs/1', { cvuProvisioning: 'manual' });
    const client = await api.data('POST', '/api/v1/clients', { ...CLIENT, name: 'Dan', taxId: '20-4' });
    expect(client.cvuStatus).toBe('not_provisioned');
    expect((await json(['clients', 'cvu', client.id, '--status', 'provisioning'])).cvuStatus).toBe('provisioning');
    expect((await json(['clients', 'cvu', client.id, '--status', 'active'])).cvuStatus).toBe('active');
    await api.patch('/sandbox/v1/hubs/1', { cvuProvisioning: 'inline' });
  });
});

describe('errors', () => {
  it('API errors exit 1 with their code; usage errors exit 2', async () => {
    const { cli, api } = account();
    await api.data('POST', '/api/v1/clients', { ...CLIENT, name: 'Ana', taxId: '20-1' });
    const duplicate = await cli(['clients', 'create', '--name', 'Otra', '--tax-id', '20-1']);
    expect(duplicate.code).toBe(1);
    expect(duplicate.stderr).toMatch(/^va-sandbox: TAX_ID_ALREADY_EXISTS: .+\n$/);
    const email = await cli(['clients', 'create', '--name', 'X', '--tax-id', '20-3', '--email', 'not-an-email']);
    expect(email.code).toBe(1);
    expect(email.stderr).toMatch(/^va-sandbox: VALIDATION_ERROR: .*--email: must be an email address\n$/);
    const unknown = await cli(['clients', 'balance', '00000000-0000-4000-8000-000000000000']);
    expect(unknown).toMatchObject({
      code: 1,
      stderr: 'va-sandbox: NOT_FOUND: Client 00000000-0000-4000-8000-000000000000 not found\n',
    });

    const usage: [string[], string][] = [
      [
        ['clients', 'create', '--tax-id', '20-9'],
        "va-sandbox: required option '--name <name>' not specified (see va-sandbox clients create --help)\n",
      ],
      [
        ['clients', 'update', '00000000-0000-4000-8000-000000000000'],
        'va-sandbox: nothing to update: give at least one option (see va-sandbox clients update --help)\n',
      ],
      [
        ['invoices', 'create', '00000000-0000-4000-8000-000000000000'],
        "va-sandbox: required option '--total-amount <ars>' not specified (see va-sandbox invoices create --help)\n",
      ],
      [
        ['invoices', 'update', '00000000-0000-4000-8000-000000000000'],
        "va-sandbox: missing required argument 'invoice-id' (see va-sandbox invoices update --help)\n",
      ],
    ];
    for (const [args, stderr] of usage) expect(await cli(args)).toEqual({ code: 2, stdout: '', stderr });
    const type = await cli(['invoices', 'update', 'a', 'b', '--invoice-type', 'E']);
    expect(type.code).toBe(2);
    expect(type.stderr).toMatch(/Allowed choices are A, B, C/);
  });
});
