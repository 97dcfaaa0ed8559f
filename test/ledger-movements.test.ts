import { describe, expect, it } from 'vitest';
import { type Api, api, CLIENT, useServer } from './helpers.js';

/** Contract parts 3 and 5: the sandbox's ledger movements, allocations, and how each enters the balance summary. */

const server = await useServer();
let keyN = 0;
const account = () => api(server.url, `sk_movements_${++keyN}`);
const createClient = (a: Api) =>
  a.data('POST', '/api/v1/clients', { ...CLIENT, name: 'Ana Pérez', taxId: '20-12345678-6' });
const ledger = (a: Api, client: { id: string }, body: Record<string, unknown>) =>
  a.post(`/sandbox/v1/clients/${client.id}/ledger`, body);
const balance = (a: Api, client: { id: string }) => a.data('GET', `/api/v1/clients/${client.id}/balance`);
const fieldsOf = (response: { body: any }) => response.body.error.details.map((detail: string) => detail.split(':')[0]);

describe('POST /sandbox/v1/clients/{id}/ledger', () => {
  it('records a credit (+), a debit (−) and adjustments of either sign, 201 with the entry; each enters the balance by the spec formula', async () => {
    const a = account();
    const client = await createClient(a);
    await a.data('POST', '/sandbox/v1/transfers', { to: client.cvu, total: 100 });
    const credit = await ledger(a, client, {
      entryType: 'credit',
      amount: 40,
      description: 'Goodwill',
      operationId: 'op-credit-1',
    });
    expect(credit.status).toBe(201);
    expect(credit.body.data).toMatchObject({
      clientId: client.id,
      entryType: 'credit',
      amount: 40,
      description: 'Goodwill',
      operationId: 'op-credit-1',
      sourceType: 'other',
      invoiceId: null,
    });
    // A credit is not cash_in and not negative: in neither total.
    expect(await balance(a, client)).toMatchObject({ totalCashIn: 100, totalCashOut: 0, balance: 100 });
    expect((await ledger(a, client, { entryType: 'debit', amount: 10 })).body.data).toMatchObject({
      entryType: 'debit',
      amount: -10,
      operationId: null,
    });
    expect((await ledger(a, client, { entryType: 'adjustment', amount: -2.5 })).body.data.amount).toBe(-2.5);
    expect((await ledger(a, client, { entryType: 'adjustment', amount: 7 })).body.data.amount).toBe(7);
    expect(await balance(a, client)).toMatchObject({
      totalCashIn: 100,
      totalCashOut: 12.5,
      totalInvoiced: 0,
      balance: 87.5,
    });
    const { transactions } = await a.data('GET', `/api/v1/clients/${client.id}/transactions`);
    expect(transactions.map((e: any) => [e.entryType, e.amount])).toEqual([
      ['adjustment', 7],
      ['adjustment', -2.5],
      ['debit', -10],
      ['credit', 40],
      ['cash_in', 100],
    ]);
  });

  it('a reversal takes back a credited operation whole (a bank returning a transfer): once, of a known operation only', async () => {
    const a = account();
    const client = await createClient(a);
    const transfer = await a.data('POST', '/sandbox/v1/transfers', { to: client.cvu, total: 100, taxes: 0.6 });
    const reversal = await ledger(a, client, { entryType: 'reversal', operationId: transfer.operationId });
    expect(reversal.status).toBe(201);
    expect(reversal.body.data).toMatchObject({
      entryType: 'reversal',
      amount: -99.4,
      operationId: transfer.operationId,
      description: `Reversal of operation ${transfer.operationId}`,
    });
    expect(await balance(a, client)).toMatchObject({ totalCashIn: 99.4, totalCashOut: 99.4, balance: 0 });

    const again = await ledger(a, client, { entryType: 'reversal', operationId: transfer.operationId });
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ code: 'INVALID_STATE', details: ['operationId: reversed already'] });
    const unknown = await ledger(a, client, { entryType: 'reversal', operationId: 'op-nobody' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.details).toEqual(['operationId: must name a cash_in or credit of this client']);
    // A debit's operation is not a credited one; another client's operation is not this one's.
    await ledger(a, client, { entryType: 'debit', amount: 1, operationId: 'op-debit' });
    expect((await ledger(a, client, { entryType: 'reversal', operationId: 'op-debit' })).status).toBe(400);
    const other = await a.data('POST', '/api/v1/clients', { ...CLIENT, name: 'Bea', taxId: '27-12345678-0' });
    const theirs = await a.data('POST', '/sandbox/v1/transfers', { to: other.cvu, total: 5 });
    expect((await ledger(a, client, { entryType: 'reversal', operationId: theirs.operationId })).status).toBe(400);
    // A named credit can be reversed; an amount given must be the operation's.
    await ledger(a, client, { entryType: 'credit', amount: 3, operationId: 'op-credit' });
    const wrong = await ledger(a, client, { entryType: 'reversal', operationId: 'op-credit', amount: 2 });
    expect(wrong.body.error.details).toEqual(['amount: must be 3.00, the amount of operation op-credit (or left out)']);
    expect(
      (await ledger(a, client, { entryType: 'reversal', operationId: 'op-credit', amount: 3 })).body.data.amount,
    ).toBe(-3);
  });

  it('refuses what is malformed, naming each field: the entry type, amounts, a reused operationId, unknown fields', async () => {
    const a = account();
    const client = await createClient(a);
    expect(fieldsOf(await ledger(a, client, { entryType: 'cash_in', amount: 5 }))).toEqual(['entryType']);
    expect(fieldsOf(await ledger(a, client, { amount: 5 }))).toEqual(['entryType']);
    expect(fieldsOf(await ledger(a, client, { entryType: 'credit', amount: -5, extra: 1 })).sort()).toEqual([
      'amount',
      'extra',
    ]);
    expect(fieldsOf(await ledger(a, client, { entryType: 'debit', amount: 1.001 }))).toEqual(['amount']);
    expect(fieldsOf(await ledger(a, client, { entryType: 'adjustment', amount: 0 }))).toEqual(['amount']);
    expect(fieldsOf(await ledger(a, client, { entryType: 'reversal' }))).toEqual(['operationId']);
    await ledger(a, client, { entryType: 'credit', amount: 5, operationId: 'op-1' });
    const reused = await ledger(a, client, { entryType: 'debit', amount: 5, operationId: 'op-1' });
    expect(reused.status).toBe(400);
    expect(reused.body.error.details).toEqual(['operationId: already names another entry of this client']);
    expect((await a.post('/sandbox/v1/clients/nope/ledger', { entryType: 'credit', amount: 1 })).status).toBe(404);
  });
});

