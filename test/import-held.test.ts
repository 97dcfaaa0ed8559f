import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  type Api,
  api,
  eventually,
  incidentWithOpenDeliveries,
  PAYMENT,
  runCli,
  spawnServer,
  useReceiver,
  useServer,
  useTmp,
} from './helpers.js';

/**
 * Issue 33: an incident file names its callback URLs, and an import must never call them on its own. Its open
 * deliveries (pending, retrying, and those falling due at once) are `held` until the user releases them.
 */
const server = await useServer();
/** Stands at the URL the incident file names: it must get nothing the user did not release. */
const fileReceiver = await useReceiver();
/** Where the user wants callbacks instead: the forwarding URL, or a release's `{"url"}`. */
const laptop = await useReceiver();
/** Where forwarding points in the last test: answers 500 once, then 200, so a forwarded callback needs its retry. */
const flaky = await useReceiver((_request, index) => ({ status: index === 0 ? 500 : 200 }));
let keyN = 0;
const account = () => api(server.url, `sk_held_${++keyN}`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * An incident file whose deliveries to `fileReceiver` are open: the source account forwarded every attempt to a port
 * that refuses (so `fileReceiver` never heard of them) and exported while they were retrying. One payment of it was
 * due to expire when exported: the import makes its `failed` event, which is held too.
 */
async function incidentFile() {
  const callbackUrl = `${fileReceiver.url}/hooks`;
  const { doc, payments } = await incidentWithOpenDeliveries(server.url, `sk_held_${++keyN}`, callbackUrl, 2);
  const [first, second] = payments;
  doc.account.vaPayments[second.id].expiresAt = new Date(Date.parse(doc.exportedAt) - 1).toISOString();
  return { doc, first, second, callbackUrl };
}

const heldOf = async (client: Api) => (await client.list('/sandbox/v1/deliveries?status=held&limit=100')).data;

describe('POST /sandbox/v1/import: the deliveries of the file are held', () => {
  it('calls no URL of the file, however long it waits or the clock moves; release sends them, and redeliver works on them', async () => {
    const { doc, first, second, callbackUrl } = await incidentFile();
    expect(fileReceiver.received).toHaveLength(0);
    const target = account();
    expect((await target.post('/sandbox/v1/import', doc)).status).toBe(200);

    const held = await heldOf(target);
    expect(held.map((d: any) => [d.eventType, d.url, d.attempts, d.nextAttemptAt])).toEqual([
      ['failed', callbackUrl, 0, null],
      ['created', callbackUrl, 1, null],
      ['created', callbackUrl, 1, null],
    ]);
    expect((await target.data('GET', `/api/v1/va-payments/${second.id}`)).status).toBe('expired');
    expect((await target.data('GET', `/api/v1/va-payments/${first.id}`)).callbackDelivery).toMatchObject({
      events: 1,
      held: 1,
      retrying: 0,
      pending: 0,
    });

    // Past every retry time, in real time and by the clock: nothing reaches the file's URL.
    await sleep(3000);
    await target.data('POST', '/sandbox/v1/clock/advance', { seconds: 60 });
    await sleep(500);
    expect(fileReceiver.received).toHaveLength(0);
    expect(await heldOf(target)).toHaveLength(3);

    // Redeliver works on a held one: a new delivery to {"url"}, the held one stays held.
    const failedId = held[0].id;
    expect(
      (await target.post(`/sandbox/v1/deliveries/${failedId}/redeliver`, { url: `${laptop.url}/redelivered` })).status,
    ).toBe(201);
    await laptop.waitFor(1, (r) => r.url === '/redelivered');
    expect((await target.data('GET', `/sandbox/v1/deliveries/${failedId}`)).status).toBe('held');

    // Released, the first payment's callback reaches the file's URL, as a first attempt.
    const firstEvent: any = Object.values(doc.account.events).find((e: any) => e.vaPaymentId === first.id);
    const createdId = held.find((d: any) => d.eventId === firstEvent.id).id;
    const released = await target.post(`/sandbox/v1/deliveries/${createdId}/release`);
    expect(released.status).toBe(200);
    expect(released.body.data).toMatchObject({ id: createdId, status: 'pending' });
    const [got] = await fileReceiver.waitFor(1);
    expect(got!.headers['x-service-event-id']).toBe(released.body.data.eventId);
    await eventually(
      async () => (await target.data('GET', `/sandbox/v1/deliveries/${createdId}`)).status === 'delivered',
      5000,
      'delivered',
    );
    expect((await target.post(`/sandbox/v1/deliveries/${createdId}/release`)).body.error.code).toBe('INVALID_STATE');

    // With forwarding set, releasing all sends the rest there, not to the file's URL.
    await target.data('PUT', '/sandbox/v1/forwarding', { url: `${laptop.url}/forwarded` });
    expect(await target.data('POST', '/sandbox/v1/deliveries/release')).toEqual({ released: 2 });
    const forwarded = await laptop.waitFor(2, (r) => r.url === '/forwarded');
    expect(forwarded.map((r) => r.headers['x-service-event-type']).sort()).toEqual(['created', 'failed']);
    expect(await heldOf(target)).toHaveLength(0);
    await sleep(300);
    expect(fileReceiver.received).toHaveLength(1);
  });

  it('a release with {"url"} sends that one delivery there; the CLI lists held ones and releases them', async () => {
    const { doc } = await incidentFile();
    const heard = fileReceiver.received.length;
    const target = account();
    await target.data('POST', '/sandbox/v1/import', doc);
    const env = { VA_SANDBOX_URL: server.url, VA_SANDBOX_API_KEY: target.key };

    const listed = await runCli(['deliveries', 'list', '--status', 'held'], env);
    expect(listed.stdout.split('\n').filter((line) => / held /.test(line))).toHaveLength(3);
    const [one] = await heldOf(target);
    const sent = await runCli(['deliveries', 'release', one.id, '--to', `${laptop.url}/one`], env);
    expect(sent.code).toBe(0);
    expect(sent.stdout).toMatch(new RegExp(`^delivery ${one.id} released\\n`));
    await laptop.waitFor(1, (r) => r.url === '/one');

    const usage = await runCli(['deliveries', 'release', '--to', `${laptop.url}/one`], env);
    expect(usage.code).toBe(2);
    await target.data('PUT', '/sandbox/v1/forwarding', { url: `${laptop.url}/all` });
    const all = await runCli(['deliveries', 'release'], env);
    expect(all.stdout).toBe('released 2 held deliveries\n');
    await laptop.waitFor(2, (r) => r.url === '/all');
    expect(fileReceiver.received).toHaveLength(heard);
  });

  it('stays held through a restart of the server: what it sends on start is only what was due, never a held delivery', async () => {
    const data = join(useTmp(), 'state.db');
    const first = await spawnServer(['--data', data]);
    const { doc } = await incidentWithOpenDeliveries(server.url, `sk_held_${++keyN}`, `${fileReceiver.url}/restart`);
    await api(first.url, 'sk_restart').data('POST', '/sandbox/v1/import', doc);
    first.child.kill('SIGKILL');
    await first.exited;

    const second = await spawnServer(['--data', data]);
    const again = api(second.url, 'sk_restart');
    await again.data('POST', '/sandbox/v1/clock/advance', { seconds: 60 });
    await sleep(1000);
    expect(fileReceiver.received.filter((r) => r.url === '/restart')).toEqual([]);
    expect(await heldOf(again)).toHaveLength(1);
    // The account is still held after the restart: a callback it raises now is held too (issue 38).
    await again.data('POST', '/api/v1/va-payments', { ...PAYMENT, callbackUrl: `${fileReceiver.url}/restart` });
    expect(await heldOf(again)).toHaveLength(2);
    expect(await again.data('POST', '/sandbox/v1/deliveries/release')).toEqual({ released: 2 });
    await fileReceiver.waitFor(2, (r) => r.url === '/restart');
  });
});

/**
 * Issue 38, finding 3: after an import the account itself is held, not only the file's deliveries. Callbacks it raises
 * (an expiry, a transfer to one of its CVUs, a retry) never reach a URL of the file until the user releases them.
 */
describe('an imported account calls no URL of its file until released', () => {
  it('holds what it raises after the import (an expiry 1 s later, transfers, retries) until release; forwarding takes new ones meanwhile', {
    timeout: 30_000,
  }, async () => {
    const callbackUrl = `${fileReceiver.url}/account`;
    const source = account();
    await source.data('PUT', '/sandbox/v1/forwarding', { url: 'http://127.0.0.1:1/refused' });
    const expiring = await source.data('POST', '/api/v1/va-payments', { ...PAYMENT, callbackUrl });
    const open = await source.data('POST', '/api/v1/va-payments', { ...PAYMENT, callbackUrl });
    const owner = await source.data('POST', '/api/v1/clients', {
      paymentHubId: 1,
      name: 'Cobros SA',
      taxId: '30-71234567-8',
      cashinCallbackUrl: callbackUrl,
    });
    const doc = await source.data('GET', '/sandbox/v1/export');
    doc.account.vaPayments[expiring.id].expiresAt = new Date(Date.parse(doc.exportedAt) + 1000).toISOString();
    const heard = () => fileReceiver.received.filter((r) => r.url === '/account');

    const target = account();
    expect((await target.post('/sandbox/v1/import', doc)).status).toBe(200);
    const fromFile = (await heldOf(target)).length;
    await target.data('POST', '/sandbox/v1/transfers', { to: open.cvu, total: 10 });
    await target.data('POST', '/sandbox/v1/transfers', { to: owner.cvu, total: 5 });
    // Past the expiry, in real time: the sandbox clock runs with it.
    await eventually(
      async () => (await target.data('GET', `/api/v1/va-payments/${expiring.id}`)).status === 'expired',
      5000,
      'the expiry',
    );
    await sleep(500);
    expect(heard()).toEqual([]);
    const raised = (await heldOf(target)).slice(0, -fromFile);
    expect(raised.map((d: any) => [d.eventType, d.url, d.reason]).sort()).toEqual(
      [['cash_in_received'], ['client.cashin'], ['failed'], ['succeeded']].map(([type]) => [
        type,
        callbackUrl,
        'raised in an imported account: sent only when released',
      ]),
    );
    const cli = await runCli(['deliveries', 'list', '--status', 'held'], {
      VA_SANDBOX_URL: server.url,
      VA_SANDBOX_API_KEY: target.key,
    });
    expect(cli.stdout.split('\n').filter((line) => / held /.test(line))).toHaveLength(raised.length + fromFile);

    // While forwarding is set, a new callback goes there, pinned: its retry goes there too once forwarding is off.
    await target.data('PUT', '/sandbox/v1/forwarding', { url: `${flaky.url}/forwarded` });
    await target.data('POST', '/sandbox/v1/transfers', { to: owner.cvu, total: 6 });
    await flaky.waitFor(1);
    await target.data('DELETE', '/sandbox/v1/forwarding');
    await target.data('POST', '/sandbox/v1/clock/advance', { seconds: 6 });
    await flaky.waitFor(2);
    expect(flaky.received.map((r) => r.headers['x-service-event-type'])).toEqual(['client.cashin', 'client.cashin']);
    await sleep(300);
    expect(heard()).toEqual([]);

    // Released, every held one goes to the file's URL; the account is held no more: the next callback goes at once.
    expect(await target.data('POST', '/sandbox/v1/deliveries/release')).toEqual({ released: raised.length + fromFile });
    await fileReceiver.waitFor(raised.length + fromFile, (r) => r.url === '/account');
    await target.data('POST', '/sandbox/v1/transfers', { to: owner.cvu, total: 7 });
    await fileReceiver.waitFor(raised.length + fromFile + 1, (r) => r.url === '/account');
    expect(await heldOf(target)).toEqual([]);
  });

  it('forwarding with events takes only those types while the account is held; the others stay held', async () => {
    const callbackUrl = `${fileReceiver.url}/filtered`;
    const source = account();
    const owner = await source.data('POST', '/api/v1/clients', {
      paymentHubId: 1,
      name: 'Filtro SA',
      taxId: '30-1',
      cashinCallbackUrl: callbackUrl,
    });
    const target = account();
    expect((await target.post('/sandbox/v1/import', await source.data('GET', '/sandbox/v1/export'))).status).toBe(200);
    await target.data('PUT', '/sandbox/v1/forwarding', { url: `${laptop.url}/filtered`, events: ['created'] });
    const payment = await target.data('POST', '/api/v1/va-payments', { ...PAYMENT, callbackUrl });
    await target.data('POST', '/sandbox/v1/transfers', { to: owner.cvu, total: 5 });
    const [created] = await laptop.waitFor(1, (r) => r.url === '/filtered');
    expect(created!.body).toMatchObject({ eventType: 'created', vaPaymentId: payment.id });
    expect((await heldOf(target)).map((d: any) => [d.eventType, d.clientId])).toEqual([['client.cashin', owner.id]]);
    await sleep(300);
    expect(laptop.received.filter((r) => r.url === '/filtered')).toHaveLength(1);
    expect(fileReceiver.received.filter((r) => r.url === '/filtered')).toEqual([]);
    // Released with forwarding still on: a type it does not take goes to its own URL.
    expect(await target.data('POST', '/sandbox/v1/deliveries/release')).toEqual({ released: 1 });
    expect((await fileReceiver.waitFor(1, (r) => r.url === '/filtered'))[0]!.body).toMatchObject({
      eventType: 'client.cashin',
      clientId: owner.id,
    });
    expect(laptop.received.filter((r) => r.url === '/filtered')).toHaveLength(1);
  });
});
