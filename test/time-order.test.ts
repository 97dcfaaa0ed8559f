import { describe, expect, it } from 'vitest';
import { type Api, api, eventually, PAYMENT, runCli, useReceiver, useServer } from './helpers.js';

const server = await useServer();
let keyN = 0;
const account = () => api(server.url, `sk_time_${++keyN}`);

const ms = (iso: string) => Date.parse(iso);
const deliveries = async (client: Api, query = '') => (await client.list(`/sandbox/v1/deliveries${query}`)).data;
const detail = (client: Api, id: string) => client.data('GET', `/sandbox/v1/deliveries/${id}`);
/** Waits until the payment's `created` delivery has failed its first attempt and waits to retry. */
const retrying = (client: Api) =>
  eventually(
    async () => (await deliveries(client, '?eventType=created&status=retrying'))[0],
    10_000,
    'created retrying',
  );

describe('clock moves walk through every due instant in time order (contract part 4, time order)', () => {
  it('advance 60 after a failed created (retry at +5) with a payment expiring at +60: created 500, created 200, failed at +0, +5, +60', async () => {
    const receiver = await useReceiver((_, index) => ({ status: index === 0 ? 500 : 200 }));
    const client = account();
    const payment = await client.data('POST', '/api/v1/va-payments', {
      ...PAYMENT,
      amount: 100,
      ttlSeconds: 60,
      callbackUrl: `${receiver.url}/hook`,
    });
    const created = await retrying(client);

    await client.data('POST', '/sandbox/v1/clock/advance', { seconds: 60 });

    // Everything fell due before the answer: no waiting for the receiver.
    expect(receiver.received.map((r) => r.body.eventType)).toEqual(['created', 'created', 'failed']);
    const t0 = ms(payment.createdAt);
    const [first, retry] = (await detail(client, created.id)).attempts;
    expect(retry.startedAt).toBe(created.nextAttemptAt);
    expect(ms(first.startedAt) - t0).toBeLessThan(1000);
    expect(ms(retry.startedAt) - t0).toBeGreaterThanOrEqual(5000);
    expect(ms(retry.startedAt) - t0).toBeLessThan(6000);
    const failed = receiver.received[2]!.body;
    expect(failed.createdAt).toBe(payment.expiresAt);
    expect(ms(failed.createdAt) - t0).toBe(60_000);
    const [failedDelivery] = await deliveries(client, '?eventType=failed');
    expect(failedDelivery.status).toBe('delivered');
    expect((await detail(client, failedDelivery.id)).attempts[0].startedAt).toBe(payment.expiresAt);
  });

  it('a receiver that keeps failing: each retry counts from the failure at its instant, and later work waits for it', async () => {
    const receiver = await useReceiver(() => ({ status: 503 }));
    const client = account();
    const callbackUrl = `${receiver.url}/hook`;
    const payment = await client.data('POST', '/api/v1/va-payments', {
      ...PAYMENT,
      amount: 100,
      ttlSeconds: 20,
      callbackUrl,
    });
    const created = await retrying(client);

    await client.data('POST', '/sandbox/v1/clock/advance', { seconds: 40 });

    // created at +0, +5 and +30; failed (at +20) between the two retries, its own retry at +25.
    const got = receiver.received.map((r) => r.body.eventType);
    expect(got).toEqual(['created', 'created', 'failed', 'failed', 'created']);
    const times = (await detail(client, created.id)).attempts.map((a: any) => a.startedAt);
    expect(ms(times[2]) - ms(times[1])).toBe(25_000);
    const [failed] = await deliveries(client, '?eventType=failed');
    const failedTimes = (await detail(client, failed.id)).attempts.map(
      (a: any) => ms(a.startedAt) - ms(payment.expiresAt),
    );
    expect(failedTimes).toEqual([0, 5000]);
  });

  it('clock set moves to a later time the same way; a time before now is 409 INVALID_STATE', async () => {
    const receiver = await useReceiver();
    const client = account();
    const payment = await client.data('POST', '/api/v1/va-payments', {
      ...PAYMENT,
      amount: 100,
      ttlSeconds: 90,
      callbackUrl: `${receiver.url}/hook`,
    });
    await receiver.waitFor(1);
    const at = new Date(ms(payment.expiresAt) + 1000).toISOString();

    const clock = await client.data('POST', '/sandbox/v1/clock/set', { at });
    expect(clock.now).toBe(at);
    expect(receiver.received.map((r) => r.body.eventType)).toEqual(['created', 'failed']);
    expect(receiver.received[1]!.body.createdAt).toBe(payment.expiresAt);

    const past = await client.post('/sandbox/v1/clock/set', { at: payment.createdAt });
    expect(past.status).toBe(409);
    expect(past.body.error.code).toBe('INVALID_STATE');
    expect(past.body.error.message).toMatch(/only moves forward/);
    const bad = await client.post('/sandbox/v1/clock/set', { at: 'tomorrow' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details).toEqual([expect.stringMatching(/^at: /)]);
  });

  it('va-sandbox clock set ISO moves the clock; an earlier time is one line on stderr', async () => {
    const client = account();
    const env = { VA_SANDBOX_URL: server.url, VA_SANDBOX_API_KEY: client.key };
    const { now } = await client.data('GET', '/sandbox/v1/clock');
    const at = new Date(ms(now) + 3600_000).toISOString();
    const ok = await runCli(['clock', 'set', at, '--json'], env);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout).now).toBe(at);
    const back = await runCli(['clock', 'set', now], env);
    expect(back.code).toBe(1);
    expect(back.stderr).toMatch(/^va-sandbox: INVALID_STATE: The sandbox clock only moves forward: .*\n$/);
    const typo = await runCli(['clock', 'set', '2026-03-01'], env);
    expect(typo.code).toBe(2);
  });

  it('a jump of 10 years over a receiver that hangs still answers in about 10 s, every payment expired at its own instant', async () => {
    const hanging = await useServer({ callbackTimeoutMs: 60_000 }, 'test');
    const receiver = await useReceiver(() => 'hang');
    const client = api(hanging.url, 'sk_time_hang');
    const payments = [];
    for (let i = 1; i <= 40; i++) {
      payments.push(
        await client.data('POST', '/api/v1/va-payments', {
          ...PAYMENT,
          amount: i,
          ttlSeconds: i * 60,
          callbackUrl: `${receiver.url}/hook`,
        }),
      );
    }
    const started = performance.now();
    await client.data('POST', '/sandbox/v1/clock/advance', { seconds: 10 * 365 * 24 * 3600 });
    const took = performance.now() - started;
    expect(took).toBeGreaterThan(9_000); // it did wait for the receiver, up to its bound
    expect(took).toBeLessThan(13_000);
    const events = (await client.list('/sandbox/v1/events?limit=100')).data.filter(
      (e: any) => e.eventType === 'failed',
    );
    expect(events).toHaveLength(40);
    const expiresAt = new Map(payments.map((p) => [p.id, p.expiresAt]));
    for (const event of events) expect(event.body.createdAt).toBe(expiresAt.get(event.vaPaymentId));
  }, 20_000);

  it("a walk over thousands of instants lets another account's requests in between its slices", async () => {
    const walker = account();
    // 4,000 payments expiring each at an instant of its own, one second apart.
    for (let i = 0; i < 4_000; i += 40) {
      await Promise.all(
        Array.from({ length: 40 }, (_, j) =>
          walker.post('/api/v1/va-payments', { ...PAYMENT, amount: 1, ttlSeconds: i + j + 1 }),
        ),
      );
    }
    const other = account();
    const done: string[] = [];
    const walk = walker.post('/sandbox/v1/clock/advance', { seconds: 4_001 }).then(() => done.push('walk'));
    await new Promise((resolve) => setTimeout(resolve, 20)); // the walk has begun
    await other.get('/api/v1/va-payments').then(() => done.push('other'));
    await walk;
    expect(done).toEqual(['other', 'walk']);
    expect((await walker.list('/api/v1/va-payments?status=expired')).pagination.total).toBe(4_000);
  }, 60_000);
});
