import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { api, useServer, type Api } from './helpers.js';

/**
 * Issue 15 item 10: an import is the largest request there is (up to 512 MiB, held and parsed whole), so a server
 * runs one at a time and refuses another meanwhile with 429; and an import is validated as strictly as the API
 * validates requests: amounts, whole cents, totals that agree with their cash-ins, statuses that agree with totals.
 */
const server = await useServer();
let keyN = 0;
const account = () => api(server.url, `sk_import_${++keyN}`);

const hub = { paymentHubId: 1 };
const payment = (amount: number, lockMode = 'amount') => ({ ...hub, currency: 'ARS', lockMode, amount });

/** An account with paid, underpaid and waiting payments, transfers, a client ledger (cash-in, debit) and an invoice. */
async function populated(): Promise<{ client: Api; doc: any }> {
  const client = account();
  const paid = await client.data('POST', '/api/v1/va-payments', payment(50));
  await client.data('POST', '/sandbox/v1/transfers', { to: paid.cvu, total: 50, taxes: 1.5 });
  const partly = await client.data('POST', '/api/v1/va-payments', payment(80, 'time'));
  await client.data('POST', '/sandbox/v1/transfers', { to: partly.cvu, total: 30 });
  await client.data('POST', '/api/v1/va-payments', payment(99));
  const owner = await client.data('POST', '/api/v1/clients', { ...hub, name: 'Ledger SA', taxId: '20-30405060-7' });
  await client.data('POST', '/sandbox/v1/transfers', { to: owner.cvu, total: 100, taxes: 2 });
  await client.data('POST', `/sandbox/v1/clients/${owner.id}/debits`, { amount: 20 });
  await client.data('POST', `/api/v1/clients/${owner.id}/invoices`, { total_amount: 30 });
  return { client, doc: await client.data('GET', '/sandbox/v1/export') };
}

/** An invoice as release 0.1 exported it. */
const legacyInvoice = (invoice: any) => ({
  id: invoice.id,
  clientId: invoice.clientId,
  total_amount: invoice.totalAmount,
  currency: 'ARS',
  description: 'March',
  dueDate: '2026-03-31',
  status: 'paid',
  externalReference: null,
  createdAt: invoice.createdAt,
  updatedAt: invoice.updatedAt,
});

const find = (table: Record<string, any>, test: (record: any) => boolean): [string, any] => Object.entries(table).find(([, r]) => test(r))!;

