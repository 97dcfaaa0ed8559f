import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { api, CLIENT, eventually, keyValues, PAYMENT, runCli, useReceiver, useServer } from './helpers.js';

/** Ids as the server makes them, except that while `shared` is set each one starts with it (two records, one short id). */
let shared: string | null = null;
const server = await useServer({
  ids: {
    uuid: () => (shared ? shared + randomUUID().slice(8) : randomUUID()),
    int: (max) => Math.floor(Math.random() * max),
  },
});
let keyN = 0;
const account = () => {
  const key = `sk_short_ids_${++keyN}`;
  const env = { VA_SANDBOX_URL: server.url, VA_SANDBOX_API_KEY: key };
  return { api: api(server.url, key), cli: (args: string[]) => runCli(args, env) };
};
const short = (id: string) => id.slice(0, 8);

describe('the CLI takes the short id (first 8 characters) where a record id goes', () => {
  it('payments get|cancel, clients get, deliveries show|redeliver find the one record it names', async () => {
    const receiver = await useReceiver();
    const { api, cli } = account();
    const payment = await api.data('POST', '/api/v1/va-payments', {
      ...PAYMENT,
      amount: 10,
      callbackUrl: receiver.url,
    });
    await api.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 11 });
    const client = await api.data('POST', '/api/v1/clients', { ...CLIENT, name: 'Ana', taxId: '20-1' });
    await receiver.waitFor(1);
    const delivery = await eventually(async () => (await api.list(`/sandbox/v1/deliveries?status=delivered`)).data[0]);

    const got = await cli(['payments', 'get', short(payment.id)]);
    expect(got.code).toBe(0);
    expect(keyValues(got.stdout).id).toBe(payment.id);
    expect(keyValues((await cli(['clients', 'get', short(client.id)])).stdout).id).toBe(client.id);
    expect(keyValues((await cli(['deliveries', 'show', short(delivery.id).toUpperCase()])).stdout).id).toBe(
      delivery.id,
    );
    const again = await cli(['deliveries', 'redeliver', short(delivery.id)]);
    expect(again.stdout).toContain(`of ${delivery.id} queued`);
    await receiver.waitFor(2);
    const cancelled = await cli(['payments', 'cancel', short(payment.id)]);
    expect(cancelled.code).toBe(0);
    expect((await api.data('GET', `/api/v1/va-payments/${payment.id}`)).status).toBe('cancelled');
  });

  it('a short id that names several records is refused in one line naming them (exit 2, USAGE with --json); the API takes full ids only', async () => {
    const { api, cli } = account();
    shared = 'abcdef01';
    const [one, two] = [
      await api.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 12 }),
      await api.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 13 }),
    ];
    shared = null;
    const run = await cli(['payments', 'get', 'abcdef01']);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(
      `va-sandbox: abcdef01 names more than one VA payment (${two.id}, ${one.id}, …): give more of the id\n`,
    );
    const json = await cli(['payments', 'cancel', 'abcdef01', '--json']);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stderr)).toMatchObject({ code: 'USAGE', status: null });
    // More of the id tells them apart.
    expect(keyValues((await cli(['payments', 'get', one.id.slice(0, 14)])).stdout).id).toBe(one.id);

    const unknown = await cli(['payments', 'get', 'ffffffff']);
    expect(unknown).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/^va-sandbox: NOT_FOUND: VA payment ffffffff not found/),
    });
    expect((await api.get(`/api/v1/va-payments/${short(one.id)}`)).status).toBe(404);
  });
});
