import { describe, expect, it } from 'vitest';
import { type Api, api, CLIENT, PAYMENT, useServer } from './helpers.js';

const server = await useServer();
let keyN = 0;
const account = () => api(server.url, `sk_ledger_${++keyN}`);

let taxN = 0;
const createClient = (a: Api, body: Record<string, unknown> = {}) =>
  a.data('POST', '/api/v1/clients', {
    ...CLIENT,
    name: 'Ana Pérez',
    taxId: `20-${String(++taxN).padStart(8, '0')}-1`,
    ...body,
  });
const transfer = (a: Api, body: Record<string, unknown>) => a.data('POST', '/sandbox/v1/transfers', body);

describe('transfers to a client CVU', () => {
  it('credit a cash_in entry of the net amount, to the CVU or the alias (any case), with target client', async () => {
    const a = account();
    const client = await createClient(a);
    const byCvu = await transfer(a, { to: client.cvu, total: 1000, taxes: 30 });
    expect(byCvu).toMatchObject({
      outcome: 'credited',
      reason: null,
      target: { type: 'client', id: client.id },
      cvu: client.cvu,
      netAmount: 970,
    });
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
      expect.objectContaining({
        entryType: 'cash_in',
        amount: 98.5,
        paymentId: payment.id,
        operationId: credited.operationId,
        sourceType: 'other',
      }),
    ]);
    expect((await a.data('GET', `/api/v1/clients/${client.id}/balance`)).totalCashIn).toBe(98.5);
    // The VA events cover it: no client.cashin event.
    const { data: events } = await a.list('/sandbox/v1/events');
    expect(events.map((e: { eventType: string }) => e.eventType)).not.toContain('client.cashin');
  });

  it('a VA payment naming an unregistered clientId adds no entry anywhere', async () => {
    const a = account();
    const client = await createClient(a);
    const payment = await a.data('POST', '/api/v1/va-payments', {
      ...PAYMENT,
      clientId: '3f1c2b1e-1a2b-4c3d-8e9f-0a1b2c3d4e5f',
    });
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
    const paid = await a.data('POST', `/api/v1/clients/${client.id}/invoices`, { totalAmount: 5 });
    await a.data('POST', `/sandbox/v1/clients/${client.id}/invoices/${paid.id}/allocations`, { amount: 5 });
    await a.data('PATCH', `/api/v1/clients/${client.id}/invoices/${invoice.id}`, { paymentStatus: 'cancelled' });
    expect(await a.data('GET', `/api/v1/clients/${client.id}/balance`)).toMatchObject({
      totalInvoiced: 25,
      balance: 25,
    });
  });

  it('is a negative balance when debits and invoices exceed the cash-ins, and zero for a new client', async () => {
    const a = account();
    const client = await createClient(a);
    expect(await a.data('GET', `/api/v1/clients/${client.id}/balance`)).toMatchObject({
      totalCashIn: 0,
      totalCashOut: 0,
      totalInvoiced: 0,
      balance: 0,
    });
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
      const { transactions, pagination } = await a.data(
        'GET',
        `/api/v1/clients/${client.id}/transactions?page=${page}&limit=100`,
      );
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
    const response = await a.post(`/sandbox/v1/clients/${client.id}/debits`, {
      amount: 12.34,
      description: 'withdrawal',
    });
    expect(response.status).toBe(201);
    expect(response.body.data).toMatchObject({
      clientId: client.id,
      entryType: 'debit',
      amount: -12.34,
      description: 'withdrawal',
      sourceType: 'other',
      paymentId: null,
    });
    expect((await a.data('GET', `/api/v1/clients/${client.id}/transactions`)).transactions).toEqual([
      response.body.data,
    ]);
  });

  it('refuses a bad amount and unknown fields, naming them', async () => {
    const a = account();
    const client = await createClient(a);
    const response = await a.post(`/sandbox/v1/clients/${client.id}/debits`, { amount: -1, note: 'x' });
    expect(response.status).toBe(400);
    expect(response.body.error.details).toEqual(
      expect.arrayContaining([expect.stringMatching(/^amount: /), 'note: unknown field']),
    );
    expect((await a.post(`/sandbox/v1/clients/${client.id}/debits`, { amount: 0.001 })).body.error.details).toEqual([
      expect.stringMatching(/^amount: /),
    ]);
    expect((await a.data('GET', `/api/v1/clients/${client.id}/transactions`)).pagination.total).toBe(0);
  });
});

