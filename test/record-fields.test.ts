/**
 * Each kind of record is declared once (src/core/records): a field declared there is exported, imported and recorded
 * in scenarios with no other line, and a `created` body keeps the fields the lifecycle changes at their values on
 * creation (issue 40, points 1 and 2).
 */
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { createClientSchema, createVaPaymentSchema, invoiceFields } from '../src/core/records/schemas.js';
import {
  CHANGING,
  clientRecord,
  deliveryRecord,
  entryRecord,
  exportedEventRecord,
  hubRecord,
  invoiceRecord,
  transferRecord,
  type VaPayment,
  vaPaymentRecord,
} from '../src/core/records/state.js';
import { scenarioSchema } from '../src/core/scenarios/scenario.js';
import { asCreated, cancel, createVaPayment, creditTransfer, expire } from '../src/core/va-payments/va-payment.js';
import { runScenarios } from '../src/sandbox/scenarios/scenario-runner.js';
import { type Api, api, eventually, useReceiver, useServer } from './helpers.js';

const server = await useServer();
const receiver = await useReceiver();

/** A client and two payments (a `callbackUrl` one, a `successUrl`/`failureUrl` one) giving every field their requests take. */
async function everyField(account: Api) {
  const clientBody = {
    paymentHubId: 7,
    name: 'Ana Pérez',
    taxId: '20-12345678-6',
    cashinCallbackUrl: `${receiver.url}/cashin`,
    emails: ['ana@example.com'],
    phones: ['+54 11 5555 0000'],
    aliasPrefixHint: 'ANA',
    aliasSuffixHint: 'PAGOS',
    externalReference: 'customer-9',
    metadata: { tier: 'gold' },
  };
  const client = await account.data('POST', '/api/v1/clients', clientBody);
  const common = {
    paymentHubId: 7,
    currency: 'ARS',
    ttlSeconds: 900,
    clientTaxId: '20-12345678-6',
    clientName: 'Ana Pérez',
    metadata: { order: 42 },
  };
  const bodies = [
    {
      ...common,
      lockMode: 'amount_and_time',
      amount: 123.45,
      clientId: client.id,
      callbackUrl: `${receiver.url}/va`,
      externalReference: 'order-a',
    },
    {
      ...common,
      lockMode: 'time',
      successUrl: `${receiver.url}/ok`,
      failureUrl: `${receiver.url}/ko`,
      externalReference: 'order-b',
    },
  ];
  // The samples give each field a create takes: a field added to a request without a sample here fails.
  expect(Object.keys(clientBody).sort()).toEqual(Object.keys(createClientSchema.shape).sort());
  expect([...new Set(bodies.flatMap(Object.keys))].sort()).toEqual(Object.keys(createVaPaymentSchema.shape).sort());
  for (const body of bodies) await account.data('POST', '/api/v1/va-payments', body);
  const invoice = {
    invoiceNumber: '0001-00000042',
    invoiceType: 'A',
    sellerTaxId: '30-71234567-1',
    sellerName: 'Tienda S.A.',
    subtotalNet: 100,
    vatAmount: 21,
    otherTaxes: 1.5,
    totalAmount: 122.5,
    currency: 'ARS',
    issuedAt: '2026-03-01T00:00:00.000Z',
    dueAt: '2026-03-31T00:00:00.000Z',
    paymentTerms: '30 days',
    observations: 'March',
  };
  // `total_amount` is `totalAmount` under the spec's name.
  expect(Object.keys(invoice).sort()).toEqual(
    Object.keys(invoiceFields)
      .filter((field) => field !== 'total_amount')
      .sort(),
  );
  await account.data('POST', `/api/v1/clients/${client.id}/invoices`, invoice);
}

/** The fields of a view a request gave, but those the replay names anew (URLs, ids), which are compared by presence. */
function asked(view: Record<string, unknown>, fields: Record<string, unknown>, renamed: string[]) {
  return Object.fromEntries(
    Object.keys(fields).map((field) => [field, renamed.includes(field) ? view[field] !== null : view[field]]),
  );
}

