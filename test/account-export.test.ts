import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type Api, api, CLIENT, PAYMENT, runCli, useReceiver, useServer, useTmp } from './helpers.js';

// Retries an hour apart: a retrying delivery stays as it is while a test compares states.
const server = await useServer({ retryDelays: [3600, 3600] });
const tmp = useTmp();
// Everything to /down fails, so the log holds retrying deliveries beside delivered and dropped ones.
const receiver = await useReceiver((request) => ({ status: request.url.startsWith('/down') ? 500 : 200 }));
let keyN = 0;
const account = () => api(server.url, `sk_export_${++keyN}`);

/** An export's records as an import keeps them: its open deliveries `held` (contract part 5), never attempted. */
function asImported(account: any) {
  const held = (d: any) => ({
    ...d,
    status: 'held',
    nextAttemptAt: null,
    reason: 'came with an imported file: sent only when released',
  });
  const deliveries = Object.entries(account.deliveries).map(([id, d]: [string, any]) => [
    id,
    ['pending', 'retrying'].includes(d.status) ? held(d) : d,
  ]);
  return { ...account, deliveries: Object.fromEntries(deliveries) };
}

/** Waits until no callback attempt is due, so the state holds still. */
async function settle(client: Api) {
  for (;;) {
    const { now } = await client.data('GET', '/sandbox/v1/clock');
    const open = (await client.list('/sandbox/v1/deliveries?status=pending,retrying&limit=100')).data;
    if (open.every((d: any) => d.nextAttemptAt > now)) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** An account with something of everything: payments in every state, clients, a ledger, invoices, a moved clock and hub. */
async function populate(client: Api) {
  const callbackUrl = `${receiver.url}/va`;
  const paid = await client.data('POST', '/api/v1/va-payments', {
    ...PAYMENT,
    amount: 5000,
    lockMode: 'amount',
    callbackUrl,
  });
  await client.data('POST', '/sandbox/v1/transfers', { to: paid.cvu, total: 5000, taxes: 30 });
  const cancelled = await client.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 10, callbackUrl });
  await client.data('POST', `/api/v1/va-payments/${cancelled.id}/cancel`);
  await client.data('POST', '/api/v1/va-payments', {
    ...PAYMENT,
    amount: 20,
    ttlSeconds: 60,
    callbackUrl: `${receiver.url}/down`,
  });
  await client.data('POST', '/sandbox/v1/clock/advance', { seconds: 60 });
  const client1 = await client.data('POST', '/api/v1/clients', {
    ...CLIENT,
    name: 'Uno',
    taxId: '20-12345678-3',
    cashinCallbackUrl: `${receiver.url}/cashin`,
  });
  await client.data('POST', '/sandbox/v1/transfers', { to: client1.cvu, total: 100, taxes: 1 });
  await client.data('POST', `/sandbox/v1/clients/${client1.id}/debits`, { amount: 20 });
  await client.data('POST', `/api/v1/clients/${client1.id}/invoices`, { total_amount: 30 });
  await client.data('PATCH', '/sandbox/v1/hubs/1', { cvuProvisioning: 'delayed', brand: 'ACME' });
  const waiting = await client.data('POST', '/api/v1/va-payments', {
    ...PAYMENT,
    amount: 777,
    lockMode: 'amount',
    ttlSeconds: 600,
    callbackUrl,
  });
  const delayed = await client.data('POST', '/api/v1/clients', { ...CLIENT, name: 'Dos', taxId: '27-23456789-4' });
  await client.data('POST', '/api/v1/va-payments', {
    ...PAYMENT,
    amount: 5,
    successUrl: callbackUrl,
    failureUrl: callbackUrl,
  });
  await settle(client);
  return { paid, waiting, client1, delayed };
}

