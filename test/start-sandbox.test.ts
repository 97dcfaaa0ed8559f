import { existsSync } from 'node:fs';
// The package entry, as a user's suite imports it: package.json "exports" -> the built dist.
import { type CreateVaPaymentBody, SandboxApiError, type StartedSandbox, startSandbox } from 'va-sandbox';
import { afterAll, describe, expect, it } from 'vitest';
import { CLIENT, PAYMENT } from './helpers.js';

const sandbox: StartedSandbox = await startSandbox();
afterAll(() => sandbox.stop());

describe("startSandbox() from 'va-sandbox'", () => {
  it('serves a fresh account on a free loopback port, with a typed client', async () => {
    expect(sandbox.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(sandbox.apiKey).toMatch(/^sk_test_/);
    expect((await sandbox.client.vaPayments.list()).pagination.total).toBe(0);
    const body: CreateVaPaymentBody = {
      paymentHubId: 1,
      currency: 'ARS',
      amount: 5000,
      lockMode: 'amount_and_time',
      callbackUrl: `${sandbox.receiver.url}/va`,
    };
    const payment = await sandbox.client.vaPayments.create(body);
    expect(payment.status).toBe('waiting');
    const transfer = await sandbox.client.transfers.create({ to: payment.cvu, total: 5000, taxes: 30 });
    expect(transfer.outcome).toBe('credited');
    expect(await sandbox.client.vaPayments.get(payment.id)).toMatchObject({
      status: 'completed',
      receivedAmount: 4970,
      remainingAmount: 0,
    });
  });

  it('has a receiver that gets the callbacks, and can fail them to show retries', async () => {
    sandbox.receiver.failNext(1, { path: '/retry' });
    const payment = await sandbox.client.vaPayments.create({
      ...PAYMENT,
      ttlSeconds: 60,
      callbackUrl: `${sandbox.receiver.url}/retry`,
    });
    const [first] = await sandbox.receiver.waitFor(1, (r) => r.path === '/retry');
    expect(first).toMatchObject({ status: 500, body: { eventType: 'created', vaPaymentId: payment.id } });
    expect(first!.headers['user-agent']).toBe('Service-VA-Callback/1.0');
    await sandbox.clock.advance(5);
    const got = await sandbox.receiver.waitFor(2, (r) => r.path === '/retry');
    expect(got.map((r) => [r.body.eventType, r.status])).toEqual([
      ['created', 500],
      ['created', 200],
    ]);
    await sandbox.clock.advance(60);
    await sandbox.settle();
    expect((await sandbox.client.vaPayments.get(payment.id)).status).toBe('expired');
    expect(sandbox.receiver.received.filter((r) => r.path === '/retry').map((r) => r.body.eventType)).toEqual([
      'created',
      'created',
      'failed',
    ]);
  });

  it('moves the account clock, and throws the API errors typed', async () => {
    const before = await sandbox.clock.now();
    const after = await sandbox.clock.advance(3600);
    expect(Date.parse(after.now) - Date.parse(before)).toBeGreaterThanOrEqual(3600_000);
    const error = await sandbox.client.vaPayments.get('00000000-0000-4000-8000-000000000000').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SandboxApiError);
    expect(error).toMatchObject({ status: 404, code: 'NOT_FOUND' });
  });

  it("keeps the state in a temp file with store: 'file', removed by stop()", async () => {
    const onFile = await startSandbox({ store: 'file' });
    expect(onFile.dataPath).not.toBeNull();
    await onFile.client.clients.create({ ...CLIENT, name: 'Uno', taxId: '20-12345678-3' });
    await onFile.stop();
    expect(existsSync(onFile.dataPath!)).toBe(false);
    await expect(fetch(`${onFile.url}/health`)).rejects.toThrow();
  });
});
