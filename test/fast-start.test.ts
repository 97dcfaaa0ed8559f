/**
 * A restart through the `<data file>.index` sidecar that a clean stop leaves ("fast") must behave exactly like a
 * restart that reads every record ("full": the sidecar deleted before the start). Both variants run every test:
 * build a state through the HTTP API, stop the server cleanly, start a new one on the same file, and compare what
 * the API reads and does. Each restart also checks that it took the path its variant names (`store.quick`), and
 * the last test runs a fast and a full server side by side on copies of one file and compares their every answer.
 */
import { randomUUID } from 'node:crypto';
import { copyFileSync, readdirSync, rmSync, statSync, utimesSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isValidCvu } from '../src/core/cvu.js';
import { FakeClock } from '../src/core/clock.js';
import { mulberry32, seededIds, type IdSource } from '../src/core/ids.js';
import { startServer, type RunningServer } from '../src/sandbox/server.js';
import { api, eventually, useReceiver, useTmp, type Api, type ApiResponse, PAYMENT, CLIENT } from './helpers.js';

const KEY = 'sk_fast_start';
/** Long enough that no retry falls due by real time during a test: only clock moves release them. */
const RETRY_DELAYS = [300, 300];

type Variant = 'fast' | 'full';

/** Servers this file started and has not stopped: stopped after each test, a failed one too. */
const running = new Set<RunningServer>();
afterEach(async () => {
  for (const server of running) await server.close();
  running.clear();
});

/** Real time, plus what a test adds while the server is down (time passing between a stop and the next start). */
class SkewedClock {
  skewMs = 0;
  now = (): number => Date.now() + this.skewMs;
}

/**
 * Random record ids, but the digits of CVUs and aliases drawn from the same seed on every start: a restarted server
 * draws the candidates the first one drew, which are all taken by then, so an index that missed any of them would
 * hand a CVU or alias out twice.
 */
function replayingIds(): IdSource {
  const next = mulberry32(4580);
  return { uuid: () => randomUUID(), int: (max) => Math.floor(next() * max) };
}

/** A file-backed sandbox with one API key, restarted the way the variant says. */
async function openSandbox(variant: Variant) {
  const wall = new SkewedClock();
  const data = join(useTmp(), 'state.json');
  const start = async (file: string) => {
    const server = await startServer({
      port: 0,
      host: '127.0.0.1',
      data: file,
      retryDelays: RETRY_DELAYS,
      callbackTimeoutMs: 30_000,
      clock: wall,
      ids: replayingIds(),
    });
    running.add(server);
    return server;
  };
  const stop = async (server: RunningServer) => {
    running.delete(server);
    await server.close();
  };
  let server = await start(data);
  return {
    wall,
    data,
    get a(): Api {
      return api(server.url, KEY);
    },
    /**
     * Clean stop; `whileDown` runs with no server up; `full` then deletes the sidecar; a new server starts on the
     * file, through the sidecar (a quick start) exactly when the variant is `fast`, so neither quietly takes the other path.
     */
    async restart(whileDown: () => void = () => {}) {
      await stop(server);
      whileDown();
      forgetSidecar(variant, data);
      server = await start(data);
      expect(server.runtime.store.quick, 'a start through the sidecar').toBe(variant === 'fast');
    },
    /** Another server on another data file (a copy), stopped with `stop`. */
    startOn: start,
    stop,
  };
}

/**
 * Copies a data file and the files beside it that belong to it (journal, sidecar), but not its lock, keeping their
 * modification times, as the files a crash leaves behind keep theirs.
 */
function copyDataFiles(from: string, to: string): void {
  for (const name of readdirSync(dirname(from))) {
    if (name.startsWith(basename(from)) && !name.endsWith('.lock')) {
      const source = join(dirname(from), name);
      const target = join(dirname(to), basename(to) + name.slice(basename(from).length));
      copyFileSync(source, target);
      const { atime, mtime } = statSync(source);
      utimesSync(target, atime, mtime);
    }
  }
}

/** `full` deletes the sidecar, so the start reads every record. */
function forgetSidecar(variant: Variant, data: string): void {
  if (variant === 'full') rmSync(`${data}.index`, { force: true });
}

/**
 * A real receiver: 500 on `/fail…` while `mode.failing`, no answer at all on `/hang…` while `mode.hanging`, else 200.
 */
async function openReceiver() {
  const mode = { failing: true, hanging: false };
  const receiver = await useReceiver((request) => {
    if (request.url.startsWith('/fail') && mode.failing) return { status: 500, body: 'down for maintenance' };
    if (request.url.startsWith('/hang') && mode.hanging) return 'hang';
    return { status: 200 };
  });
  return { ...receiver, mode };
}

const mixedCase = (text: string) =>
  text
    .split('')
    .map((ch, i) => (i % 2 ? ch.toLowerCase() : ch.toUpperCase()))
    .join('');

async function times<T>(n: number, make: (i: number) => Promise<T>): Promise<T[]> {
  const made: T[] = [];
  for (let i = 0; i < n; i++) made.push(await make(i));
  return made;
}

// --- reads ------------------------------------------------------------------------------------------------------

/** Every page of a list, as the API answers them (items and pagination). */
async function pages(a: Api, path: string, limit: number): Promise<any[]> {
  const sep = path.includes('?') ? '&' : '?';
  const got: any[] = [];
  for (let page = 1; ; page++) {
    const body = (await a.call('GET', `${path}${sep}limit=${limit}&page=${page}`)).body;
    // Every list answers `data` (the items) and `pagination` beside it, but a client's transactions (the real shape).
    const data = Array.isArray(body.data) ? { items: body.data, pagination: body.pagination } : { items: body.data.transactions, pagination: body.data.pagination };
    got.push(data);
    if (page >= data.pagination.totalPages) return got;
  }
}

/** Every item of a list, newest first. */
async function all(a: Api, path: string): Promise<any[]> {
  return (await pages(a, path, 100)).flatMap((page) => page.items);
}

/**
 * Everything the account reads back: every list (all pages, at two page sizes, and with filters), every payment,
 * client, balance and delivery by id, the hub, the clock's offset and the export (without its `exportedAt`).
 */