describe('export and import of an account', () => {
  it('export -> reset -> import gives the same state, clock included, and the same answers', async () => {
    const client = account();
    const { paid, client1 } = await populate(client);
    const before = await client.data('GET', '/sandbox/v1/export');
    expect(before).toMatchObject({ format: 'va-sandbox-account', version: 2 });
    expect(Object.keys(before.account.vaPayments)).toHaveLength(5);
    expect(new Set(Object.values(before.account.deliveries).map((d: any) => d.status))).toEqual(
      new Set(['delivered', 'dropped', 'retrying']),
    );
    const payment = await client.data('GET', `/api/v1/va-payments/${paid.id}`);
    const balance = await client.data('GET', `/api/v1/clients/${client1.id}/balance`);

    await client.data('POST', '/sandbox/v1/reset');
    expect(Object.keys((await client.data('GET', '/sandbox/v1/export')).account.vaPayments)).toHaveLength(0);

    const imported = await client.data('POST', '/sandbox/v1/import', before);
    expect(imported.counts).toMatchObject({ vaPayments: 5, clients: 2, transfers: 2 });
    // Every kind counted as the file holds it, and the deliveries as their list counts them (the dropped one too).
    const counted = Object.fromEntries(
      Object.keys(imported.counts).map((name) => [name, Object.keys(before.account[name]).length]),
    );
    expect(imported.counts).toEqual(counted);
    expect(imported.counts.deliveries).toBe((await client.call('GET', '/sandbox/v1/deliveries')).body.pagination.total);
    const after = await client.data('GET', '/sandbox/v1/export');
    expect(after.account).toEqual(asImported(before.account));
    // The clock reads the export's time again (plus the moment the round trip took), not the wall clock.
    expect(after.exportedAt >= before.exportedAt).toBe(true);
    expect(Date.parse(after.exportedAt)).toBeLessThan(Date.parse(before.exportedAt) + 60_000);
    expect(await client.data('GET', `/api/v1/va-payments/${paid.id}`)).toEqual(payment);
    expect(await client.data('GET', `/api/v1/clients/${client1.id}/balance`)).toEqual(balance);
  });

  it('rebuilds what the server keeps in memory: locks, CVUs, due expiries and delayed CVUs work on the imported records', async () => {
    const source = account();
    const { waiting, client1, delayed } = await populate(source);
    const doc = await source.data('GET', '/sandbox/v1/export');
    const target = account();
    await target.data('POST', '/sandbox/v1/import', doc);

    const clash = await target.post('/api/v1/va-payments', { ...PAYMENT, amount: 777, lockMode: 'amount' });
    expect(clash.body.error.code).toBe('AMOUNT_LOCK_CONFLICT');
    const cashIn = await target.data('POST', '/sandbox/v1/transfers', { to: client1.alias, total: 50 });
    expect(cashIn).toMatchObject({ outcome: 'credited', target: { type: 'client', id: client1.id } });
    const taken = await target.post('/api/v1/clients', { ...CLIENT, name: 'Otro', taxId: '20123456783' });
    expect(taken.body.error.code).toBe('TAX_ID_ALREADY_EXISTS');
    await target.data('POST', '/sandbox/v1/clock/advance', { seconds: 600 });
    expect((await target.data('GET', `/api/v1/va-payments/${waiting.id}`)).status).toBe('expired');
    expect((await target.data('GET', `/api/v1/clients/${delayed.id}`)).cvuStatus).toBe('active');
    // The source account is untouched by what happened in the target.
    expect((await source.data('GET', `/api/v1/va-payments/${waiting.id}`)).status).toBe('waiting');
  });

  it('refuses a document that is not a whole, consistent export, naming the fields, and changes nothing', async () => {
    const client = account();
    const { paid } = await populate(client);
    const doc = await client.data('GET', '/sandbox/v1/export');
    const deliveryId = Object.keys(doc.account.deliveries)[0]!;
    const broken = structuredClone(doc);
    broken.account.deliveries[deliveryId].eventId = '00000000-0000-4000-8000-000000000000';
    delete broken.account.hubs;
    broken.account.vaPayments[paid.id].amount = 'lots';

    const refused = await client.post('/sandbox/v1/import', broken);
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe('VALIDATION_ERROR');
    expect(refused.body.error.details).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^account\.hubs: /),
        expect.stringMatching(new RegExp(`^account\\.vaPayments\\.${paid.id}\\.amount: `)),
      ]),
    );
    delete broken.account.vaPayments[paid.id].amount;
    broken.account.hubs = doc.account.hubs;
    broken.account.vaPayments[paid.id].amount = doc.account.vaPayments[paid.id].amount;
    const dangling = await client.post('/sandbox/v1/import', broken);
    expect(dangling.body.error.details).toEqual([
      `account.deliveries.${deliveryId}.eventId: event 00000000-0000-4000-8000-000000000000 is not in the file`,
    ]);
    for (const body of [{}, { ...doc, format: 'other' }, { ...doc, version: 3 }, []]) {
      const response = await client.post('/sandbox/v1/import', body);
      expect(response.status).toBe(400);
      expect(response.body.error.code).toBe('VALIDATION_ERROR');
    }
    expect((await client.post('/sandbox/v1/import', '{"format":')).body.error.code).toBe('INVALID_JSON');
    expect(await client.data('GET', '/sandbox/v1/export')).toMatchObject({ account: doc.account });
  });

  it('checks a document without importing it (?dryRun=1): the same refusal, or what it holds', async () => {
    const source = account();
    await populate(source);
    const doc = await source.data('GET', '/sandbox/v1/export');
    const target = account();
    const refused = await target.post('/sandbox/v1/import?dryRun=1', { ...doc, version: 3 });
    expect(refused.status).toBe(400);
    expect(refused.body.error.details).toEqual(['version: Invalid input: expected 2']);
    const checked = await target.data('POST', '/sandbox/v1/import?dryRun=1', doc);
    const imported = await target.data('POST', '/sandbox/v1/import', doc);
    expect(checked).toEqual({ imported: false, exportedAt: doc.exportedAt, counts: imported.counts });
    expect(checked.counts).toEqual(
      Object.fromEntries(Object.keys(checked.counts).map((name) => [name, Object.keys(doc.account[name]).length])),
    );
    // And a dry run leaves the account as it is.
    const other = account();
    await other.data('POST', '/api/v1/va-payments', { paymentHubId: 1, currency: 'ARS', lockMode: 'time' });
    const before = await other.data('GET', '/sandbox/v1/export');
    await other.data('POST', '/sandbox/v1/import?dryRun=1', doc);
    expect(await other.data('GET', '/sandbox/v1/export')).toMatchObject({ account: before.account });
    expect((await other.post('/sandbox/v1/import?dryRun=maybe', doc)).status).toBe(400);
  });
});