describe('POST /sandbox/v1/import: validated as strictly as requests', () => {
  it('refuses amounts, cents and totals the API would never produce, naming each field; the account stays as it was', async () => {
    const { doc } = await populated();
    const target = account();
    await target.data('POST', '/api/v1/va-payments', payment(12));
    const before = await target.data('GET', '/sandbox/v1/export');

    const { vaPayments, transfers, entries, invoices } = doc.account;
    const [paidId] = find(vaPayments, (p) => p.status === 'completed');
    const [partlyId] = find(vaPayments, (p) => p.status === 'underpaid');
    const [waitingId] = find(vaPayments, (p) => p.status === 'waiting');
    const [transferId] = Object.entries(transfers)[0]!;
    const [debitId] = find(entries, (e) => e.entryType === 'debit');
    const [cashInId] = find(entries, (e) => e.entryType === 'cash_in');
    const [invoiceId] = Object.entries(invoices)[0]!;

    const cases: [string, (account: any) => void, string][] = [
      ['a negative amount', (a) => (a.vaPayments[waitingId].amount = -9900), `account.vaPayments.${waitingId}.amount: must be greater than 0`],
      ['cents that are not whole', (a) => (a.vaPayments[waitingId].amount = 9900.5), `account.vaPayments.${waitingId}.amount: must be whole cents`],
      [
        'totalReceived that is not the sum of the cash-ins',
        (a) => (a.vaPayments[partlyId].totalReceived = 8000),
        `account.vaPayments.${partlyId}.totalReceived: must equal the sum of cashIns' total (30.00)`,
      ],
      [
        'receivedAmount that is not the sum of the net amounts',
        (a) => (a.vaPayments[paidId].receivedAmount = 5000),
        `account.vaPayments.${paidId}.receivedAmount: must equal the sum of cashIns' incomingAmount (48.50)`,
      ],
      [
        'a cash-in whose net is not total - taxes',
        (a) => (a.vaPayments[paidId].cashIns[0].incomingAmount = 5000),
        `account.vaPayments.${paidId}.cashIns.0.incomingAmount: must equal total - taxes`,
      ],
      ['a negative tax', (a) => (a.vaPayments[paidId].cashIns[0].taxes = -150), `account.vaPayments.${paidId}.cashIns.0.taxes: must be 0 or more`],
      [
        'a status the totals do not give',
        (a) => (a.vaPayments[waitingId].status = 'completed'),
        `account.vaPayments.${waitingId}.status: completed does not agree with 0.00 received of 99.00`,
      ],
      ['a transfer taxed at its whole total', (a) => (a.transfers[transferId].taxes = a.transfers[transferId].total), `account.transfers.${transferId}.taxes: must be less than total`],
      ['a negative transfer', (a) => (a.transfers[transferId].total = -1), `account.transfers.${transferId}.total: must be greater than 0`],
      ['a debit that adds', (a) => (a.entries[debitId].amount = 2000), `account.entries.${debitId}.amount: a debit entry must be negative`],
      ['a cash-in that takes', (a) => (a.entries[cashInId].amount = -9800), `account.entries.${cashInId}.amount: a cash_in entry must be positive`],
      ['a negative invoice', (a) => (a.invoices[invoiceId].totalAmount = -3000), `account.invoices.${invoiceId}.totalAmount: must be greater than 0`],
      ['an invoice of 0.1 with a bad status', (a) => (a.invoices[invoiceId] = { ...legacyInvoice(a.invoices[invoiceId]), status: 'void' }), `account.invoices.${invoiceId}.status:`],
    ];
    for (const [what, tamper, detail] of cases) {
      const bad = structuredClone(doc);
      tamper(bad.account);
      const answer = await target.post('/sandbox/v1/import', bad);
      expect(answer.status, what).toBe(400);
      expect(answer.body.error.code, what).toBe('VALIDATION_ERROR');
      expect(answer.body.error.details.some((d: string) => d.startsWith(detail)), `${what}: ${JSON.stringify(answer.body.error.details)}`).toBe(true);
    }
    expect((await target.data('GET', '/sandbox/v1/export')).account).toEqual(before.account);
    // The file as exported is taken.
    expect((await target.post('/sandbox/v1/import', doc)).status).toBe(200);
    expect((await target.data('GET', '/sandbox/v1/export')).account).toEqual(doc.account);
  });

  it('takes an invoice as release 0.1 exported it, and reads it as today\'s: numbered, paid in full, its texts kept', async () => {
    const { doc } = await populated();
    const [invoiceId, invoice] = Object.entries(doc.account.invoices as Record<string, any>)[0]!;
    const old = structuredClone(doc);
    old.account.invoices[invoiceId] = legacyInvoice(invoice);
    const target = account();
    expect((await target.post('/sandbox/v1/import', old)).status).toBe(200);
    const imported = await target.data('GET', `/api/v1/clients/${invoice.clientId}/invoices/${invoiceId}`);
    expect(imported).toMatchObject({ invoiceNumber: '0001-00000001', totalAmount: 30, paymentStatus: 'paid', observations: 'March', dueAt: '2026-03-31T00:00:00.000Z', buyerName: 'Ledger SA' });
    const refused = await target.post(`/sandbox/v1/clients/${invoice.clientId}/invoices/${invoiceId}/allocations`, { amount: 1 });
    expect(refused.body.error.details).toEqual(['paymentStatus: paid']);
  });
});

/** Starts an import over a raw connection and sends all of its body but the last `held` bytes; `finish` sends them. */
function slowImport(baseUrl: string, key: string, body: string, held: number) {
  const { port } = new URL(baseUrl);
  const bytes = Buffer.from(body);
  let done!: (answer: { status: number; body: any }) => void;
  const answered = new Promise<{ status: number; body: any }>((resolve) => (done = resolve));
  const req = request(
    {
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/sandbox/v1/import',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': bytes.length },
    },
    (res) => {
      let raw = '';
      res.on('data', (chunk) => (raw += chunk));
      res.on('end', () => done({ status: res.statusCode!, body: JSON.parse(raw) }));
    },
  );
  req.write(bytes.subarray(0, bytes.length - held));
  return { answered, finish: () => req.end(bytes.subarray(bytes.length - held)) };
}

describe('POST /sandbox/v1/import: one at a time per server', () => {
  it('a second import while one is in progress is 429 RATE_LIMIT_EXCEEDED with Retry-After; the next one after it is taken', async () => {
    const { doc } = await populated();
    const first = slowImport(server.url, 'sk_import_slow', JSON.stringify(doc) + ' '.repeat(256 * 1024), 1024);
    // Until the server has begun reading the first body, the second might come first: wait for a refusal.
    let second = await account().post('/sandbox/v1/import', doc);
    for (let tries = 0; second.status === 200 && tries < 50; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      second = await account().post('/sandbox/v1/import', doc);
    }
    expect(second.status).toBe(429);
    expect(second.headers.get('retry-after')).toBe('1');
    expect(second.body.error).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED', details: ['(request): another import is in progress'] });
    // Other requests, even other accounts' writes, go on meanwhile.
    expect((await account().post('/api/v1/va-payments', payment(1))).status).toBe(201);

    first.finish();
    expect((await first.answered).status).toBe(200);
    const third = account();
    expect((await third.post('/sandbox/v1/import', doc)).status).toBe(200);
    expect((await third.data('GET', '/sandbox/v1/export')).account).toEqual(doc.account);
  });
});