describe('invoices', () => {
  const invoices = (client: { id: string }) => `/api/v1/clients/${client.id}/invoices`;

  it('are created 201 pending with every field of the reference, the amount under both names, the buyer from the client', async () => {
    const a = account();
    const client = await createClient(a, { name: 'Acme SA', taxId: '30-71234567-1' });
    const response = await a.post(invoices(client), {
      invoiceType: 'A',
      sellerTaxId: '30-70000000-7',
      sellerName: 'Proveedor SRL',
      subtotalNet: 1000,
      vatAmount: 210,
      otherTaxes: 30.5,
      totalAmount: 1240.5,
      currency: 'ARS',
      issuedAt: '2026-03-01',
      dueAt: '2026-03-31T23:59:59-03:00',
      paymentTerms: '30 days',
      observations: 'March fee',
    });
    expect(response.status).toBe(201);
    expect(response.body.data).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      clientId: client.id,
      invoiceNumber: '0001-00000001',
      invoiceType: 'A',
      sellerTaxId: '30-70000000-7',
      sellerName: 'Proveedor SRL',
      buyerTaxId: '30-71234567-1',
      buyerName: 'Acme SA',
      subtotalNet: 1000,
      vatAmount: 210,
      otherTaxes: 30.5,
      totalAmount: 1240.5,
      total_amount: 1240.5,
      currency: 'ARS',
      issuedAt: '2026-03-01T00:00:00.000Z',
      dueAt: '2026-04-01T02:59:59.000Z',
      paymentStatus: 'pending',
      paymentTerms: '30 days',
      observations: 'March fee',
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    // The spec's name alone works too; the optional fields are null, issuedAt is now, the type B.
    const minimal = await a.data('POST', invoices(client), { total_amount: 10 });
    expect(minimal).toMatchObject({
      invoiceType: 'B',
      invoiceNumber: '0001-00000001',
      totalAmount: 10,
      total_amount: 10,
      subtotalNet: null,
      dueAt: null,
      sellerName: null,
    });
    expect(minimal.issuedAt).toBe(minimal.createdAt);
    // Both names with the same value are one amount.
    expect((await a.data('POST', invoices(client), { totalAmount: 7, total_amount: 7 })).invoiceNumber).toBe(
      '0001-00000002',
    );
  });

  it('are numbered per account and invoice type, after the highest number of the sandbox point of sale; a number given is kept, unique', async () => {
    const a = account();
    const ana = await createClient(a);
    const bea = await createClient(a);
    const create = (client: { id: string }, body: Record<string, unknown>) =>
      a.data('POST', invoices(client), { totalAmount: 1, ...body });
    expect((await create(ana, {})).invoiceNumber).toBe('0001-00000001');
    expect((await create(bea, {})).invoiceNumber).toBe('0001-00000002');
    expect((await create(bea, { invoiceType: 'C' })).invoiceNumber).toBe('0001-00000001');
    expect((await create(ana, { invoiceNumber: '0001-00000040' })).invoiceNumber).toBe('0001-00000040');
    expect((await create(ana, { invoiceNumber: '0007-00000900' })).invoiceNumber).toBe('0007-00000900');
    expect((await create(ana, {})).invoiceNumber).toBe('0001-00000041');
    const taken = await a.post(invoices(bea), { totalAmount: 1, invoiceNumber: '0001-00000040' });
    expect(taken.status).toBe(400);
    expect(taken.body.error.details).toEqual([expect.stringMatching(/^invoiceNumber: 0001-00000040 is already used/)]);
    // The same number under another type is another invoice.
    expect((await create(bea, { invoiceType: 'A', invoiceNumber: '0001-00000040' })).invoiceType).toBe('A');
  });

  it("are read one by one (GET .../invoices/{invoiceId}), listed newest first, each client its own; another client's invoice is 404", async () => {
    const a = account();
    const client = await createClient(a);
    const first = await a.data('POST', invoices(client), { totalAmount: 1 });
    const second = await a.data('POST', invoices(client), { totalAmount: 2 });
    expect(await a.data('GET', `${invoices(client)}/${first.id}`)).toEqual(first);
    const list = await a.list(`${invoices(client)}?limit=1`);
    expect(list.data).toEqual([second]);
    expect(list.pagination).toEqual({ page: 1, limit: 1, total: 2, totalPages: 2 });
    const other = await createClient(a);
    expect((await a.list(invoices(other))).data).toEqual([]);
    for (const path of [`${invoices(other)}/${first.id}`, `${invoices(client)}/nope`]) {
      const response = await a.call('GET', path);
      expect(response.status, path).toBe(404);
      expect(response.body.error.code).toBe('NOT_FOUND');
    }
  });

  it('are patched field by field (null clears), and cancelled; a cancelled invoice changes no more', async () => {
    const a = account();
    const client = await createClient(a);
    const invoice = await a.data('POST', invoices(client), {
      totalAmount: 100,
      observations: 'x',
      dueAt: '2026-12-31',
    });
    const path = `${invoices(client)}/${invoice.id}`;
    const updated = await a.data('PATCH', path, {
      total_amount: 121,
      subtotalNet: 100,
      vatAmount: 21,
      observations: null,
    });
    expect(updated).toEqual({
      ...invoice,
      totalAmount: 121,
      total_amount: 121,
      subtotalNet: 100,
      vatAmount: 21,
      observations: null,
      updatedAt: expect.any(String),
    });
    const cancelled = await a.data('PATCH', path, { paymentStatus: 'cancelled' });
    expect(cancelled.paymentStatus).toBe('cancelled');
    const again = await a.patch(path, { observations: 'late' });
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ code: 'INVALID_STATE', details: ['paymentStatus: cancelled'] });
  });

  it('refuse, naming each field: a missing amount, two different amounts, bad values, unknown fields, a total that is not the sum of its parts', async () => {
    const a = account();
    const client = await createClient(a);
    const fieldsOf = (response: { body: any }) =>
      response.body.error.details.map((detail: string) => detail.split(':')[0]);
    const missing = await a.post(invoices(client), {
      dueAt: '31/03/2026',
      invoiceType: 'E',
      status: 'issued',
      description: 'x',
    });
    expect(missing.status).toBe(400);
    expect(fieldsOf(missing).sort()).toEqual(['description', 'dueAt', 'invoiceType', 'status', 'totalAmount']);
    const both = await a.post(invoices(client), { totalAmount: 10, total_amount: 11 });
    expect(both.body.error.code).toBe('VALIDATION_ERROR');
    expect(fieldsOf(both)).toEqual(['totalAmount', 'total_amount']);
    const cents = await a.post(invoices(client), { totalAmount: 10.001, vatAmount: -1, invoiceNumber: '42' });
    expect(fieldsOf(cents).sort()).toEqual(['invoiceNumber', 'totalAmount', 'vatAmount']);
    const sum = await a.post(invoices(client), { totalAmount: 100, subtotalNet: 80, vatAmount: 16.8 });
    expect(sum.body.error.details).toEqual([
      'totalAmount: must equal subtotalNet + vatAmount + otherTaxes (96.80), got 100.00',
    ]);
    const typeC = await a.post(invoices(client), {
      totalAmount: 121,
      invoiceType: 'C',
      subtotalNet: 100,
      vatAmount: 21,
    });
    expect(fieldsOf(typeC)).toEqual(['vatAmount']);
    const early = await a.post(invoices(client), { totalAmount: 1, issuedAt: '2026-03-02', dueAt: '2026-03-01' });
    expect(fieldsOf(early)).toEqual(['dueAt']);
    const usd = await a.post(invoices(client), { totalAmount: 1, currency: 'USD' });
    expect(usd.status).toBe(422);
    expect(usd.body.error.code).toBe('UNSUPPORTED_CURRENCY');
    const invoice = await a.data('POST', invoices(client), { totalAmount: 10 });
    const bad = await a.patch(`${invoices(client)}/${invoice.id}`, {
      total_amount: 0,
      paymentStatus: 'paid',
      buyerName: 'Other',
    });
    expect(bad.status).toBe(400);
    expect(fieldsOf(bad).sort()).toEqual(['buyerName', 'paymentStatus', 'total_amount']);
    expect((await a.list(invoices(client))).data).toEqual([invoice]);
  });
});
