import { describe, expect, it } from 'vitest';
import { type Api, api, CLIENT, eventually, PAYMENT, runCli, spawnCli, useReceiver, useServer } from './helpers.js';

const server = await useServer();
let keyN = 0;
const account = () => api(server.url, `sk_forwarding_${++keyN}`);

/** A production-style URL nothing on this machine answers: only forwarding gets its callbacks anywhere. */
const PRODUCTION = 'https://merchant.example/hook';

const pay = async (client: Api, callbackUrl = PRODUCTION) => {
  const payment = await client.data('POST', '/api/v1/va-payments', {
    ...PAYMENT,
    amount: 150,
    lockMode: 'amount_and_time',
    callbackUrl,
  });
  await client.data('POST', '/sandbox/v1/transfers', { to: payment.cvu, total: 150 });
  return payment;
};
const deliveries = async (client: Api) => (await client.list('/sandbox/v1/deliveries')).data;

/** A paid payment whose three callbacks reached `own`, another receiver, and the newest delivery (for redelivering). */
async function paidToTwoReceivers() {
  const own = await useReceiver();
  const elsewhere = await useReceiver();
  const client = account();
  await pay(client, own.url);
  await own.waitFor(3);
  const [newest] = await deliveries(client);
  return { own, elsewhere, client, newest };
}