async function collectReads(a: Api) {
  const lists: Record<string, any[]> = {};
  const list = async (path: string, limit = 100) => {
    const got = await pages(a, path, limit);
    lists[`GET ${path} (limit ${limit})`] = got;
    return got.flatMap((page) => page.items);
  };
  const payments = await list('/api/v1/va-payments');
  await list('/api/v1/va-payments', 7);
  for (const status of ['waiting,underpaid', 'completed,overpaid', 'expired', 'cancelled']) {
    await list(`/api/v1/va-payments?status=${status}`);
  }
  await list('/api/v1/va-payments?externalReference=wait-1');
  const clients = await list('/api/v1/clients');
  await list('/api/v1/clients?externalReference=cli-ana');
  for (const client of clients) {
    await list(`/api/v1/va-payments?clientId=${client.id}`);
    await list(`/api/v1/clients?taxId=${client.taxId.replaceAll('-', '')}`);
    await list(`/api/v1/clients/${client.id}/transactions`);
    await list(`/api/v1/clients/${client.id}/transactions?entryType=cash_in`);
    await list(`/api/v1/clients/${client.id}/invoices`);
  }
  const transfers = await list('/sandbox/v1/transfers');
  await list('/sandbox/v1/transfers', 7);
  const events = await list('/sandbox/v1/events');
  await list('/sandbox/v1/events', 7);
  const deliveries = await list('/sandbox/v1/deliveries');
  await list('/sandbox/v1/deliveries', 7);
  for (const filter of ['status=delivered', 'status=retrying,pending', 'status=dropped', 'eventType=created', 'eventType=client.cashin']) {
    await list(`/sandbox/v1/deliveries?${filter}`);
  }

  const byId: Record<string, any> = {};
  const one = async (path: string) => void (byId[path] = await a.data('GET', path));
  await Promise.all([
    ...payments.map((p) => one(`/api/v1/va-payments/${p.id}`)),
    ...clients.flatMap((c) => [one(`/api/v1/clients/${c.id}`), one(`/api/v1/clients/${c.id}/balance`)]),
    ...deliveries.map((d) => one(`/sandbox/v1/deliveries/${d.id}`)),
  ]);
  const hub = await a.data('GET', '/sandbox/v1/hubs/1');
  const { offsetSeconds } = await a.data('GET', '/sandbox/v1/clock');
  const { exportedAt: _exportedAt, ...exported } = await a.data('GET', '/sandbox/v1/export');
  return { payments, clients, transfers, events, deliveries, lists, byId, hub, offsetSeconds, exported };
}
type Reads = Awaited<ReturnType<typeof collectReads>>;

/** Deep-equal, compared request by request so a difference names the request it is in. */
function expectSameReads(after: Reads, before: Reads): void {
  expect(Object.keys(after.lists)).toEqual(Object.keys(before.lists));
  for (const [request, got] of Object.entries(after.lists)) expect(got, request).toEqual(before.lists[request]);
  expect(Object.keys(after.byId).sort()).toEqual(Object.keys(before.byId).sort());
  for (const [path, got] of Object.entries(after.byId)) expect(got, `GET ${path}`).toEqual(before.byId[path]);
  expect(after.hub, 'GET /sandbox/v1/hubs/1').toEqual(before.hub);
  expect(after.offsetSeconds, 'the clock offset').toBe(before.offsetSeconds);
  expect(after.exported, 'GET /sandbox/v1/export').toEqual(before.exported);
}

/** Waits until every delivery's first attempt has finished, then makes one write, so those attempts are on disk too. */
async function settle(a: Api): Promise<void> {
  await eventually(
    async () => (await a.list('/sandbox/v1/deliveries?status=pending')).pagination.total === 0,
    10_000,
    'every first callback attempt to finish',
  );
  // Writes land in order: once this one is answered, the attempts recorded before it are in the journal too.
  await a.data('PATCH', '/sandbox/v1/hubs/1', { name: 'Sandbox Hub' });
}

const countBy = (items: any[], field: string) =>
  items.reduce<Record<string, number>>((counts, item) => ({ ...counts, [item[field]]: (counts[item[field]] ?? 0) + 1 }), {});

// --- the state ----------------------------------------------------------------------------------------------------

/**
 * The state every test starts from, built through the API: 34 time-locked payments (paid to the CVU, paid by alias
 * in lower and mixed case, underpaid, cancelled, expired by the clock, waiting; open and overpaid ones; one created
 * with an Idempotency-Key; one whose callback fails and waits to retry), 4 amount-locked ones, 3 clients (one with a
 * changed taxId), transfers to client CVUs and aliases, returned transfers, invoices and a debit. The first pool CVU
 * released is `cancelled[0]`'s, a clock second before any other. Every callback but the failing one is answered.
 */
