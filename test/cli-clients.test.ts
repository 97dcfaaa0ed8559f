import { describe, expect, it } from 'vitest';
import { keyValues, useCliSandbox, useReceiver, CLIENT } from './helpers.js';

const { account } = await useCliSandbox('sk_cli_clients');

describe('clients create, get, list, update', () => {
  it('create --json: every option lands in its contract field, with an active CVU and alias', async () => {
    const { api, json } = account();
    const client = await json([
        'clients', 'create',
        '--name', 'Ana Pérez', '--tax-id', '20-12345678-6', '--cashin-callback-url', 'https://shop.test/cashin',
        '--email', 'ana@shop.test', '--email', 'billing@shop.test', '--phone', '+54 11 5555-0000',
        '--alias-prefix-hint', 'ANA', '--alias-suffix-hint', 'SHOP', '--external-reference', 'cust-1',
        '--metadata', 'tier=gold', '--hub', '1',
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
    const client = await api.data('POST', '/api/v1/clients', { ...CLIENT, name: 'Bruno', taxId: '20-11111111-1', cashinCallbackUrl: 'https://shop.test/c' });
    const run = await cli(['clients', 'get', client.id]);
    expect(keyValues(run.stdout)).toMatchObject({
      id: client.id,
      name: 'Bruno',
      taxId: '20-11111111-1',
      cvuStatus: 'active',
      cvu: client.cvu,
      alias: client.alias,
      cashinCallbackUrl: 'https://shop.test/c',
      hub: '1 (Sandbox Hub 1)',
    });
  });

  it('list --json with filters; human mode a table and the page line', async () => {
    const { cli, api, json } = account();
    const ana = await api.data('POST', '/api/v1/clients', { ...CLIENT, name: 'Ana', taxId: '20-1', externalReference: 'x' });
    const bea = await api.data('POST', '/api/v1/clients', { ...CLIENT, name: 'Bea', taxId: '27-2' });
    const all = await json(['clients', 'list']);
    expect(all.data.map((c: { id: string }) => c.id)).toEqual([bea.id, ana.id]);
    expect(all.pagination).toEqual({ page: 1, limit: 20, total: 2, totalPages: 1 });
    expect((await json(['clients', 'list', '--tax-id', '27-2'])).data.map((c: { id: string }) => c.id)).toEqual([bea.id]);
    expect((await json(['clients', 'list', '--external-reference', 'x'])).data.map((c: { id: string }) => c.id)).toEqual([ana.id]);

    const [header, first, , footer] = (await cli(['clients', 'list'])).stdout.trimEnd().split('\n');
    expect(header).toMatch(/^id\s+name\s+taxId\s+cvuStatus\s+cvu\s+alias\s+createdAt$/);
    expect(first).toMatch(new RegExp(`^${bea.id}\\s+Bea\\s+27-2\\s+active\\s+${bea.cvu}\\s+${bea.alias.replaceAll('.', '\\.')}\\s`));
    expect(footer).toBe('page 1 of 1 · 2 clients');
  });

  it('update changes only the fields given; --no-cashin-callback-url removes the callback URL', async () => {
    const { api, json } = account();
    const client = await api.data('POST', '/api/v1/clients', { ...CLIENT, name: 'Ana', taxId: '20-1', cashinCallbackUrl: 'https://shop.test/c', emails: ['a@shop.test'] });
    const renamed = await json(['clients', 'update', client.id, '--name', 'Ana María', '--phone', '1155']);
    expect(renamed).toMatchObject({ name: 'Ana María', phones: ['1155'], emails: ['a@shop.test'], cashinCallbackUrl: 'https://shop.test/c', taxId: '20-1' });
    const removed = await json(['clients', 'update', client.id, '--no-cashin-callback-url']);
    expect(removed).toMatchObject({ name: 'Ana María', cashinCallbackUrl: null });
  });
});

describe('clients balance and transactions', () => {
  it('a transfer to the client CVU is a cash_in; invoices count in the balance; the cash-in callback reaches its URL', async () => {
    const { cli, api, json } = account();
    const target = await useReceiver();
    const client = await api.data('POST', '/api/v1/clients', { ...CLIENT, name: 'Ana', taxId: '20-1', cashinCallbackUrl: `${target.url}/cashin` });
    const transfer = await json(['transfer', '--to', client.alias, '--amount', '5000', '--taxes', '30']);
    expect(transfer).toMatchObject({ outcome: 'credited', target: { type: 'client', id: client.id } });
    await json(['invoices', 'create', client.id, '--total-amount', '1200.50']);

    const balance = await json(['clients', 'balance', client.id]);
    expect(balance).toEqual({ clientId: client.id, currency: 'ARS', totalCashIn: 4970, totalCashOut: 0, totalInvoiced: 1200.5, balance: 3769.5 });
    expect(keyValues((await cli(['clients', 'balance', client.id])).stdout)).toEqual({
      clientId: client.id,
      totalCashIn: 'ARS 4970.00',
      totalCashOut: 'ARS 0.00',
      totalInvoiced: 'ARS 1200.50',
      balance: 'ARS 3769.50',
    });

    const { transactions, pagination } = await json(['clients', 'transactions', client.id, '--entry-type', 'cash_in']);
    expect(pagination.total).toBe(1);
    expect(transactions[0]).toMatchObject({ clientId: client.id, entryType: 'cash_in', amount: 4970, operationId: transfer.operationId });
    const [header, row] = (await cli(['clients', 'transactions', client.id])).stdout.split('\n');
    expect(header).toMatch(/^createdAt\s+entryType\s+amount\s+description\s+paymentId\s+operationId$/);
    expect(row).toMatch(new RegExp(`cash_in\\s+ARS 4970\\.00\\s.*${transfer.operationId}$`));

    const [callback] = await target.waitFor(1);
    expect(callback!.headers['x-service-event-type']).toBe('client.cashin');
    expect(callback!.body).toMatchObject({ clientId: client.id, amount: 4970, total: 5000, taxes: 30 });
  });
});

describe('invoices create, update, list', () => {
  it('create --json, update --status paid, list newest first; human mode shows total_amount in ARS', async () => {
    const { cli, api, json } = account();
    const client = await api.data('POST', '/api/v1/clients', { ...CLIENT, name: 'Ana', taxId: '20-1' });
    const invoice = await json(['invoices', 'create', client.id, '--total-amount', '12000', '--description', 'March fee', '--due-date', '2026-03-31', '--external-reference', 'F-1']);
    expect(invoice).toMatchObject({ clientId: client.id, total_amount: 12000, currency: 'ARS', description: 'March fee', dueDate: '2026-03-31', status: 'issued', externalReference: 'F-1' });
    const paid = await json(['invoices', 'update', client.id, invoice.id, '--status', 'paid']);
    expect(paid).toMatchObject({ id: invoice.id, status: 'paid', total_amount: 12000, description: 'March fee' });
    const second = await json(['invoices', 'create', client.id, '--total-amount', '1']);
    const { data: invoices, pagination } = await json(['invoices', 'list', client.id]);
    expect(invoices.map((i: { id: string }) => i.id)).toEqual([second.id, invoice.id]);
    expect(pagination.total).toBe(2);

    const human = await cli(['invoices', 'update', client.id, second.id, '--total-amount', '99.5']);
    expect(keyValues(human.stdout)).toMatchObject({ id: second.id, status: 'issued', total_amount: 'ARS 99.50' });
    const [header, row] = (await cli(['invoices', 'list', client.id])).stdout.split('\n');
    expect(header).toMatch(/^id\s+status\s+total_amount\s+dueDate\s+description\s+createdAt$/);
    expect(row).toMatch(new RegExp(`^${second.id}\\s+issued\\s+ARS 99\\.50\\s`));
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
    expect(email.stderr).toMatch(/^va-sandbox: VALIDATION_ERROR: .*emails\.0: must be an email address\n$/);
    const unknown = await cli(['clients', 'balance', '00000000-0000-4000-8000-000000000000']);
    expect(unknown).toMatchObject({ code: 1, stderr: 'va-sandbox: NOT_FOUND: Client 00000000-0000-4000-8000-000000000000 not found\n' });

    const usage: [string[], string][] = [
      [['clients', 'create', '--tax-id', '20-9'], "va-sandbox: required option '--name <name>' not specified (see va-sandbox clients create --help)\n"],
      [['clients', 'update', '00000000-0000-4000-8000-000000000000'], 'va-sandbox: nothing to update: give at least one option (see va-sandbox clients update --help)\n'],
      [['invoices', 'create', '00000000-0000-4000-8000-000000000000'], "va-sandbox: required option '--total-amount <ars>' not specified (see va-sandbox invoices create --help)\n"],
      [['invoices', 'update', '00000000-0000-4000-8000-000000000000'], "va-sandbox: missing required argument 'invoice-id' (see va-sandbox invoices update --help)\n"],
    ];
    for (const [args, stderr] of usage) expect(await cli(args)).toEqual({ code: 2, stdout: '', stderr });
    const status = await cli(['invoices', 'update', 'a', 'b', '--status', 'overdue']);
    expect(status.code).toBe(2);
    expect(status.stderr).toMatch(/Allowed choices are issued, paid, cancelled/);
  });
});