describe('forwarding (contract part 4): every callback attempt of the account goes to one URL', () => {
  it('a payment whose callbackUrl is https://merchant.example/hook gets every callback at the local receiver; the log keeps both URLs', async () => {
    const laptop = await useReceiver();
    const client = account();
    expect(await client.data('GET', '/sandbox/v1/forwarding')).toEqual({ url: null, events: null, since: null });
    const set = await client.data('PUT', '/sandbox/v1/forwarding', { url: `${laptop.url}/webhooks` });
    expect(set.url).toBe(`${laptop.url}/webhooks`);

    const payment = await pay(client);
    const got = await laptop.waitFor(3);
    expect(got.map((r) => [r.url, r.body.eventType, r.body.vaPaymentId])).toEqual([
      ['/webhooks', 'created', payment.id],
      ['/webhooks', 'cash_in_received', payment.id],
      ['/webhooks', 'succeeded', payment.id],
    ]);
    const log = await eventually(async () => {
      const all = await deliveries(client);
      return all.every((d: any) => d.status === 'delivered') && all;
    });
    expect(log.map((d: any) => [d.status, d.url, d.forwardedTo])).toEqual(
      Array(3).fill(['delivered', PRODUCTION, `${laptop.url}/webhooks`]),
    );
    const detail = await client.data('GET', `/sandbox/v1/deliveries/${log[0].id}`);
    expect(detail.url).toBe(PRODUCTION);
    expect(detail.attempts[0]).toMatchObject({
      forwardedTo: `${laptop.url}/webhooks`,
      request: { url: `${laptop.url}/webhooks` },
    });
  });

  it('forwards client cash-ins too; after DELETE callbacks go to their own URLs again', async () => {
    const laptop = await useReceiver();
    const own = await useReceiver();
    const client = account();
    await client.data('PUT', '/sandbox/v1/forwarding', { url: laptop.url });
    const buyer = await client.data('POST', '/api/v1/clients', {
      ...CLIENT,
      name: 'Ana',
      taxId: '20-1',
      cashinCallbackUrl: PRODUCTION,
    });
    await client.data('POST', '/sandbox/v1/transfers', { to: buyer.cvu, total: 10 });
    expect((await laptop.waitFor(1))[0]!.body).toMatchObject({ eventType: 'client.cashin', clientId: buyer.id });

    expect(await client.data('DELETE', '/sandbox/v1/forwarding')).toEqual({ url: null, events: null, since: null });
    const payment = await pay(client, own.url);
    expect((await own.waitFor(3)).map((r) => r.body.vaPaymentId)).toEqual([payment.id, payment.id, payment.id]);
    expect(laptop.received).toHaveLength(1);
    await eventually(
      async () =>
        (await deliveries(client)).filter((d: any) => d.status === 'delivered' && d.forwardedTo === null).length === 3,
    );
  });

  it('redeliver {"url"} sends that one delivery elsewhere; a dropped event can be redelivered to a URL', async () => {
    const { own, elsewhere, client, newest: succeeded } = await paidToTwoReceivers();
    const again = await client.post(`/sandbox/v1/deliveries/${succeeded.id}/redeliver`, { url: elsewhere.url });
    expect(again.status).toBe(201);
    expect(again.body.data).toMatchObject({ url: own.url, forwardedTo: elsewhere.url, redeliveryOf: succeeded.id });
    expect((await elsewhere.waitFor(1))[0]!.body.eventId).toBe(succeeded.eventId);
    expect(own.received).toHaveLength(3);

    const quiet = await client.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 5 });
    const [dropped] = (await client.list('/sandbox/v1/deliveries?status=dropped')).data;
    const sent = await client.post(`/sandbox/v1/deliveries/${dropped.id}/redeliver`, { url: elsewhere.url });
    expect(sent.status).toBe(201);
    expect((await elsewhere.waitFor(2))[1]!.body).toMatchObject({ eventType: 'created', vaPaymentId: quiet.id });
  });

  it('with events, forwards only callbacks of those types; the others go to their own URLs, never to the forwarding URL', async () => {
    const laptop = await useReceiver();
    const own = await useReceiver();
    const client = account();
    const set = await client.data('PUT', '/sandbox/v1/forwarding', {
      url: laptop.url,
      events: ['created', 'client.cashin'],
    });
    expect(set).toMatchObject({ url: laptop.url, events: ['created', 'client.cashin'] });
    expect(await client.data('GET', '/sandbox/v1/forwarding')).toMatchObject({ events: ['created', 'client.cashin'] });

    const payment = await pay(client, own.url);
    const buyer = await client.data('POST', '/api/v1/clients', {
      ...CLIENT,
      name: 'Ana',
      taxId: '20-2',
      cashinCallbackUrl: own.url,
    });
    await client.data('POST', '/sandbox/v1/transfers', { to: buyer.cvu, total: 10 });
    await own.waitFor(2);
    await laptop.waitFor(2);
    await eventually(async () => (await deliveries(client)).every((d: any) => d.status === 'delivered'));
    expect(laptop.received.map((r) => r.body.eventType)).toEqual(['created', 'client.cashin']);
    expect(own.received.map((r) => [r.body.eventType, r.body.vaPaymentId])).toEqual([
      ['cash_in_received', payment.id],
      ['succeeded', payment.id],
    ]);
    const log = await deliveries(client);
    expect(Object.fromEntries(log.map((d: any) => [d.eventType, d.forwardedTo]))).toEqual({
      created: laptop.url,
      cash_in_received: null,
      succeeded: null,
      'client.cashin': laptop.url,
    });
    // Each delivery names whose event it is.
    expect(log.map((d: any) => [d.eventType, d.vaPaymentId, d.clientId])).toContainEqual([
      'client.cashin',
      null,
      buyer.id,
    ]);
    expect(log.map((d: any) => [d.eventType, d.vaPaymentId, d.clientId])).toContainEqual(['created', payment.id, null]);
  });

  it('refuses an event type the contract does not have, and an empty list, naming the field', async () => {
    const client = account();
    const bad = await client.call('PUT', '/sandbox/v1/forwarding', {
      url: 'http://127.0.0.1:1',
      events: ['created', 'paid'],
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details[0]).toMatch(/^events\.1: /);
    const empty = await client.call('PUT', '/sandbox/v1/forwarding', { url: 'http://127.0.0.1:1', events: [] });
    expect(empty.status).toBe(400);
    expect(empty.body.error.details[0]).toMatch(/^events: /);
  });

  it('refuses a forwarding URL that is not http(s), with the field named', async () => {
    const client = account();
    const bad = await client.call('PUT', '/sandbox/v1/forwarding', { url: 'ftp://laptop' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details).toEqual(['url: must be an http(s) URL']);
  });
});