async function buildState(a: Api, receiver: string) {
  const post = (path: string, body?: unknown) => a.data('POST', path, body);
  const pay = (body: Record<string, unknown>) => post('/api/v1/va-payments', { ...PAYMENT, ...body });
  const transfer = (to: string, total: number, taxes = 0) => post('/sandbox/v1/transfers', { to, total, taxes });
  const hub = await a.data('GET', '/sandbox/v1/hubs/1');

  const ana = await post('/api/v1/clients', {
    ...CLIENT, name: 'Ana Pérez',
    taxId: '20-12345678-3',
    aliasPrefixHint: 'ana',
    aliasSuffixHint: 'perez',
    cashinCallbackUrl: `${receiver}/cashin/ana`,
    emails: ['ana@example.com'],
    externalReference: 'cli-ana',
    metadata: { tier: 'gold' },
  });
  const beto = await post('/api/v1/clients', { ...CLIENT, name: 'Beto Gómez', taxId: '27-11111111-1' });
  const carla = await post('/api/v1/clients', { ...CLIENT, name: 'Carla Núñez', taxId: '30-22222222-2', aliasPrefixHint: 'ana', aliasSuffixHint: 'perez' });
  expect([ana.alias, carla.alias]).toEqual(['ANA.PEREZ.SANDBOX', 'ANA.PEREZ.SANDBOX-2']);
  await a.data('PATCH', `/api/v1/clients/${carla.id}`, { taxId: '30-33333333-3' }); // frees 30-22222222-2

  // Time-locked payments, all created before the first one ends.
  const paid = await times(6, (i) =>
    pay({
      amount: 1000 + i * 100,
      externalReference: `paid-${i}`,
      ...(i % 2 === 0 ? { clientId: ana.id } : {}),
      ...(i < 3 ? { callbackUrl: `${receiver}/pay/paid-${i}` } : {}),
    }),
  );
  const byAlias = await times(4, (i) =>
    pay({ amount: 2000 + i * 10, successUrl: `${receiver}/ok`, failureUrl: `${receiver}/ko`, ...(i % 2 ? { clientTaxId: '20-12345678-3' } : {}) }),
  );
  const under = await times(3, (i) => pay({ amount: 3000 + i, metadata: { n: i } }));
  const cancelled = await times(3, (i) => pay({ amount: 4000 + i, callbackUrl: `${receiver}/pay/cancel-${i}` }));
  const expiring = await times(4, (i) => pay({ amount: 5000 + i, ttlSeconds: 60, clientName: `Expiring ${i}` }));
  const waiting = await times(10, (i) =>
    pay({
      ...([0, 3, 6].includes(i) ? {} : { amount: 6000 + i }), // open amounts too
      ...(i === 9 ? { lockMode: 'amount_and_time' } : {}),
      ...(i === 1 ? { callbackUrl: `${receiver}/pay/wait-1` } : {}),
      externalReference: `wait-${i}`,
    }),
  );
  const open = await pay({ externalReference: 'open' });
  const overpaid = await pay({ amount: 100 });
  const idemBody = { ...PAYMENT, amount: 4242, externalReference: 'idem-42', metadata: { cart: 'c-42' } };
  const idemResponse: ApiResponse = await a.post('/api/v1/va-payments', idemBody, { 'Idempotency-Key': 'order-42' });
  expect(idemResponse.status).toBe(201);
  const failing = await pay({ amount: 77, callbackUrl: `${receiver}/fail/f` });

  // Amount-locked payments on the hub's collection CVU.
  const a1500 = await pay({ lockMode: 'amount', amount: 1500, callbackUrl: `${receiver}/pay/amount-1500` });
  const a2500 = await pay({ lockMode: 'amount', amount: 2500 });
  const a3500 = await pay({ lockMode: 'amount', amount: 3500 });
  const a4500 = await pay({ lockMode: 'amount', amount: 4500, clientId: beto.id });
  expect(a1500.cvu).toBe(hub.collectionCvu);

  // Ends, in a known order: cancelled[0] first, a clock second before anything else.
  await post('/sandbox/v1/clock/advance', { seconds: 1 });
  await post(`/api/v1/va-payments/${cancelled[0].id}/cancel`);
  await post('/sandbox/v1/clock/advance', { seconds: 1 });
  for (const payment of [...cancelled.slice(1), a3500]) await post(`/api/v1/va-payments/${payment.id}/cancel`);
  for (const [i, payment] of paid.entries()) expect((await transfer(payment.cvu, payment.amount, i * 1.5)).target.id).toBe(payment.id);
  for (const [i, payment] of byAlias.entries()) {
    const to = i < 2 ? payment.alias.toLowerCase() : mixedCase(payment.alias);
    expect((await transfer(to, payment.amount, 20)).target.id).toBe(payment.id);
  }
  for (const payment of under) expect((await transfer(payment.cvu, payment.amount - 500, 10)).target.id).toBe(payment.id);
  expect((await transfer(open.alias, 123.45)).target.id).toBe(open.id);
  expect((await transfer(overpaid.cvu, 150, 1)).target.id).toBe(overpaid.id);
  expect((await transfer(hub.collectionAlias.toLowerCase(), 2500)).target.id).toBe(a2500.id);
  expect((await transfer(ana.cvu, 1000, 30.25)).target).toEqual({ type: 'client', id: ana.id });
  expect((await transfer(mixedCase(beto.alias), 500)).target).toEqual({ type: 'client', id: beto.id });
  expect((await transfer(cancelled[1].cvu, 10)).outcome).toBe('returned');
  expect((await transfer(hub.collectionCvu, 9999)).outcome).toBe('returned');
  expect((await transfer(waiting[9].cvu, 1)).outcome).toBe('returned'); // amount_and_time takes only its amount

  await post(`/api/v1/clients/${ana.id}/invoices`, { total_amount: 800, description: 'Cuota 1', dueDate: '2026-12-31' });
  const second = await post(`/api/v1/clients/${ana.id}/invoices`, { total_amount: 200, externalReference: 'inv-2' });
  await a.data('PATCH', `/api/v1/clients/${ana.id}/invoices/${second.id}`, { status: 'cancelled' });
  await post(`/sandbox/v1/clients/${ana.id}/debits`, { amount: 150.5, description: 'Comisión' });

  await post('/sandbox/v1/clock/advance', { seconds: 61 }); // the 60-second ones expire
  await settle(a);
  return {
    hub, ana, beto, carla, paid, byAlias, under, cancelled, expiring, waiting, open, overpaid, failing,
    idem: { key: 'order-42', body: idemBody, response: idemResponse },
    amount: { a1500, a2500, a3500, a4500 },
  };
}
type World = Awaited<ReturnType<typeof buildState>>;

