import { describe, expect, it } from 'vitest';
import { api, CLIENT, eventually, useReceiver, useServer } from './helpers.js';

const server = await useServer();
let keyN = 0;
const account = () => api(server.url, `sk_client_cashin_${++keyN}`);

describe('client cash-in callbacks (spec 6.2)', () => {
  it('a transfer to a client CVU posts client.cashin with exactly the fields and headers of spec 6.2', async () => {
    const receiver = await useReceiver();
    const client = account();
    const created = await client.data('POST', '/api/v1/clients', {
      ...CLIENT,
      name: 'Ana Pérez',
      taxId: '20-12345678-3',
      cashinCallbackUrl: `${receiver.url}/cashin`,
    });
    const transfer = await client.data('POST', '/sandbox/v1/transfers', {
      to: created.alias,
      total: 1000.1,
      taxes: 0.2,
    });
    const [request] = await receiver.waitFor(1);

    expect(request!.method).toBe('POST');
    expect(request!.url).toBe('/cashin');
    expect(request!.headers).toMatchObject({
      'content-type': 'application/json',
      'user-agent': 'Service-Client-Callback/1.0',
      'x-service-event-id': request!.body.eventId,
      'x-service-event-type': 'client.cashin',
    });
    expect(request!.body).toEqual({
      eventId: transfer.eventIds[0],
      clientId: created.id,
      eventType: 'client.cashin',
      taxId: '20-12345678-3',
      amount: 999.9,
      total: 1000.1,
      totalWithoutTaxes: 999.9,
      taxes: 0.2,
      currency: 'ARS',
      cvu: created.cvu,
      alias: created.alias,
      operationId: transfer.operationId,
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });

    const delivered = await eventually(
      async () => {
        const [found] = (await client.list('/sandbox/v1/deliveries?eventType=client.cashin')).data;
        return found?.status === 'delivered' && found;
      },
      10_000,
      'the client.cashin delivery',
    );
    expect(delivered).toMatchObject({ eventId: request!.body.eventId, url: `${receiver.url}/cashin`, attempts: 1 });
  });

  it('retries a failing client callback up to 3 attempts, with the same eventId, then marks it failed', async () => {
    const down = await useReceiver(() => ({ status: 500 }));
    const client = account();
    const created = await client.data('POST', '/api/v1/clients', {
      ...CLIENT,
      name: 'Beto',
      taxId: '20-22222222-3',
      cashinCallbackUrl: down.url,
    });
    await client.data('POST', '/sandbox/v1/transfers', { to: created.cvu, total: 10 });
    const attempts = async (n: number) =>
      eventually(
        async () => {
          const [found] = (await client.list('/sandbox/v1/deliveries?eventType=client.cashin')).data;
          return found?.attempts === n && found;
        },
        10_000,
        `attempt ${n}`,
      );
    expect((await attempts(1)).status).toBe('retrying');
    await client.data('POST', '/sandbox/v1/clock/advance', { seconds: 5 });
    expect((await attempts(2)).status).toBe('retrying');
    await client.data('POST', '/sandbox/v1/clock/advance', { seconds: 25 });
    expect((await attempts(3)).status).toBe('failed');
    expect(down.received).toHaveLength(3);
    expect(new Set(down.received.map((r) => r.headers['x-service-event-id'])).size).toBe(1);
  });

  it('records a client.cashin as dropped when the client has no cashinCallbackUrl', async () => {
    const client = account();
    const created = await client.data('POST', '/api/v1/clients', { ...CLIENT, name: 'Caro', taxId: '27-33333333-4' });
    await client.data('POST', '/sandbox/v1/transfers', { to: created.cvu, total: 10 });
    const [dropped] = (await client.list('/sandbox/v1/deliveries?status=dropped')).data;
    expect(dropped).toMatchObject({
      eventType: 'client.cashin',
      status: 'dropped',
      url: null,
      reason: expect.stringContaining('cashinCallbackUrl'),
    });
  });
});
