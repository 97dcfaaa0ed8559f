import { describe, expect, it } from 'vitest';
import { api, useServer, type Api, PAYMENT, CLIENT } from './helpers.js';

const server = await useServer();
let keyN = 0;
const account = () => api(server.url, `sk_ledger_${++keyN}`);

let taxN = 0;
const createClient = (a: Api, body: Record<string, unknown> = {}) =>
  a.data('POST', '/api/v1/clients', { ...CLIENT, name: 'Ana Pérez', taxId: `20-${String(++taxN).padStart(8, '0')}-1`, ...body });
const transfer = (a: Api, body: Record<string, unknown>) => a.data('POST', '/sandbox/v1/transfers', body);

describe('transfers to a client CVU', () => {
  it('credit a cash_in entry of the net amount, to the CVU or the alias (any case), with target client', async () => {
    const a = account();
    const client = await createClient(a);
    const byCvu = await transfer(a, { to: client.cvu, total: 1000, taxes: 30 });
    expect(byCvu).toMatchObject({ outcome: 'credited', reason: null, target: { type: 'client', id: client.id }, cvu: client.cvu, netAmount: 970 });
    expect(byCvu.eventIds).toHaveLength(1);
    const byAlias = await transfer(a, { to: client.alias.toLowerCase(), total: 5 });
    expect(byAlias).toMatchObject({ outcome: 'credited', cvu: client.cvu, target: { type: 'client', id: client.id } });

    const { transactions, pagination } = await a.data('GET', `/api/v1/clients/${client.id}/transactions`);
    expect(pagination.total).toBe(2);
    expect(transactions[1]).toEqual({
      id: expect.any(String),
      clientId: client.id,
      entryType: 'cash_in',
      amount: 970,
      currency: 'ARS',
      description: expect.any(String),
      operationId: byCvu.operationId,
      paymentId: null,
      invoiceId: null,
      tempLinkId: null,
      sourceType: 'manual_deposit',
      createdAt: byCvu.createdAt,
    });
    expect(transactions[0]).toMatchObject({ amount: 5, operationId: byAlias.operationId });
  });

  it('a transfer credited to a VA payment whose clientId is a registered client lands in its ledger with paymentId', async () => {
    const a = account();
    const client = await createClient(a);
    const payment = await a.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 100, clientId: client.id });
    const credited = await transfer(a, { to: payment.cvu, total: 100, taxes: 1.5 });
    expect(credited.target).toEqual({ type: 'va_payment', id: payment.id });
    const { transactions } = await a.data('GET', `/api/v1/clients/${client.id}/transactions`);
    expect(transactions).toEqual([
      expect.objectContaining({ entryType: 'cash_in', amount: 98.5, paymentId: payment.id, operationId: credited.operationId, sourceType: 'other' }),
    ]);
    expect((await a.data('GET', `/api/v1/clients/${client.id}/balance`)).totalCashIn).toBe(98.5);
    // The VA events cover it: no client.cashin event.
    const { data: events } = await a.list('/sandbox/v1/events');
    expect(events.map((e: { eventType: string }) => e.eventType)).not.toContain('client.cashin');
  });

  it('a VA payment naming an unregistered clientId adds no entry anywhere', async () => {
    const a = account();
    const client = await createClient(a);
    const payment = await a.data('POST', '/api/v1/va-payments', { ...PAYMENT, clientId: '3f1c2b1e-1a2b-4c3d-8e9f-0a1b2c3d4e5f' });
    expect((await transfer(a, { to: payment.cvu, total: 10 })).outcome).toBe('credited');
    expect((await a.data('GET', `/api/v1/clients/${client.id}/transactions`)).pagination.total).toBe(0);
  });
});