/** More writes of every kind, for the restarts after the first (`round` keeps their values apart). */
async function writeMore(a: Api, world: World, receiver: string, round: number) {
  const post = (path: string, body?: unknown) => a.data('POST', path, body);
  const payment = await post('/api/v1/va-payments', {
    ...PAYMENT, amount: 320 + round,
    externalReference: `more-${round}`,
    clientId: world.beto.id,
    callbackUrl: `${receiver}/pay/more-${round}`,
  });
  expect((await post('/sandbox/v1/transfers', { to: mixedCase(payment.alias), total: 100 })).target.id).toBe(payment.id);
  const open = await post('/api/v1/va-payments', { ...PAYMENT, externalReference: `more-open-${round}` });
  await post(`/api/v1/va-payments/${open.id}/cancel`);
  const client = await post('/api/v1/clients', { ...CLIENT, name: `Eva ${round}`, taxId: `23-5555555${round}-9`, aliasPrefixHint: 'eva' });
  expect((await post('/sandbox/v1/transfers', { to: client.alias.toLowerCase(), total: 75.25, taxes: 0.25 })).target.id).toBe(client.id);
  const invoice = await post(`/api/v1/clients/${client.id}/invoices`, { total_amount: 50 });
  await a.data('PATCH', `/api/v1/clients/${client.id}/invoices/${invoice.id}`, { status: 'paid' });
  await post(`/sandbox/v1/clients/${world.ana.id}/debits`, { amount: round });
  await post('/sandbox/v1/clock/advance', { seconds: 10 });
  const replayed = await a.post('/api/v1/va-payments', { ...PAYMENT, amount: 900 + round }, { 'Idempotency-Key': `more-${round}` });
  expect(replayed.status).toBe(201);
  await settle(a);
  return { payment, client };
}

// --- the tests ------------------------------------------------------------------------------------------------------

