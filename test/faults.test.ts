import { describe, expect, it } from 'vitest';
import { type Api, api, eventually, keyValues, PAYMENT, runCli, useReceiver, useServer } from './helpers.js';

const server = await useServer();
let keyN = 0;
const account = () => api(server.url, `sk_faults_${++keyN}`);

const create = (client: Api, amount: number, callbackUrl: string) =>
  client.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount, lockMode: 'amount_and_time', callbackUrl });
const pay = (client: Api, payment: { cvu: string; amount: number }) =>
  client.data('POST', '/sandbox/v1/transfers', { to: payment.cvu, total: payment.amount });

describe('delivery faults (contract part 4)', () => {
  it('are all off by default; PUT sets the whole setting (a field left out is off) and checks each field', async () => {
    const client = account();
    expect(await client.data('GET', '/sandbox/v1/faults')).toEqual({ duplicate: false, delayMs: 0, shuffle: false });
    expect(await client.data('PUT', '/sandbox/v1/faults', { duplicate: true, delayMs: 50 })).toEqual({
      duplicate: true,
      delayMs: 50,
      shuffle: false,
    });
    expect(await client.data('PUT', '/sandbox/v1/faults', { shuffle: true })).toEqual({
      duplicate: false,
      delayMs: 0,
      shuffle: true,
    });
    const bad = await client.call('PUT', '/sandbox/v1/faults', { delayMs: 20_000, duplicate: 'yes', loud: true });
    expect(bad.status).toBe(400);
    expect([...bad.body.error.details].sort()).toEqual([
      expect.stringMatching(/^delayMs: /),
      expect.stringMatching(/^duplicate: /),
      'loud: unknown field',
    ]);
  });

  it('duplicate: the receiver gets every event twice with the same eventId; the extra send is an attempt marked fault', async () => {
    const receiver = await useReceiver();
    const client = account();
    await client.data('PUT', '/sandbox/v1/faults', { duplicate: true });
    const payment = await create(client, 120, receiver.url);
    await pay(client, payment);
    const got = await receiver.waitFor(6);
    expect(got.map((r) => r.body.eventType)).toEqual([
      'created',
      'created',
      'cash_in_received',
      'cash_in_received',
      'succeeded',
      'succeeded',
    ]);
    for (let i = 0; i < 6; i += 2) {
      expect(got[i + 1]!.headers['x-service-event-id']).toBe(got[i]!.headers['x-service-event-id']);
      expect(got[i + 1]!.raw).toBe(got[i]!.raw);
    }
    const log = await eventually(async () => {
      const all = (await client.list('/sandbox/v1/deliveries')).data;
      return all.every((d: any) => d.attempts === 2) && all;
    });
    expect(log.map((d: any) => d.status)).toEqual(['delivered', 'delivered', 'delivered']);
    const detail = await client.data('GET', `/sandbox/v1/deliveries/${log[0].id}`);
    expect(detail.attempts.map((a: any) => [a.n, a.responseStatus, a.fault])).toEqual([
      [1, 200, null],
      [2, 200, 'duplicate'],
    ]);
  });

  it('delayMs: each attempt waits that long first', async () => {
    const receiver = await useReceiver();
    const client = account();
    await client.data('PUT', '/sandbox/v1/faults', { delayMs: 400 });
    const started = Date.now();
    await create(client, 130, receiver.url);
    const [created] = await receiver.waitFor(1);
    expect(created!.at - started).toBeGreaterThanOrEqual(400);
  });

  it("shuffle: events of different payments arrive out of raise order, while each payment's own events keep theirs", async () => {
    const receiver = await useReceiver();
    const client = account();
    await client.data('PUT', '/sandbox/v1/faults', { shuffle: true });
    const payments = [];
    for (let i = 0; i < 5; i++) payments.push(await create(client, 200 + i, receiver.url));
    for (const payment of payments) await pay(client, payment);
    const got = await receiver.waitFor(15);
    const order = payments.map((p) => p.id);
    for (const id of order) {
      expect(got.filter((r) => r.body.vaPaymentId === id).map((r) => r.body.eventType)).toEqual([
        'created',
        'cash_in_received',
        'succeeded',
      ]);
    }
    // Raised in payment order for each event type; arriving in that same order for all three is the unshuffled case.
    const arrival = (eventType: string) =>
      got.filter((r) => r.body.eventType === eventType).map((r) => order.indexOf(r.body.vaPaymentId));
    const inRaiseOrder = ['created', 'cash_in_received', 'succeeded'].map(
      (type) => arrival(type).join() === '0,1,2,3,4',
    );
    expect(inRaiseOrder).not.toEqual([true, true, true]);
  });
});

describe('va-sandbox faults', () => {
  it('set --duplicate --delay 200ms --shuffle, show, clear', async () => {
    const client = account();
    const env = { VA_SANDBOX_URL: server.url, VA_SANDBOX_API_KEY: client.key };
    const set = await runCli(['faults', 'set', '--duplicate', '--delay', '200ms', '--shuffle'], env);
    expect(set.code).toBe(0);
    expect(keyValues(set.stdout)).toEqual({ duplicate: 'true', delayMs: '200', shuffle: 'true' });
    expect(await client.data('GET', '/sandbox/v1/faults')).toEqual({ duplicate: true, delayMs: 200, shuffle: true });
    expect(keyValues((await runCli(['faults', 'show'], env)).stdout).delayMs).toBe('200');
    expect((await runCli(['faults', 'clear'], env)).code).toBe(0);
    expect(await client.data('GET', '/sandbox/v1/faults')).toEqual({ duplicate: false, delayMs: 0, shuffle: false });
    const typo = await runCli(['faults', 'set', '--delay', 'fast'], env);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/^va-sandbox: .*--delay.*milliseconds/);
  });
});