describe('va-sandbox export / import', () => {
  it('hands an account over as a file: export --out, then import into another account', async () => {
    const source = account();
    const { paid } = await populate(source);
    const file = join(tmp, 'incident.json');
    const exported = await runCli(['export', '--out', file, '--url', server.url, '--api-key', source.key]);
    expect(exported.stderr).toBe('');
    expect(exported.code).toBe(0);
    expect(exported.stdout).toMatch(
      /^exported 5 vaPayments, 2 clients, 2 transfers, \d+ events, \d+ deliveries \(sandbox time .+\) to .+incident\.json\n$/,
    );
    const doc = JSON.parse(readFileSync(file, 'utf8'));

    const target = account();
    const imported = await runCli(['import', file, '--url', server.url, '--api-key', target.key]);
    expect(imported.code).toBe(0);
    expect(imported.stdout).toMatch(
      /^imported 5 vaPayments, 2 clients, 2 transfers, .+\ncallbacks are held until `va-sandbox deliveries release` \(new ones go to the forwarding URL while one is set\)\n$/,
    );
    expect((await target.data('GET', '/sandbox/v1/export')).account).toEqual(asImported(doc.account));
    expect((await target.data('GET', `/api/v1/va-payments/${paid.id}`)).status).toBe('completed');

    const piped = await runCli(['export', '--url', server.url, '--api-key', target.key]);
    expect(JSON.parse(piped.stdout).account).toEqual(asImported(doc.account));
  });

  it('fails in one line on a file that is not an export', async () => {
    const bad = await runCli(['import', join(tmp, 'missing.json'), '--url', server.url]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^va-sandbox: cannot read .+missing\.json: ENOENT\n$/);
    const invalid = await runCli(['import', '-', '--url', server.url], {}, '{"format": "va-sandbox-account"}');
    expect(invalid.code).toBe(1);
    expect(invalid.stderr.split('\n')).toHaveLength(2);
    expect(invalid.stderr).toMatch(/^va-sandbox: VALIDATION_ERROR: Invalid account export: /);
  });
});

describe('import size', () => {
  it('takes an account export over 1 MiB (an incident is bigger than one request), and no more than it should', async () => {
    const from = account();
    for (let i = 0; i < 600; i++)
      await from.data('POST', '/api/v1/va-payments', {
        ...PAYMENT,
        amount: i + 1,
        metadata: { note: 'x'.repeat(200) },
      });
    const doc = await from.data('GET', '/sandbox/v1/export');
    expect(JSON.stringify(doc).length).toBeGreaterThan(1024 * 1024);
    const to = account();
    expect((await to.post('/sandbox/v1/import', doc)).status).toBe(200);
    expect((await to.list('/api/v1/va-payments?limit=1')).pagination.total).toBe(600);
    // Other requests keep the contract's 1 MiB.
    const big = await to.post('/api/v1/va-payments', { ...PAYMENT, clientName: 'x'.repeat(1024 * 1024) });
    expect(big.status).toBe(413);
  });
});