describe('a field declared in a record is recorded and exported with no other line', () => {
  it('record -> recorded scenario -> replay: every field of each create request comes back', async () => {
    const source = api(server.url, 'sk_fields_record');
    await everyField(source);
    const scenario = scenarioSchema.parse(await source.data('GET', '/sandbox/v1/scenario?name=fields'));
    const run = await runScenarios([{ file: 'fields.json', scenario }], { url: server.url });
    const replayed = api(server.url, run.scenarios[0]!.apiKey);

    const urls = ['clientId', 'callbackUrl', 'successUrl', 'failureUrl', 'cashinCallbackUrl'];
    const payments = async (account: Api) =>
      (await account.list('/api/v1/va-payments')).data
        .map((p: any) => asked(p, createVaPaymentSchema.shape, urls))
        .sort((a: any, b: any) => a.externalReference.localeCompare(b.externalReference));
    const clients = async (account: Api) =>
      (await account.list('/api/v1/clients')).data.map((c: any) => asked(c, createClientSchema.shape, urls));
    expect(await payments(replayed)).toEqual(await payments(source));
    expect(await clients(replayed)).toEqual(await clients(source));
    const invoices = async (account: Api) => {
      const [client] = (await account.list('/api/v1/clients')).data;
      return (await account.list(`/api/v1/clients/${client.id}/invoices`)).data.map((i: any) =>
        asked(i, invoiceFields, []),
      );
    };
    expect(await invoices(replayed)).toEqual(await invoices(source));
    expect((await payments(source)).length).toBe(2);
  });

  it('record -> export -> import: each record holds every field its kind declares, the same after the import', async () => {
    const source = api(server.url, 'sk_fields_export');
    await everyField(source);
    const [payment] = (await source.list('/api/v1/va-payments?externalReference=order-a')).data;
    await source.data('POST', '/sandbox/v1/transfers', { to: payment.cvu, total: 123.45, taxes: 1 });
    const exported = await source.data('GET', '/sandbox/v1/export');
    const target = api(server.url, 'sk_fields_import');
    await target.data('POST', '/sandbox/v1/import', exported);
    const again = (await target.data('GET', '/sandbox/v1/export')).account;

    const kinds: Record<string, z.ZodObject> = {
      hubs: hubRecord,
      vaPayments: vaPaymentRecord,
      transfers: transferRecord,
      events: exportedEventRecord,
      deliveries: deliveryRecord,
      clients: clientRecord,
      entries: entryRecord,
      invoices: invoiceRecord,
    };
    for (const [table, schema] of Object.entries(kinds)) {
      const required = Object.keys(schema.shape).filter((field) => !schema.shape[field]!.safeParse(undefined).success);
      const records = Object.values(exported.account[table] as Record<string, object>);
      if (table !== 'invoices') expect(records.length, table).toBeGreaterThan(0);
      for (const record of records) expect(Object.keys(record), table).toEqual(expect.arrayContaining(required));
      // Deliveries come in held (contract part 5): the rest is as exported.
      if (table !== 'deliveries') expect(again[table], table).toEqual(exported.account[table]);
    }
  });
});