describe('POST /sandbox/v1/clients/{id}/invoices/{invoiceId}/allocations', () => {
  it('applies cash to an invoice: an invoice_allocation entry, the invoice partial then paid; the balance summary does not move', async () => {
    const a = account();
    const client = await createClient(a);
    await a.data('POST', '/sandbox/v1/transfers', { to: client.cvu, total: 150 });
    const invoice = await a.data('POST', `/api/v1/clients/${client.id}/invoices`, { totalAmount: 100 });
    const path = `/sandbox/v1/clients/${client.id}/invoices/${invoice.id}/allocations`;
    const before = await balance(a, client);
    const first = await a.post(path, { amount: 60 });
    expect(first.status).toBe(201);
    expect(first.body.data).toMatchObject({
      entryType: 'invoice_allocation',
      amount: 60,
      invoiceId: invoice.id,
      description: 'Allocated to invoice 0001-00000001',
    });
    expect((await a.data('GET', `/api/v1/clients/${client.id}/invoices/${invoice.id}`)).paymentStatus).toBe('partial');
    await a.data('POST', path, { amount: 40 });
    expect((await a.data('GET', `/api/v1/clients/${client.id}/invoices/${invoice.id}`)).paymentStatus).toBe('paid');
    expect(await balance(a, client)).toEqual(before);
    const { transactions } = await a.data(
      'GET',
      `/api/v1/clients/${client.id}/transactions?entryType=invoice_allocation`,
    );
    expect(transactions.map((e: any) => e.amount)).toEqual([40, 60]);
  });

  it('refuses more than the invoice owes, more than the cash not yet allocated, a paid or cancelled invoice', async () => {
    const a = account();
    const client = await createClient(a);
    await a.data('POST', '/sandbox/v1/transfers', { to: client.cvu, total: 50 });
    await a.data('POST', `/sandbox/v1/clients/${client.id}/ledger`, { entryType: 'debit', amount: 10 });
    const big = await a.data('POST', `/api/v1/clients/${client.id}/invoices`, { totalAmount: 100 });
    const small = await a.data('POST', `/api/v1/clients/${client.id}/invoices`, { totalAmount: 5 });
    const allocate = (invoice: { id: string }, amount: number) =>
      a.post(`/sandbox/v1/clients/${client.id}/invoices/${invoice.id}/allocations`, { amount });
    const tooMuchCash = await allocate(big, 40.01);
    expect(tooMuchCash.status).toBe(409);
    expect(tooMuchCash.body.error).toMatchObject({
      code: 'INVALID_STATE',
      details: ['amount: must be at most 40.00, the cash in (less cash out) not yet allocated'],
    });
    const overDue = await allocate(small, 6);
    expect(overDue.body.error.details).toEqual(['amount: must be at most 5.00, what the invoice still owes']);
    expect((await allocate(small, 5)).status).toBe(201);
    expect((await allocate(small, 1)).body.error).toMatchObject({
      code: 'INVALID_STATE',
      details: ['paymentStatus: paid'],
    });
    expect((await allocate(big, 35)).status).toBe(201);
    expect((await allocate(big, 0.01)).body.error.details).toEqual([
      'amount: must be at most 0.00, the cash in (less cash out) not yet allocated',
    ]);
    await a.data('PATCH', `/api/v1/clients/${client.id}/invoices/${big.id}`, { paymentStatus: 'cancelled' });
    expect((await allocate(big, 1)).body.error.details).toEqual(['paymentStatus: cancelled']);
    // A total cannot drop below what allocations covered.
    const third = await a.data('POST', `/api/v1/clients/${client.id}/invoices`, { totalAmount: 5 });
    await a.data('POST', '/sandbox/v1/transfers', { to: client.cvu, total: 3 });
    await allocate(third, 3);
    const lower = await a.patch(`/api/v1/clients/${client.id}/invoices/${third.id}`, { totalAmount: 2 });
    expect(lower.body.error.details).toEqual(['totalAmount: must be at least 3.00, what allocations already covered']);
    expect(
      (await a.data('PATCH', `/api/v1/clients/${client.id}/invoices/${third.id}`, { totalAmount: 3 })).paymentStatus,
    ).toBe('paid');
    expect(fieldsOf(await allocate(third, 0))).toEqual(['amount']);
  });
});