describe('GET /api/v1/clients/{id}/balance', () => {
  it('is exact to the cent: cash-ins 0.10 + 0.20, a debit of 0.05, invoices 0.10 + 0.03 give 0.30, 0.05, 0.13, 0.12', async () => {
    const a = account();
    const client = await createClient(a);
    await transfer(a, { to: client.cvu, total: 0.1 });
    await transfer(a, { to: client.cvu, total: 0.2 });
    await a.data('POST', `/sandbox/v1/clients/${client.id}/debits`, { amount: 0.05, description: 'fee' });
    await a.data('POST', `/api/v1/clients/${client.id}/invoices`, { total_amount: 0.1 });
    await a.data('POST', `/api/v1/clients/${client.id}/invoices`, { total_amount: 0.03 });
    expect(await a.data('GET', `/api/v1/clients/${client.id}/balance`)).toEqual({
      clientId: client.id,
      currency: 'ARS',
      totalCashIn: 0.3,
      totalCashOut: 0.05,
      totalInvoiced: 0.13,
      balance: 0.12,
    });
  });

  it('counts every invoice whatever its status, a cancelled one too', async () => {
    const a = account();
    const client = await createClient(a);
    await transfer(a, { to: client.cvu, total: 50 });
    const invoice = await a.data('POST', `/api/v1/clients/${client.id}/invoices`, { total_amount: 20 });
    await a.data('POST', `/api/v1/clients/${client.id}/invoices`, { total_amount: 5, status: 'paid' });
    await a.data('PATCH', `/api/v1/clients/${client.id}/invoices/${invoice.id}`, { status: 'cancelled' });
    expect(await a.data('GET', `/api/v1/clients/${client.id}/balance`)).toMatchObject({ totalInvoiced: 25, balance: 25 });
  });

  it('is a negative balance when debits and invoices exceed the cash-ins, and zero for a new client', async () => {
    const a = account();
    const client = await createClient(a);
    expect(await a.data('GET', `/api/v1/clients/${client.id}/balance`)).toMatchObject({ totalCashIn: 0, totalCashOut: 0, totalInvoiced: 0, balance: 0 });
    await a.data('POST', `/sandbox/v1/clients/${client.id}/debits`, { amount: 7.5 });
    expect((await a.data('GET', `/api/v1/clients/${client.id}/balance`)).balance).toBe(-7.5);
  });

  it('over 1,000 entries, paginated transactions list each once and never change the balance', async () => {
    const a = account();
    const client = await createClient(a);
    let cashIn = 0;
    let cashOut = 0;
    const writes: (() => Promise<unknown>)[] = [];
    for (let i = 0; i < 1000; i++) {
      const cents = (i % 97) + 1;
      if (i % 4 === 3) {
        cashOut += cents;
        writes.push(() => a.data('POST', `/sandbox/v1/clients/${client.id}/debits`, { amount: cents / 100 }));
      } else {
        cashIn += cents;
        writes.push(() => transfer(a, { to: client.cvu, total: cents / 100 }));
      }
    }
    for (let i = 0; i < writes.length; i += 50) await Promise.all(writes.slice(i, i + 50).map((write) => write()));
    await a.data('POST', `/api/v1/clients/${client.id}/invoices`, { total_amount: 1.23 });

    const expected = {
      clientId: client.id,
      currency: 'ARS',
      totalCashIn: cashIn / 100,
      totalCashOut: cashOut / 100,
      totalInvoiced: 1.23,
      balance: (cashIn - cashOut - 123) / 100,
    };
    expect(await a.data('GET', `/api/v1/clients/${client.id}/balance`)).toEqual(expected);

    const seen = new Set<string>();
    let sumCents = 0;
    let previous = Number.POSITIVE_INFINITY;
    for (let page = 1; page <= 10; page++) {
      const { transactions, pagination } = await a.data('GET', `/api/v1/clients/${client.id}/transactions?page=${page}&limit=100`);
      expect(pagination).toEqual({ page, limit: 100, total: 1000, totalPages: 10 });
      for (const entry of transactions) {
        seen.add(entry.id);
        sumCents += Math.round(entry.amount * 100);
        // Newest first.
        expect(Date.parse(entry.createdAt)).toBeLessThanOrEqual(previous);
        previous = Date.parse(entry.createdAt);
      }
      expect(await a.data('GET', `/api/v1/clients/${client.id}/balance?page=${page}&limit=7`)).toEqual(expected);
    }
    expect(seen.size).toBe(1000);
    expect(sumCents).toBe(cashIn - cashOut);
    const small = await a.data('GET', `/api/v1/clients/${client.id}/transactions?page=3&limit=7`);
    expect(small.transactions).toHaveLength(7);
    expect(small.pagination).toEqual({ page: 3, limit: 7, total: 1000, totalPages: 143 });
    expect(await a.data('GET', `/api/v1/clients/${client.id}/balance`)).toEqual(expected);
  });
});

describe('GET /api/v1/clients/{id}/transactions', () => {
  it('filters by entryType (comma-separated) and by from/to (inclusive)', async () => {
    const a = account();
    const client = await createClient(a);
    const first = await transfer(a, { to: client.cvu, total: 1 });
    await a.data('POST', '/sandbox/v1/clock/advance', { seconds: 60 });
    const debit = await a.data('POST', `/sandbox/v1/clients/${client.id}/debits`, { amount: 2 });
    await a.data('POST', '/sandbox/v1/clock/advance', { seconds: 60 });
    const last = await transfer(a, { to: client.cvu, total: 3 });
    const path = `/api/v1/clients/${client.id}/transactions`;

    const amounts = async (query: string) =>
      (await a.data('GET', `${path}?${query}`)).transactions.map((e: { amount: number }) => e.amount);
    expect(await amounts('entryType=cash_in')).toEqual([3, 1]);
    expect(await amounts('entryType=debit')).toEqual([-2]);
    expect(await amounts('entryType=debit,cash_in')).toEqual([3, -2, 1]);
    expect(await amounts(`from=${encodeURIComponent(debit.createdAt)}`)).toEqual([3, -2]);
    expect(await amounts(`to=${encodeURIComponent(debit.createdAt)}`)).toEqual([-2, 1]);
    expect(await amounts(`from=${first.createdAt}&to=${first.createdAt}`)).toEqual([1]);
    expect(await amounts(`from=${last.createdAt}&entryType=debit`)).toEqual([]);
  });

  it('names the bad query values in a 400 VALIDATION_ERROR', async () => {
    const a = account();
    const client = await createClient(a);
    const response = await a.get(`/api/v1/clients/${client.id}/transactions?entryType=cash_out&from=yesterday&page=0`);
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('VALIDATION_ERROR');
    const fields = response.body.error.details.map((detail: string) => detail.split(/[.:]/)[0]);
    expect(fields).toEqual(expect.arrayContaining(['entryType', 'from', 'page']));
  });
});