describe('a created body is the body raised', () => {
  const made = createVaPayment(
    {
      paymentHubId: 1,
      currency: 'ARS',
      lockMode: 'amount_and_time',
      amount: 10_000,
      ttlSeconds: 600,
      metadata: { a: 1 },
      externalReference: 'x',
    },
    {
      id: '00000000-0000-4000-8000-000000000001',
      cvu: '0000999900000012345678',
      alias: 'A.B.C',
      now: '2026-01-01T00:00:00.000Z',
      expiresAt: '2026-01-01T00:10:00.000Z',
    },
  ).payment;
  const cashIn = (total: number, n: number) => ({
    operationId: `op_${n}`,
    transferId: `00000000-0000-4000-8000-00000000001${n}`,
    total,
    taxes: 0,
    incomingAmount: total,
    receivedAt: '2026-01-01T00:01:00.000Z',
  });
  const later = '2026-01-01T00:05:00.000Z';
  const underpaid = creditTransfer(made, cashIn(4_000, 1), later).payment;
  const ended: Record<string, VaPayment> = {
    completed: creditTransfer(made, cashIn(10_000, 1), later).payment,
    overpaid: creditTransfer(underpaid, cashIn(9_000, 2), later).payment,
    expired: expire(underpaid, '2026-01-01T00:10:00.000Z').payment,
    cancelled: cancel(underpaid, later).payment,
  };

  it.each(Object.keys(ended))(
    '%s: the payment as created is the one created, and it changed only its declared changing fields',
    (status) => {
      const payment = ended[status]!;
      expect(payment.status).toBe(status);
      expect(asCreated(payment)).toEqual(made);
      const kept = Object.keys(vaPaymentRecord.shape).filter(
        (field) => !(CHANGING as readonly string[]).includes(field),
      ) as (keyof VaPayment)[];
      for (const field of kept) expect(payment[field], field).toEqual(made[field]);
    },
  );

  it('a payment that ended never changes again', () => {
    expect(() => creditTransfer(ended.cancelled!, cashIn(1, 3), later)).toThrow(/cancelled/);
    expect(expire(ended.completed!, later).payment).toBe(ended.completed);
  });

  it.each(['paid', 'expired', 'cancelled'])(
    'a created redelivered after the payment was %s is byte for byte the create response',
    async (end) => {
      const account = api(server.url, `sk_raised_${end}`);
      const payment = await account.data('POST', '/api/v1/va-payments', {
        paymentHubId: 1,
        currency: 'ARS',
        lockMode: 'time',
        ttlSeconds: 60,
        callbackUrl: `${receiver.url}/raised`,
        metadata: { end },
      });
      const mine = (r: { body: any }) => r.body?.vaPaymentId === payment.id && r.body.eventType === 'created';
      const [first] = await receiver.waitFor(1, mine);
      if (end === 'paid') await account.data('POST', '/sandbox/v1/transfers', { to: payment.cvu, total: 50 });
      if (end === 'expired') await account.data('POST', '/sandbox/v1/clock/advance', { seconds: 61 });
      if (end === 'cancelled') await account.data('POST', `/api/v1/va-payments/${payment.id}/cancel`);
      const now = await account.data('GET', `/api/v1/va-payments/${payment.id}`);
      expect(now.status).toBe(end === 'paid' ? 'completed' : end);
      const [delivery] = (await account.list('/sandbox/v1/deliveries?eventType=created')).data.filter(
        (d: any) => d.vaPaymentId === payment.id,
      );
      await account.data('POST', `/sandbox/v1/deliveries/${delivery.id}/redeliver`);
      const again = (await receiver.waitFor(2, mine))[1]!;
      expect(again.raw).toBe(first!.raw);
      expect(JSON.stringify(again.body.payload)).toBe(JSON.stringify(payment));
    },
  );

  it("a client's cash-in redelivered after the client changed is byte for byte the one sent", async () => {
    const account = api(server.url, 'sk_raised_client');
    const client = await account.data('POST', '/api/v1/clients', {
      paymentHubId: 1,
      name: 'Ana',
      taxId: '20-12345678-6',
      cashinCallbackUrl: `${receiver.url}/client`,
    });
    await account.data('POST', '/sandbox/v1/transfers', { to: client.cvu, total: 75 });
    const mine = (r: { body: any }) => r.body?.clientId === client.id;
    const [first] = await receiver.waitFor(1, mine);
    await account.data('PATCH', `/api/v1/clients/${client.id}`, {
      name: 'Ana María',
      taxId: '27-87654321-3',
      metadata: { moved: true },
    });
    await account.data('POST', `/sandbox/v1/clients/${client.id}/cvu`, { cvuStatus: 'disabled' });
    const [delivery] = (await account.list('/sandbox/v1/deliveries?eventType=client.cashin')).data.filter(
      (d: any) => d.clientId === client.id,
    );
    await eventually(
      async () => (await account.data('GET', `/sandbox/v1/deliveries/${delivery.id}`)).status === 'delivered',
      10_000,
      'delivered',
    );
    await account.data('POST', `/sandbox/v1/deliveries/${delivery.id}/redeliver`);
    const again = (await receiver.waitFor(2, mine))[1]!;
    expect(again.raw).toBe(first!.raw);
  });
});