describe.each(['fast', 'full'] as const)('a restart after a clean stop (%s)', (variant) => {
  it('reads everything back exactly as it was: every list in the same order, every record by id', async () => {
    const receiver = await openReceiver();
    const sandbox = await openSandbox(variant);
    const world = await buildState(sandbox.a, receiver.url);
    const before = await collectReads(sandbox.a);

    // What was built is what is read (so the comparison below is not of two empty lists).
    expect(countBy(before.payments, 'status')).toEqual({ completed: 12, overpaid: 1, underpaid: 3, cancelled: 4, expired: 4, waiting: 14 });
    expect(countBy(before.payments, 'lockMode')).toEqual({ time: 33, amount_and_time: 1, amount: 4 });
    expect(before.payments.at(-1).id).toBe(world.paid[0].id);
    expect(before.payments[0].id).toBe(world.amount.a4500.id);
    expect(before.clients.map((c: any) => c.name)).toEqual(['Carla Núñez', 'Beto Gómez', 'Ana Pérez']);
    expect(before.byId[`/api/v1/clients/${world.ana.id}/balance`]).toEqual({
      clientId: world.ana.id,
      currency: 'ARS',
      totalCashIn: 4560.75, // net: 969.75 to its CVU, 1000 + 1197 + 1394 for paid[0], paid[2], paid[4]
      totalCashOut: 150.5,
      totalInvoiced: 1000, // the cancelled invoice counts too
      balance: 3410.25,
    });
    expect(countBy(before.transfers, 'outcome')).toEqual({ credited: 18, returned: 3 });
    expect(countBy(before.deliveries, 'status')).toMatchObject({ retrying: 1, dropped: expect.any(Number), delivered: expect.any(Number) });
    expect(before.offsetSeconds).toBe(63);

    await sandbox.restart();
    expectSameReads(await collectReads(sandbox.a), before);
  });

  it('writes after the restart behave as before it: aliases, amount locks, taxIds, idempotency, expiry, the pool', async () => {
    const receiver = await openReceiver();
    const sandbox = await openSandbox(variant);
    const world = await buildState(sandbox.a, receiver.url);
    // A client whose CVU is still being provisioned at the stop (5 clock seconds): it gets one after the restart.
    await sandbox.a.data('PATCH', '/sandbox/v1/hubs/1', { cvuProvisioning: 'delayed' });
    const dora = await sandbox.a.data('POST', '/api/v1/clients', { ...CLIENT, name: 'Dora', taxId: '20-44444444-4', aliasPrefixHint: 'dora' });
    expect(dora).toMatchObject({ cvuStatus: 'provisioning', cvu: null });
    await sandbox.a.data('PATCH', '/sandbox/v1/hubs/1', { cvuProvisioning: 'inline' });
    const before = await collectReads(sandbox.a);
    await sandbox.restart();
    const a = sandbox.a;
    const transfer = (to: string, total: number, taxes = 0) => a.data('POST', '/sandbox/v1/transfers', { to, total, taxes });

    // (a) A transfer to a waiting payment's alias, in mixed case, credits that payment, and its callbacks go out.
    const target = world.waiting[1];
    const credited = await transfer(mixedCase(target.alias), 6001, 12.5);
    expect(credited).toMatchObject({ outcome: 'credited', cvu: target.cvu, target: { type: 'va_payment', id: target.id } });
    expect(await a.data('GET', `/api/v1/va-payments/${target.id}`)).toMatchObject({
      status: 'completed',
      totalReceived: 6001,
      receivedAmount: 5988.5,
      remainingAmount: 0,
    });
    const calls = await receiver.waitFor(3, (r) => r.url === '/pay/wait-1');
    expect(calls.map((r) => r.body.eventType)).toEqual(['created', 'cash_in_received', 'succeeded']);
    expect(calls.slice(1).map((r) => r.headers['x-service-event-id'])).toEqual(credited.eventIds);
    // A client's alias in mixed case is its CVU; a cancelled payment's alias takes nothing.
    expect((await transfer(mixedCase(world.ana.alias), 100)).target).toEqual({ type: 'client', id: world.ana.id });
    const anaBalance = await a.data('GET', `/api/v1/clients/${world.ana.id}/balance`);
    expect(anaBalance.totalCashIn).toBe(before.byId[`/api/v1/clients/${world.ana.id}/balance`].totalCashIn + 100);
    const returned = await transfer(mixedCase(world.cancelled[2].alias), 4002);
    expect(returned).toMatchObject({ outcome: 'returned', reason: 'no active VA payment holds this CVU', cvu: world.cancelled[2].cvu });

    // (b) The active amount lock of 1500 still holds; the locks that ended before the stop are free.
    const conflict = await a.post('/api/v1/va-payments', { ...PAYMENT, lockMode: 'amount', amount: 1500 });
    expect(conflict.status).toBe(409);
    expect(conflict.body.error).toMatchObject({ code: 'AMOUNT_LOCK_CONFLICT', details: ['amount: already locked by an active VA payment'] });
    expect(conflict.body.error.message).toContain(world.amount.a1500.id);
    for (const amount of [2500, 3500]) expect((await a.post('/api/v1/va-payments', { ...PAYMENT, lockMode: 'amount', amount })).status).toBe(201);
    expect((await transfer(world.hub.collectionCvu, 1500)).target).toEqual({ type: 'va_payment', id: world.amount.a1500.id });
    expect((await a.data('GET', `/api/v1/va-payments/${world.amount.a1500.id}`)).status).toBe('completed');
    const viaAlias = await transfer(mixedCase(world.hub.collectionAlias), 4500, 45);
    expect(viaAlias.target).toEqual({ type: 'va_payment', id: world.amount.a4500.id });
    const betoEntries = (await a.data('GET', `/api/v1/clients/${world.beto.id}/transactions`)).transactions;
    expect(betoEntries[0]).toMatchObject({ entryType: 'cash_in', amount: 4455, paymentId: world.amount.a4500.id });
    expect((await a.post('/api/v1/va-payments', { ...PAYMENT, lockMode: 'amount', amount: 1500 })).status).toBe(201); // its lock ended

    // (c) A taxId in use, as given or by its digits, is refused; the one carla gave up before the stop is free.
    for (const taxId of ['20-12345678-3', '20123456783', '30-33333333-3']) {
      const taken = await a.post('/api/v1/clients', { ...CLIENT, name: 'Copycat', taxId });
      expect(taken.status).toBe(409);
      expect(taken.body.error).toMatchObject({ code: 'TAX_ID_ALREADY_EXISTS', details: ['taxId: already used by another client of this account'] });
    }
    const patched = await a.patch(`/api/v1/clients/${world.beto.id}`, { taxId: '20123456783' });
    expect([patched.status, patched.body.error.code]).toEqual([409, 'TAX_ID_ALREADY_EXISTS']);
    expect((await a.post('/api/v1/clients', { ...CLIENT, name: 'Freed', taxId: '30-22222222-2' })).status).toBe(201);

    // (d) The Idempotency-Key'd create replays its first response; another body under the key is a conflict.
    const replay = await a.post('/api/v1/va-payments', world.idem.body, { 'Idempotency-Key': world.idem.key });
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(world.idem.response.body);
    expect(replay.body.data.id).toBe(world.idem.response.body.data.id);
    const reused = await a.post('/api/v1/va-payments', { ...PAYMENT, ...world.idem.body, amount: 1 }, { 'Idempotency-Key': world.idem.key });
    expect([reused.status, reused.body.error.code]).toEqual([409, 'IDEMPOTENCY_KEY_CONFLICT']);
    expect((await a.list('/api/v1/va-payments?externalReference=idem-42')).pagination.total).toBe(1);

    // (g) Every payment's callbackDelivery counts its deliveries, old and new.
    await settle(a);
    await expectSummariesMatchDeliveries(a);
    expect((await a.data('GET', `/api/v1/va-payments/${world.failing.id}`)).callbackDelivery).toMatchObject({
      events: 1, retrying: 1, delivered: 0, lastEventType: 'created',
    });
    expect((await a.data('GET', `/api/v1/va-payments/${target.id}`)).callbackDelivery).toMatchObject({
      events: 3, delivered: 3, lastEventType: 'succeeded',
    });
    expect((await a.data('GET', `/api/v1/va-payments/${world.byAlias[0].id}`)).callbackDelivery).toMatchObject({
      events: 3, delivered: 1, dropped: 2, lastEventType: 'succeeded',
    });

    // (e) Past the TTL every active payment expires; new time-locked payments then take the pool's CVUs, released
    // longest ago first (cancelled[0]'s before all), and each keeps its alias.
    const active = (await all(a, '/api/v1/va-payments?status=waiting,underpaid'));
    expect(active.length).toBe(17); // 14 time-locked, 3 amount-locked made in (b)
    await a.data('POST', '/sandbox/v1/clock/advance', { seconds: 3600 });
    const ended = await all(a, '/api/v1/va-payments');
    for (const payment of active) {
      expect(ended.find((p) => p.id === payment.id)).toMatchObject({ status: 'expired', expiredAt: payment.expiresAt });
    }
    expect(ended.filter((p) => p.status === 'waiting' || p.status === 'underpaid')).toEqual([]);
    const failedEvents = (await all(a, '/sandbox/v1/events')).filter((e) => e.eventType === 'failed');
    expect(failedEvents.map((e) => e.vaPaymentId).sort()).toEqual([...world.expiring, ...active].map((p) => p.id).sort());

    const pool = new Map<string, { alias: string; releasedAt: string }>(); // by CVU, from its latest holder
    for (const payment of ended) {
      if (payment.lockMode !== 'amount' && !pool.has(payment.cvu)) pool.set(payment.cvu, { alias: payment.alias, releasedAt: payment.updatedAt });
    }
    expect(pool.size).toBe(34);
    const fresh = await times(pool.size + 3, (i) => a.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 10 + i, externalReference: `after-${i}` }));
    const lent = fresh.slice(0, pool.size);
    expect(lent[0]).toMatchObject({ cvu: world.cancelled[0].cvu, alias: world.cancelled[0].alias });
    expect(new Set(lent.map((p) => p.cvu))).toEqual(new Set(pool.keys()));
    for (const payment of lent) expect(payment.alias).toBe(pool.get(payment.cvu)!.alias);
    const releasedAt = lent.map((p) => pool.get(p.cvu)!.releasedAt);
    expect(releasedAt).toEqual([...releasedAt].sort());

    // (f) With the pool all lent, new payments get new CVUs and aliases, used by no payment, client or the hub
    // (the restarted server drew the same candidates as the first one); dora got hers with the clock too.
    const doraNow = await a.data('GET', `/api/v1/clients/${dora.id}`);
    expect(doraNow).toMatchObject({ cvuStatus: 'active', alias: 'DORA.SANDBOX' });
    expect(isValidCvu(doraNow.cvu)).toBe(true);
    const newOnes = fresh.slice(pool.size);
    const clientsNow = await all(a, '/api/v1/clients');
    const paymentsNow = await all(a, '/api/v1/va-payments');
    const cvuOwners = (cvu: string) => [
      ...paymentsNow.filter((p) => p.cvu === cvu).map((p) => p.id),
      ...clientsNow.filter((c) => c.cvu === cvu).map((c) => c.id),
      ...(world.hub.collectionCvu === cvu ? ['hub'] : []),
    ];
    const aliasOwners = (alias: string) => [
      ...paymentsNow.filter((p) => p.alias.toUpperCase() === alias.toUpperCase()).map((p) => p.id),
      ...clientsNow.filter((c) => c.alias?.toUpperCase() === alias.toUpperCase()).map((c) => c.id),
      ...(world.hub.collectionAlias.toUpperCase() === alias.toUpperCase() ? ['hub'] : []),
    ];
    for (const payment of newOnes) {
      expect(isValidCvu(payment.cvu)).toBe(true);
      expect(cvuOwners(payment.cvu)).toEqual([payment.id]);
      expect(aliasOwners(payment.alias)).toEqual([payment.id]);
      expect((await transfer(mixedCase(payment.alias), 1)).target).toEqual({ type: 'va_payment', id: payment.id });
    }
    for (const client of clientsNow.filter((c) => c.cvu !== null)) {
      expect(cvuOwners(client.cvu)).toEqual([client.id]);
      expect(aliasOwners(client.alias)).toEqual([client.id]);
    }
    expect((await transfer(doraNow.cvu, 10)).target).toEqual({ type: 'client', id: dora.id });
  });

  it('callbacks survive: a retry waiting at the stop is delivered after it, and a delivery never attempted is sent', async () => {
    const receiver = await openReceiver();
    const sandbox = await openSandbox(variant);
    const world = await buildState(sandbox.a, receiver.url);
    // `held`'s first callback hangs at the receiver: its later two are stored, but wait behind it, unattempted.
    receiver.mode.hanging = true;
    const held = await sandbox.a.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 900, callbackUrl: `${receiver.url}/hang/held` });
    await sandbox.a.data('POST', '/sandbox/v1/transfers', { to: held.cvu, total: 900 });
    await receiver.waitFor(1, (r) => r.url === '/hang/held');
    const heldEvents = (await all(sandbox.a, '/sandbox/v1/events')).filter((e) => e.vaPaymentId === held.id).reverse();
    expect(heldEvents.map((e) => [e.eventType, e.deliveries.map((d: any) => [d.status, d.attempts])])).toEqual([
      ['created', [['pending', 0]]],
      ['cash_in_received', [['pending', 0]]],
      ['succeeded', [['pending', 0]]],
    ]);
    const [failingEvent] = (await all(sandbox.a, '/sandbox/v1/events')).filter((e) => e.vaPaymentId === world.failing.id);
    const retrying = failingEvent.deliveries[0];
    expect(retrying).toMatchObject({ status: 'retrying', attempts: 1, lastResponseStatus: 500, lastError: 'http_status' });
    expect(receiver.received.filter((r) => r.url === '/fail/f')).toHaveLength(1);

    await sandbox.restart(() => {
      receiver.mode.failing = false;
      receiver.mode.hanging = false;
    });
    const a = sandbox.a;

    // Sent on start, in the order raised; `created` a second time (its first attempt never finished), same eventId.
    const heldCalls = await receiver.waitFor(4, (r) => r.url === '/hang/held');
    expect(heldCalls.map((r) => [r.body.eventType, r.headers['x-service-event-id']])).toEqual([
      ['created', heldEvents[0].id],
      ['created', heldEvents[0].id],
      ['cash_in_received', heldEvents[1].id],
      ['succeeded', heldEvents[2].id],
    ]);
    expect(heldCalls[3]!.body).toMatchObject({ vaPaymentId: held.id, status: 'completed', payload: { total: 900, remainingAmount: 0 } });

    // The retry waits for its time on the sandbox clock, which the advance brings.
    expect((await a.data('GET', `/sandbox/v1/deliveries/${retrying.id}`)).status).toBe('retrying');
    await a.data('POST', '/sandbox/v1/clock/advance', { seconds: RETRY_DELAYS[0] });
    const retried = await receiver.waitFor(2, (r) => r.url === '/fail/f');
    expect(retried.map((r) => r.headers['x-service-event-id'])).toEqual([failingEvent.id, failingEvent.id]);
    expect(retried[1]!.raw).toBe(retried[0]!.raw);
    const delivered = await eventually(async () => {
      const delivery = await a.data('GET', `/sandbox/v1/deliveries/${retrying.id}`);
      return delivery.status === 'delivered' && delivery;
    }, 10_000, 'the retry to be recorded');
    expect(delivered.attempts.map((t: any) => [t.n, t.responseStatus, t.error])).toEqual([[1, 500, 'http_status'], [2, 200, null]]);
    expect(delivered.nextAttemptAt).toBe(null);

    await settle(a);
    const log = await all(a, '/sandbox/v1/deliveries');
    expect(log.filter((d) => d.status === 'pending' || d.status === 'retrying' || d.status === 'failed')).toEqual([]);
    const heldLog = log.filter((d) => heldEvents.some((e) => e.id === d.eventId));
    expect(heldLog.map((d) => [d.eventType, d.status, d.attempts, d.lastResponseStatus])).toEqual([
      ['succeeded', 'delivered', 1, 200],
      ['cash_in_received', 'delivered', 1, 200],
      ['created', 'delivered', 1, 200],
    ]);
    expect((await a.data('GET', `/api/v1/va-payments/${world.failing.id}`)).callbackDelivery).toMatchObject({ events: 1, delivered: 1, retrying: 0 });
    expect((await a.data('GET', `/api/v1/va-payments/${held.id}`)).callbackDelivery).toMatchObject({ events: 3, delivered: 3, pending: 0 });
  });

  it('what fell due while the server was down (an expiry, a retry) happens on start, before any request', async () => {
    const receiver = await openReceiver();
    const sandbox = await openSandbox(variant);
    const world = await buildState(sandbox.a, receiver.url);
    const short = await sandbox.a.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 50, ttlSeconds: 60, callbackUrl: `${receiver.url}/pay/short` });
    await settle(sandbox.a);
    expect(receiver.received.filter((r) => r.url === '/fail/f')).toHaveLength(1);

    // 400 s pass while it is down: past the short payment's 60 s and the retry's 300 s, not the others' 1800 s.
    await sandbox.restart(() => {
      receiver.mode.failing = false;
      sandbox.wall.skewMs += 400_000;
    });
    const [failed] = await receiver.waitFor(2, (r) => r.url === '/pay/short').then((calls) => calls.slice(1));
    // Raised as at the instant it fell due, as living through those 400 s would have (contract part 4, time order).
    expect(failed!.body).toMatchObject({ vaPaymentId: short.id, eventType: 'failed', status: 'expired', createdAt: short.expiresAt });
    const retried = await receiver.waitFor(2, (r) => r.url === '/fail/f');
    expect(retried[1]!.body.vaPaymentId).toBe(world.failing.id);

    const a = sandbox.a;
    expect(await a.data('GET', `/api/v1/va-payments/${short.id}`)).toMatchObject({ status: 'expired', expiredAt: short.expiresAt });
    expect((await a.data('GET', `/api/v1/va-payments/${world.waiting[2].id}`)).status).toBe('waiting');
    await settle(a);
    expect((await a.data('GET', `/api/v1/va-payments/${world.failing.id}`)).callbackDelivery).toMatchObject({ events: 1, delivered: 1, retrying: 0 });
  });

  it('restarts in a row, and a start on the files a crash would leave, read what was last written', async () => {
    const receiver = await openReceiver();
    const sandbox = await openSandbox(variant);
    const world = await buildState(sandbox.a, receiver.url);
    const built = await collectReads(sandbox.a);
    await sandbox.restart();

    // Written after the first restart, into the journal: the index file on disk is the one of the stop before, and a
    // start replays the journal over it.
    const first = await writeMore(sandbox.a, world, receiver.url, 1);
    expect(first.client.alias).toBe('EVA.SANDBOX');
    const afterFirst = await collectReads(sandbox.a);
    expect(afterFirst.payments.length).toBe(built.payments.length + 3);

    // The files as a crash would leave them now (all but the lock), started on by another server.
    const crashed = join(useTmp(), 'state.json');
    copyDataFiles(sandbox.data, crashed);
    forgetSidecar(variant, crashed);
    const survivor = await sandbox.startOn(crashed);
    expect(survivor.runtime.store.quick, 'a start through an index file older than the journal').toBe(variant !== 'full');
    expectSameReads(await collectReads(api(survivor.url, KEY)), afterFirst);
    await sandbox.stop(survivor);

    await sandbox.restart(); // the second
    expectSameReads(await collectReads(sandbox.a), afterFirst);

    const second = await writeMore(sandbox.a, world, receiver.url, 2);
    expect(second.client.alias).toBe('EVA.SANDBOX-2');
    const afterSecond = await collectReads(sandbox.a);
    expect(afterSecond.payments.length).toBe(built.payments.length + 6);
    expect(afterSecond.clients.map((c: any) => c.name).slice(0, 2)).toEqual(['Eva 2', 'Eva 1']);

    await sandbox.restart(); // the third
    expectSameReads(await collectReads(sandbox.a), afterSecond);
  });
});