describe('va-sandbox listen --forward-to', () => {
  it('sets forwarding, prints each callback as delivered (event, payment, status, ms; --print-body), and clears it on Ctrl-C', async () => {
    const laptop = await useReceiver();
    const client = account();
    const env = { VA_SANDBOX_URL: server.url, VA_SANDBOX_API_KEY: client.key };
    const listen = spawnCli(['listen', '--forward-to', `${laptop.url}/webhooks`, '--print-body'], env);
    await listen.waitFor(/forwarding every callback of this account to/, 'stderr');
    expect((await client.data('GET', '/sandbox/v1/forwarding')).url).toBe(`${laptop.url}/webhooks`);

    const payment = await pay(client);
    const out = await listen.waitFor(/succeeded[^\n]*HTTP 200/);
    const lines = out.split('\n').filter((line) => /^\d{4}-/.test(line));
    expect(lines.map((line) => line.split(/\s{2,}/).slice(1, 4))).toEqual([
      ['created', `payment ${payment.id}`, 'HTTP 200'],
      ['cash_in_received', `payment ${payment.id}`, 'HTTP 200'],
      ['succeeded', `payment ${payment.id}`, 'HTTP 200'],
    ]);
    expect(lines[0]).toMatch(/\d+ ms {2}=> http:\/\/127\.0\.0\.1:\d+\/webhooks$/);
    expect(out).toContain(`"vaPaymentId": "${payment.id}"`);
    expect(out).toContain('response body: ok');
    expect(laptop.received).toHaveLength(3);

    listen.child.kill('SIGINT');
    expect(await listen.exited).toBe(0);
    expect(listen.stderr()).toMatch(/forwarding off/);
    expect(await client.data('GET', '/sandbox/v1/forwarding')).toEqual({ url: null, events: null, since: null });
  });

  it('--events forwards and prints only those event types; each line has the status and ms, --print-body the response body', async () => {
    const laptop = await useReceiver((request) => ({ status: 202, body: `handled ${request.body.eventType}` }));
    const client = account();
    const env = { VA_SANDBOX_URL: server.url, VA_SANDBOX_API_KEY: client.key };
    const listen = spawnCli(
      ['listen', '--forward-to', laptop.url, '--events', 'created,succeeded', '--print-body'],
      env,
    );
    expect(await listen.waitFor(/forwarding/, 'stderr')).toMatch(
      /forwarding the created, succeeded callbacks of this account to \S+; the others still go to their own URLs \(Ctrl-C to stop\)/,
    );
    expect((await client.data('GET', '/sandbox/v1/forwarding')).events).toEqual(['created', 'succeeded']);

    const payment = await pay(client);
    const out = await listen.waitFor(/succeeded[^\n]*HTTP 202/);
    const lines = out.split('\n').filter((line) => /^\d{4}-/.test(line));
    expect(lines.map((line) => line.split(/\s{2,}/).slice(1, 5))).toEqual([
      ['created', `payment ${payment.id}`, 'HTTP 202', expect.stringMatching(/^\d+ ms$/)],
      ['succeeded', `payment ${payment.id}`, 'HTTP 202', expect.stringMatching(/^\d+ ms$/)],
    ]);
    expect(out).toContain('response body: handled created');
    expect(out).toContain('response body: handled succeeded');
    expect(laptop.received.map((r) => r.body.eventType)).toEqual(['created', 'succeeded']);
    // cash_in_received went to its own (unreachable) URL and is not listen's to print.
    const [cashIn] = (await client.list('/sandbox/v1/deliveries?eventType=cash_in_received')).data;
    expect(cashIn.forwardedTo).toBeNull();
    expect(out).not.toContain('cash_in_received');

    listen.child.kill('SIGINT');
    expect(await listen.exited).toBe(0);
  });

  it('--events with a type the contract does not have is refused in one line naming --events (exit 1)', async () => {
    const client = account();
    const run = await runCli(['listen', '--forward-to', 'http://127.0.0.1:9', '--events', 'created,paid'], {
      VA_SANDBOX_URL: server.url,
      VA_SANDBOX_API_KEY: client.key,
    });
    expect(run.code).toBe(1);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toMatch(/--events/);
  });

  it('deliveries redeliver ID --to URL sends one delivery to another URL', async () => {
    const { elsewhere, client, newest: first } = await paidToTwoReceivers();
    const env = { VA_SANDBOX_URL: server.url, VA_SANDBOX_API_KEY: client.key };
    const run = await runCli(['deliveries', 'redeliver', first.id, '--to', elsewhere.url], env);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(new RegExp(`forwardedTo +${elsewhere.url}`));
    expect((await elsewhere.waitFor(1))[0]!.body.eventId).toBe(first.eventId);
    // The list and the delivery's page say where the redelivery went, and whose it is.
    const redelivery = await eventually(async () =>
      (await deliveries(client)).find((d: any) => d.redeliveryOf === first.id && d.status === 'delivered'),
    );
    expect(redelivery).toMatchObject({ vaPaymentId: first.vaPaymentId, clientId: null, forwardedTo: elsewhere.url });
    const list = await runCli(['deliveries', 'list'], env);
    const row = list.stdout.split('\n').find((line) => line.startsWith(redelivery.id))!;
    expect(row).toMatch(new RegExp(`payment ${first.vaPaymentId} .*=> ${elsewhere.url} `));
    const show = await runCli(['deliveries', 'show', redelivery.id], env);
    expect(show.stdout).toMatch(new RegExp(`attempt 1 .*HTTP 200 .*=> ${elsewhere.url}$`, 'm'));
  });
});