describe('POST /sandbox/v1/clients/{id}/debits', () => {
  it('records a debit entry of -amount (201)', async () => {
    const a = account();
    const client = await createClient(a);
    const response = await a.post(`/sandbox/v1/clients/${client.id}/debits`, { amount: 12.34, description: 'withdrawal' });
    expect(response.status).toBe(201);
    expect(response.body.data).toMatchObject({ clientId: client.id, entryType: 'debit', amount: -12.34, description: 'withdrawal', sourceType: 'other', paymentId: null });
    expect((await a.data('GET', `/api/v1/clients/${client.id}/transactions`)).transactions).toEqual([response.body.data]);
  });

  it('refuses a bad amount and unknown fields, naming them', async () => {
    const a = account();
    const client = await createClient(a);
    const response = await a.post(`/sandbox/v1/clients/${client.id}/debits`, { amount: -1, note: 'x' });
    expect(response.status).toBe(400);
    expect(response.body.error.details).toEqual(expect.arrayContaining([expect.stringMatching(/^amount: /), 'note: unknown field']));
    expect((await a.post(`/sandbox/v1/clients/${client.id}/debits`, { amount: 0.001 })).body.error.details).toEqual([
      expect.stringMatching(/^amount: /),
    ]);
    expect((await a.data('GET', `/api/v1/clients/${client.id}/transactions`)).pagination.total).toBe(0);
  });
});

describe('invoices', () => {
  it('are created (201, status issued by default), updated and listed newest first', async () => {
    const a = account();
    const client = await createClient(a);
    const response = await a.post(`/api/v1/clients/${client.id}/invoices`, {
      total_amount: 1500.5,
      description: 'March',
      dueDate: '2026-03-31',
      externalReference: 'inv-1',
    });
    expect(response.status).toBe(201);
    const invoice = response.body.data;
    expect(invoice).toEqual({
      id: expect.any(String),
      clientId: client.id,
      total_amount: 1500.5,
      currency: 'ARS',
      description: 'March',
      dueDate: '2026-03-31',
      status: 'issued',
      externalReference: 'inv-1',
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const updated = await a.data('PATCH', `/api/v1/clients/${client.id}/invoices/${invoice.id}`, { status: 'paid', dueDate: null });
    expect(updated).toEqual({ ...invoice, status: 'paid', dueDate: null, updatedAt: expect.any(String) });
    const second = await a.data('POST', `/api/v1/clients/${client.id}/invoices`, { total_amount: 1 });
    expect(second).toMatchObject({ status: 'issued', description: null, dueDate: null, externalReference: null });

    const list = await a.list(`/api/v1/clients/${client.id}/invoices?limit=1`);
    expect(list.data).toEqual([second]);
    expect(list.pagination).toEqual({ page: 1, limit: 1, total: 2, totalPages: 2 });
    // Another client's invoices are its own.
    const other = await createClient(a);
    expect((await a.list(`/api/v1/clients/${other.id}/invoices`)).data).toEqual([]);
  });

  it('name every bad field: total_amount required and money, dueDate a date, status one of issued/paid/cancelled', async () => {
    const a = account();
    const client = await createClient(a);
    const missing = await a.post(`/api/v1/clients/${client.id}/invoices`, { dueDate: '31/03/2026', status: 'void', totalAmount: 3 });
    expect(missing.status).toBe(400);
    const fields = missing.body.error.details.map((detail: string) => detail.split(':')[0]);
    expect(fields).toEqual(expect.arrayContaining(['total_amount', 'dueDate', 'status', 'totalAmount']));
    const invoice = await a.data('POST', `/api/v1/clients/${client.id}/invoices`, { total_amount: 10 });
    const bad = await a.patch(`/api/v1/clients/${client.id}/invoices/${invoice.id}`, { total_amount: 0, status: null });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.map((detail: string) => detail.split(':')[0])).toEqual(expect.arrayContaining(['total_amount', 'status']));
    expect((await a.list(`/api/v1/clients/${client.id}/invoices`)).data).toEqual([invoice]);
  });
});