/** An API client that moves `clock` one second before each write, so that every write has a time of its own. */
const steppingApi = (url: string, clock: FakeClock): Api => api(url, KEY, () => clock.advance(1000));

describe('fast and full side by side', () => {
  // Every write at its own clock second (but two cancels in the same millisecond) and no callback URLs (no attempts,
  // whose durations are real time): two servers given the same requests then owe the same answers, byte for byte.
  it('two servers on copies of one cleanly stopped file, one through the sidecar, answer the same requests identically', async () => {
    const clock = new FakeClock();
    const data = join(useTmp(), 'state.json');
    const first = await startServer({ port: 0, host: '127.0.0.1', data, clock, ids: seededIds(7) });
    running.add(first);
    const a = steppingApi(first.url, clock);
    const ana = await a.data('POST', '/api/v1/clients', { ...CLIENT, name: 'Ana', taxId: '20-12345678-3', aliasPrefixHint: 'ana' });
    const beto = await a.data('POST', '/api/v1/clients', { ...CLIENT, name: 'Beto', taxId: '27-11111111-1' });
    const payments = await times(12, (i) =>
      a.data('POST', '/api/v1/va-payments', { ...PAYMENT, ...(i % 4 ? { amount: 100 + i } : {}), ...(i >= 10 ? { ttlSeconds: 60 } : {}), clientId: i % 3 ? null : ana.id }),
    );
    const locked = await times(3, (i) => a.data('POST', '/api/v1/va-payments', { ...PAYMENT, lockMode: 'amount', amount: 700 + i }));
    // Ends in an order unlike the order of creation.
    await a.data('POST', `/api/v1/va-payments/${payments[5]!.id}/cancel`);
    await a.data('POST', '/sandbox/v1/transfers', { to: mixedCase(payments[2]!.alias), total: 102 });
    await a.data('POST', `/api/v1/va-payments/${payments[9]!.id}/cancel`);
    await a.data('POST', '/sandbox/v1/transfers', { to: payments[0]!.cvu, total: 55 });
    await a.data('POST', '/sandbox/v1/transfers', { to: payments[7]!.cvu, total: 7, taxes: 1 });
    await a.data('POST', '/sandbox/v1/transfers', { to: payments[3]!.alias.toLowerCase(), total: 500 });
    await a.data('POST', '/sandbox/v1/transfers', { to: (await a.data('GET', '/sandbox/v1/hubs/1')).collectionAlias, total: 701 });
    await a.data('POST', `/api/v1/va-payments/${locked[2]!.id}/cancel`);
    // Two pool CVUs released at the same time, in an order unlike the payments' own: both starts lend them alike.
    const sameTime = api(first.url, KEY);
    await sameTime.data('POST', `/api/v1/va-payments/${payments[8]!.id}/cancel`);
    await sameTime.data('POST', `/api/v1/va-payments/${payments[6]!.id}/cancel`);
    await a.data('POST', '/sandbox/v1/transfers', { to: mixedCase(beto.alias), total: 30 });
    await a.data('POST', `/api/v1/clients/${ana.id}/invoices`, { total_amount: 40 });
    await a.data('POST', `/sandbox/v1/clients/${ana.id}/debits`, { amount: 3 });
    expect((await a.post('/api/v1/va-payments', { ...PAYMENT, amount: 42 }, { 'Idempotency-Key': 'twin' })).status).toBe(201);
    await a.data('POST', '/sandbox/v1/clock/advance', { seconds: 61 });
    running.delete(first);
    await first.close();

    /** The same requests to each twin; every answer (status, replay header, body) in order, then every read. */
    async function drive(variant: Variant) {
      const copy = join(useTmp(), 'state.json');
      copyDataFiles(data, copy);
      forgetSidecar(variant, copy);
      const twinClock = new FakeClock(clock.now());
      const server = await startServer({ port: 0, host: '127.0.0.1', data: copy, clock: twinClock, ids: seededIds(8) });
      running.add(server);
      expect(server.runtime.store.quick).toBe(variant === 'fast');
      const b = steppingApi(server.url, twinClock);
      const answers: unknown[] = [];
      const send = async (method: string, path: string, body?: unknown, headers?: Record<string, string>) => {
        const response = await b.call(method, path, body, headers);
        answers.push({ request: `${method} ${path}`, status: response.status, replayed: response.headers.get('idempotent-replayed'), body: response.body });
        return response.body.data;
      };
      await send('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 42 }, { 'Idempotency-Key': 'twin' });
      await send('POST', '/api/v1/va-payments', { ...PAYMENT, lockMode: 'amount', amount: 700 });
      await send('POST', '/api/v1/va-payments', { ...PAYMENT, lockMode: 'amount', amount: 701 });
      await send('POST', '/api/v1/clients', { ...CLIENT, name: 'Copy', taxId: '20123456783' });
      await send('POST', '/api/v1/clients', { ...CLIENT, name: 'Ana 2', taxId: '20-99999999-9', aliasPrefixHint: 'ana' });
      await send('POST', '/sandbox/v1/transfers', { to: mixedCase(payments[1]!.alias), total: 1 });
      await send('POST', '/sandbox/v1/transfers', { to: mixedCase(ana.alias), total: 10 });
      await send('POST', '/sandbox/v1/transfers', { to: payments[5]!.cvu, total: 10 });
      await send('POST', '/sandbox/v1/clock/advance', { seconds: 3600 });
      for (let i = 0; i < 16; i++) {
        const made = await send('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 1 + i });
        await send('POST', '/sandbox/v1/transfers', { to: mixedCase(made.alias), total: 1 + i });
      }
      const reads = await collectReads(b);
      running.delete(server);
      await server.close();
      return { answers, reads };
    }
    const fast = await drive('fast');
    const full = await drive('full');
    expect(fast.answers.length).toBe(41);
    for (const [i, answer] of full.answers.entries()) expect(answer, `answer ${i}`).toEqual(fast.answers[i]);
    expectSameReads(full.reads, fast.reads);
    expect(countBy(fast.reads.payments, 'status')).toEqual({ completed: 19, expired: 8, cancelled: 5, overpaid: 1 });
  });
});

/** Each payment's `callbackDelivery` is the count of its events' deliveries by status, its last event, its last attempt. */
async function expectSummariesMatchDeliveries(a: Api): Promise<void> {
  const events = await all(a, '/sandbox/v1/events'); // newest first
  const payments = await all(a, '/api/v1/va-payments');
  for (const payment of payments) {
    const mine = events.filter((e) => e.vaPaymentId === payment.id);
    const deliveries = mine.flatMap((e) => e.deliveries);
    const count = (status: string) => deliveries.filter((d: any) => d.status === status).length;
    const attempted = await Promise.all(deliveries.filter((d: any) => d.attempts > 0).map((d: any) => a.data('GET', `/sandbox/v1/deliveries/${d.id}`)));
    const lastAttemptAt = attempted.map((d) => d.attempts.at(-1).startedAt as string).sort().at(-1) ?? null;
    expect(payment.callbackDelivery, `callbackDelivery of ${payment.id}`).toEqual({
      events: mine.length,
      delivered: count('delivered'),
      pending: count('pending'),
      retrying: count('retrying'),
      failed: count('failed'),
      dropped: count('dropped'),
      lastEventType: mine[0]?.eventType ?? null,
      lastAttemptAt,
    });
    expect(mine.length).toBeGreaterThan(0);
  }
}

describe('a save larger than the journal may grow', () => {
  // 20 MiB of journal (its floor) is about 18,000 payments with their events: a save of 20,000 alone outgrows it.
  it('is acknowledged once folded, so the files a crash leaves right after it hold it in the snapshot, read quickly', { timeout: 60_000 }, async () => {
    const data = join(useTmp(), 'state.json');
    const server = await startServer({ port: 0, host: '127.0.0.1', data });
    running.add(server);
    const account = server.runtime.sandbox.account(KEY);
    const ids = Array.from({ length: 20_000 }, () => account.createVaPayment(PAYMENT).id);
    await server.runtime.commit();
    // Acknowledged: in the snapshot and its index file, and the journal a start replays holds nothing of it.
    expect(statSync(`${data}.journal`).size).toBeLessThan(1024);
    expect(statSync(data).size).toBeGreaterThan(20 * 1024 * 1024);

    const crashed = join(useTmp(), 'state.json');
    copyDataFiles(data, crashed);
    const survivor = await startServer({ port: 0, host: '127.0.0.1', data: crashed });
    running.add(survivor);
    expect(survivor.runtime.store.quick, 'a start through the index file').toBe(true);
    const a = api(survivor.url, KEY);
    for (const id of [ids[0], ids[10_000], ids.at(-1)]) expect((await a.data('GET', `/api/v1/va-payments/${id}`)).id).toBe(id);
  });
});
