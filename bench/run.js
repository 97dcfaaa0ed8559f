// `npm run bench`: va-sandbox measured beside json-server (and `node -e 0`) in the same run, printed as ONE table.
// Everything runs on loopback, every loop is bounded in count and in time, and every process it starts is stopped.
// Progress goes to stderr; stdout gets the machine, the request counts and the table.
// Environment: BENCH_RECORDS (default 100000) scales the seeded data, for a quick trial run.
import { randomUUID } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  BIN,
  JSON_SERVER_BIN,
  ROOT,
  dirSize,
  fmt,
  freePort,
  load,
  log,
  median,
  percentile,
  rssOf,
  runTimed,
  startChild,
  table,
  waitReady,
} from './lib.js';

const RECORDS = Number(process.env.BENCH_RECORDS ?? 100_000);
const KEY = 'sk_bench';
/** The one request body both servers get: an ordinary time-locked VA payment. */
const BODY = { paymentHubId: 1, currency: 'ARS', lockMode: 'time', amount: 1500, externalReference: 'order-1042', metadata: { source: 'bench' } };
const BODY_TEXT = JSON.stringify(BODY);

/** Bounds of each load run: at most `count` requests and at most `seconds`, whichever ends first. */
const API_RUN = { c1: { count: 2_000, seconds: 8 }, c32: { count: 6_000, seconds: 8 } };
/** With the seeded records a create may take seconds: those runs get longer, for enough samples. */
const SLOW_SECONDS = 20;
const WARMUP = { count: 20, seconds: 3 };
const CALLBACKS = { receivers: 50, latencyTransfers: 200, latencySeconds: 40, sustainedTransfers: 1_000, sustainedSeconds: 90 };
/** A backlog: this many callbacks failing (HTTP 500) and waiting to retry, while creates are measured at 1 conn. */
const BACKLOG = { deliveries: 5_000, creates: 1_000, seconds: 20 };
const COLD = { quick: 9, start: 5, startLoaded: 3 };
const PART4 = { chunk: 10_000, writes: 200, writeSeconds: 20 };

const rows = [];
const row = (part, figure, ours, other = '', ratio = '', target = '', result = '') => rows.push([part, figure, ours, other, ratio, target, result]);
const verdict = (ok) => (ok === null ? 'n/a' : ok ? 'PASS' : 'FAIL');

const work = mkdtempSync(join(tmpdir(), 'va-bench-'));
const running = new Set();
const track = (child) => (running.add(child), child);
const stop = async (child) => (running.delete(child), child.stop());
let receivers = [];

async function main() {
  const started = performance.now();
  if (process.env.BENCH_ONLY === 'fsync') {
    // `BENCH_ONLY=fsync node bench/run.js`: part 5 alone (a minute).
    await fsyncRuns();
    return print(((performance.now() - started) / 60_000).toFixed(1));
  }
  if (process.env.BENCH_ONLY === 'lists') {
    // `BENCH_ONLY=lists node bench/run.js`: part 6 alone (a few minutes, most of it seeding).
    await listRuns();
    return print(((performance.now() - started) / 60_000).toFixed(1));
  }
  log(`work folder ${work}; seeding ${fmt.int(RECORDS)} records`);

  // --- data sets ---------------------------------------------------------------------------------
  const seededA = await seed('A', { payments: RECORDS, pay: false, chunk: RECORDS });
  if (seededA.error) throw new Error(`seeding ${RECORDS} payments failed: ${seededA.error}`);
  const pristineA = join(work, 'A0');
  // Kept with its files' times (as `cp -p` does), so it stays the state a clean stop left, index file included.
  cpSync(join(work, 'A'), pristineA, { recursive: true, preserveTimestamps: true });
  const seededIds = readFileSync(join(work, 'A.ids'), 'utf8').split('\n').filter(Boolean);
  const jsonIds = writeJsonServerDb(join(work, 'J'), RECORDS);
  cpSync(join(work, 'J'), join(work, 'J0'), { recursive: true });
  const sizeA = dirSize(pristineA);
  const sizeJ = dirSize(join(work, 'J0'));

  // --- 1. API throughput and latency -------------------------------------------------------------
  const results = {};
  for (const records of [0, RECORDS]) {
    results[`ours:${records}`] = await apiRuns('ours', records, records ? join(work, 'A') : join(work, 'A-empty'), records ? seededIds : []);
    results[`json:${records}`] = await apiRuns('json', records, records ? join(work, 'J') : join(work, 'J-empty'), records ? jsonIds : []);
  }
  for (const records of [0, RECORDS]) {
    for (const op of ['post', 'get']) {
      for (const c of [1, 32]) {
        const ours = results[`ours:${records}`][`${op}${c}`];
        const json = results[`json:${records}`][`${op}${c}`];
        const what = op === 'post' ? 'POST create' : 'GET by id';
        row('1', `${what}, ${fmt.int(records)} records, ${c} conn`, runCell(ours), runCell(json), fmt.ratio(ours.rps / json.rps));
      }
    }
    row('1', `server peak RSS after those runs, ${fmt.int(records)} records`, fmt.mb(results[`ours:${records}`].rss.peak), fmt.mb(results[`json:${records}`].rss.peak), fmt.ratio(results[`ours:${records}`].rss.peak / results[`json:${records}`].rss.peak));
  }
  row('1', `data size with ${fmt.int(RECORDS)} payments (as seeded: data file, journal and index file)`, fmt.mb(sizeA), fmt.mb(sizeJ), fmt.ratio(sizeA / sizeJ));

  // --- 2. callbacks ------------------------------------------------------------------------------
  await callbackRuns();

  // --- 3. cold start -----------------------------------------------------------------------------
  await coldStart(pristineA, join(work, 'J0'));

  // --- 4. memory and size with payments and transfers --------------------------------------------
  await bigState();

  // --- 5. what --fsync costs -------------------------------------------------------------------------
  await fsyncRuns();

  // --- 6. filtered lists ---------------------------------------------------------------------------
  await listRuns();

  // --- targets -------------------------------------------------------------------------------------
  for (const c of [1, 32]) {
    const ours = results[`ours:${RECORDS}`][`post${c}`].rps;
    const json = results[`json:${RECORDS}`][`post${c}`].rps;
    row('T', `create throughput vs json-server, ${fmt.int(RECORDS)} records, ${c} conn`, `${fmt.rps(ours)} req/s`, `${fmt.rps(json)} req/s`, fmt.ratio(ours / json), '≥ 2×', verdict(ours >= 2 * json));
  }
  for (const c of [1, 32]) {
    const ours = results['ours:0'][`post${c}`].rps;
    const json = results['json:0'][`post${c}`].rps;
    row('T', `create throughput vs json-server, 0 records, ${c} conn`, `${fmt.rps(ours)} req/s`, `${fmt.rps(json)} req/s`, fmt.ratio(ours / json), '≥ 1×', verdict(ours >= json));
  }
  const p99 = results[`ours:${RECORDS}`].post32.p99;
  row('T', `p99 create latency, ${fmt.int(RECORDS)} records, 32 conn`, `${fmt.ms(p99)} ms`, '20 ms', fmt.ratio(p99 / 20), '< 20 ms', verdict(p99 < 20));
  for (const target of targets) rows.push(target);

  const minutes = ((performance.now() - started) / 60_000).toFixed(1);
  print(minutes);
}

// --- seeding -------------------------------------------------------------------------------------

/** Seeds data set `name` (a folder of its own) through the sandbox core in a child process. */
async function seed(name, { payments, pay, mix, chunk }) {
  const dir = join(work, name);
  mkdirSync(dir, { recursive: true });
  const args = [join(ROOT, 'bench', 'seed.js'), '--data', join(dir, 'state.json'), '--key', KEY, '--payments', String(payments), '--chunk', String(chunk), '--ids', join(work, `${name}.ids`), '--body', BODY_TEXT];
  if (pay) args.push('--pay');
  if (mix) args.push('--mix');
  const t0 = performance.now();
  const run = await runTimed(args);
  const result = JSON.parse(run.stdout.trim().split('\n').at(-1) || 'null') ?? { error: `seed exited with ${run.code}: ${run.stderr.slice(-500)}` };
  if (run.code !== 0) result.error ??= `seed exited with ${run.code}: ${run.stderr.slice(-500)}`;
  log(`seeded ${name}: ${JSON.stringify(result)} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  return result;
}

/** json-server's normal input: a db.json (pretty, as json-server writes it) with `payments` holding the same body. */
function writeJsonServerDb(dir, count) {
  mkdirSync(dir, { recursive: true });
  const payments = Array.from({ length: count }, () => ({ ...BODY, id: randomUUID() }));
  writeFileSync(join(dir, 'db.json'), JSON.stringify({ payments }, null, 2));
  mkdirSync(join(dir, '..', 'J-empty'), { recursive: true });
  writeFileSync(join(dir, '..', 'J-empty', 'db.json'), JSON.stringify({ payments: [] }, null, 2));
  return payments.map((p) => p.id);
}

// --- servers -------------------------------------------------------------------------------------

/** Starts our server (the built CLI) or json-server on a data folder; resolves once it answers. */
async function launch(kind, dir, extra = []) {
  mkdirSync(dir, { recursive: true });
  const port = await freePort();
  const args =
    kind === 'ours'
      ? // The bench sends far more than the default 6000 requests a minute: the limit is off.
        [BIN, 'start', '--port', String(port), '--data', join(dir, 'state.json'), '--rate-limit', '0', ...extra]
      : [JSON_SERVER_BIN, join(dir, 'db.json'), '--port', String(port), '--host', '127.0.0.1', '--quiet'];
  const t0 = performance.now();
  const child = track(startChild(args));
  const origin = `http://127.0.0.1:${port}`;
  const readyMs = await waitReady(kind === 'ours' ? `${origin}/health` : `${origin}/`, child, t0);
  return { child, origin, readyMs };
}

const routes = {
  ours: { create: '/api/v1/va-payments', one: (id) => `/api/v1/va-payments/${id}`, idOf: (text) => JSON.parse(text).data.id },
  json: { create: '/payments', one: (id) => `/payments/${id}`, idOf: (text) => JSON.parse(text).id },
};
const headers = { 'content-type': 'application/json', authorization: `Bearer ${KEY}` };

/** The four runs of part 1 on one server: POST at 1 and 32 connections, then GET by id at 1 and 32. */
async function apiRuns(kind, records, dir, existingIds) {
  const { child, origin } = await launch(kind, dir);
  const route = routes[kind];
  const created = [];
  const post = (bounds, concurrency) =>
    load(origin, {
      concurrency,
      ...bounds,
      make: () => ({ method: 'POST', path: route.create, headers, body: BODY_TEXT }),
      onResponse: (_, text) => created.push(route.idOf(text)),
    });
  // GETs read records that exist: the seeded ones when there are, else those the POST runs made; chosen at random.
  let state = 12345;
  const random = () => ((state = (state * 1103515245 + 12345) % 2 ** 31), state / 2 ** 31);
  const get = (bounds, concurrency) => {
    const pool = existingIds.length ? existingIds : created;
    return load(origin, { concurrency, ...bounds, make: () => ({ method: 'GET', path: route.one(pool[Math.floor(random() * pool.length)]), headers }) });
  };
  const label = `${kind === 'ours' ? 'va-sandbox' : 'json-server'}, ${fmt.int(records)} records`;
  log(`${label}: warm-up`);
  await post(WARMUP, 1);
  await get(WARMUP, 1);
  const out = {};
  for (const [name, run, concurrency] of [['post1', post, 1], ['post32', post, 32], ['get1', get, 1], ['get32', get, 32]]) {
    await sleep(500);
    const bounds = concurrency === 1 ? API_RUN.c1 : API_RUN.c32;
    out[name] = await run(records && name.startsWith('post') ? { ...bounds, seconds: SLOW_SECONDS } : bounds, concurrency);
    log(`${label}: ${name} ${JSON.stringify(out[name])}`);
  }
  out.rss = rssOf(child.pid);
  await stop(child);
  return out;
}

function runCell(run) {
  const errors = run.errors ? `, ${run.errors} errors (${run.firstError})` : '';
  return `${fmt.rps(run.rps)} req/s · p50 ${fmt.ms(run.p50)} · p99 ${fmt.ms(run.p99)} ms (n=${run.ok}${errors})`;
}

// --- 2. callbacks ------------------------------------------------------------------------------------

/** 50 real receivers on loopback that answer 200 at once and note when each callback arrived. */
async function startReceivers(count) {
  const arrivals = new Map();
  let total = 0;
  let waiter = null;
  const list = await Promise.all(
    Array.from({ length: count }, async () => {
      const server = createServer((req, res) => {
        const chunks = [];
        req.on('data', (chunk) => chunks.push(chunk));
        req.on('end', () => {
          const at = performance.now();
          res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
          try {
            const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
            const key = `${body.eventType}:${body.vaPaymentId}`;
            if (!arrivals.has(key)) {
              arrivals.set(key, at);
              total++;
              if (waiter && waiter.check()) waiter.done();
            }
          } catch {
            // Not a callback of ours: ignore.
          }
        });
      });
      await new Promise((done) => server.listen(0, '127.0.0.1', done));
      return { server, url: `http://127.0.0.1:${server.address().port}` };
    }),
  );
  receivers = list;
  /** Resolves once `check()` holds (checked at each new callback), or rejects after `seconds`. */
  const until = (check, seconds, what) =>
    new Promise((done, fail) => {
      if (check()) return done();
      const timer = setTimeout(() => ((waiter = null), fail(new Error(`timed out after ${seconds} s waiting for ${what}`))), seconds * 1000);
      waiter = { check, done: () => (clearTimeout(timer), (waiter = null), done()) };
    });
  return { list, arrivals, count: () => total, until };
}

async function callbackRuns() {
  const rx = await startReceivers(CALLBACKS.receivers);
  const { child, origin } = await launch('ours', join(work, 'callbacks'));
  const payments = [];
  const createPayments = async (n) => {
    const first = payments.length;
    await load(origin, {
      concurrency: 8,
      count: n,
      seconds: 60,
      make: (i) => ({
        method: 'POST',
        path: '/api/v1/va-payments',
        headers,
        body: JSON.stringify({ ...BODY, callbackUrl: `${rx.list[(first + i) % rx.list.length].url}/va` }),
      }),
      onResponse: (_, text) => payments.push(JSON.parse(text).data),
    });
    const batch = payments.slice(first);
    await rx.until(() => batch.every((p) => rx.arrivals.has(`created:${p.id}`)), 60, `${n} created callbacks`);
    return batch;
  };
  const transfer = (payment) => ({ method: 'POST', path: '/sandbox/v1/transfers', headers, body: JSON.stringify({ to: payment.cvu, total: BODY.amount }) });

  // Latency: one transfer at a time, each waiting for its cash_in_received.
  log('callbacks: latency run');
  const batch = await createPayments(CALLBACKS.latencyTransfers);
  const latencies = [];
  const { Pool } = await import('undici');
  const pool = new Pool(origin, { connections: 1 });
  const deadline = performance.now() + CALLBACKS.latencySeconds * 1000;
  for (const payment of batch) {
    if (performance.now() > deadline) break;
    const t0 = performance.now();
    const response = await pool.request(transfer(payment));
    await response.body.text();
    if (response.statusCode !== 201) throw new Error(`transfer answered ${response.statusCode}`);
    const key = `cash_in_received:${payment.id}`;
    await rx.until(() => rx.arrivals.has(key), 15, key);
    latencies.push(rx.arrivals.get(key) - t0);
  }
  await pool.close();
  latencies.sort((a, b) => a - b);
  row('2', `transfer → cash_in_received at the receiver, one at a time`, `p50 ${fmt.ms(percentile(latencies, 0.5))} · p99 ${fmt.ms(percentile(latencies, 0.99))} ms (n=${latencies.length})`, 'json-server: no callbacks');

  // Sustained: many transfers at 32 connections to payments spread over 50 receivers; 2 callbacks each.
  log('callbacks: sustained run');
  const many = await createPayments(CALLBACKS.sustainedTransfers);
  const sentAt = new Map();
  const t0 = performance.now();
  const run = await load(origin, {
    concurrency: 32,
    count: many.length,
    seconds: CALLBACKS.sustainedSeconds,
    make: (i) => (sentAt.set(many[i].id, performance.now()), transfer(many[i])),
  });
  const sent = many.filter((p) => sentAt.has(p.id));
  const expected = sent.length * 2;
  const done = (p) => rx.arrivals.has(`cash_in_received:${p.id}`) && rx.arrivals.has(`succeeded:${p.id}`);
  let complete = true;
  await rx.until(() => sent.every(done), CALLBACKS.sustainedSeconds, `${expected} callbacks`).catch(() => (complete = false));
  const arrived = sent.flatMap((p) => ['cash_in_received', 'succeeded'].map((t) => rx.arrivals.get(`${t}:${p.id}`)).filter((x) => x !== undefined));
  const last = Math.max(...arrived);
  const perSecond = arrived.length / ((last - t0) / 1000);
  const underLoad = sent.filter((p) => rx.arrivals.has(`cash_in_received:${p.id}`)).map((p) => rx.arrivals.get(`cash_in_received:${p.id}`) - sentAt.get(p.id)).sort((a, b) => a - b);
  row('2', `sustained callbacks/s to ${rx.list.length} receivers (${sent.length} transfers at 32 conn, 2 callbacks each)`, `${fmt.rps(perSecond)} callbacks/s (${arrived.length} of ${expected}${complete ? '' : ', INCOMPLETE'}; transfers ${fmt.rps(run.rps)} req/s)`, 'json-server: no callbacks');
  row('2', `transfer → cash_in_received during that run`, `p50 ${fmt.ms(percentile(underLoad, 0.5))} · p99 ${fmt.ms(percentile(underLoad, 0.99))} ms (n=${underLoad.length})`, 'json-server: no callbacks');
  await stop(child);
  await backlogRun();
}

/** The API beside a backlog: callbacks to a receiver that answers 500, each waiting a minute to retry. */
async function backlogRun() {
  log('callbacks: backlog run');
  let attempts = 0;
  const failing = createServer((req, res) => {
    req.resume();
    req.on('end', () => (attempts++, res.writeHead(500).end('down')));
  });
  await new Promise((done) => failing.listen(0, '127.0.0.1', done));
  const hook = `http://127.0.0.1:${failing.address().port}/hook`;
  const { child, origin } = await launch('ours', join(work, 'backlog'), ['--retry-delays', '60,60']);
  try {
    const create = (body) => () => ({ method: 'POST', path: '/api/v1/va-payments', headers, body });
    await load(origin, { concurrency: 8, count: BACKLOG.deliveries, seconds: 60, make: create(JSON.stringify({ ...BODY, callbackUrl: hook })) });
    for (const deadline = performance.now() + 60_000; attempts < BACKLOG.deliveries && performance.now() < deadline; ) await sleep(50);
    const run = await load(origin, {
      concurrency: 1,
      count: BACKLOG.creates,
      seconds: BACKLOG.seconds,
      make: create(BODY_TEXT),
    });
    row('2', `POST create, 1 conn, beside ${fmt.int(attempts)} callbacks failed (HTTP 500) and waiting to retry`, runCell(run), 'json-server: no callbacks');
  } finally {
    await stop(child);
    failing.closeAllConnections();
    failing.close();
  }
}

// --- 5. --fsync ---------------------------------------------------------------------------------------

/** Creates on a new data file at 1 and 32 connections, with `--fsync` (one fdatasync per group of writes) and without. */
async function fsyncRuns() {
  const runs = {};
  for (const fsync of [false, true]) {
    const { child, origin } = await launch('ours', join(work, fsync ? 'fsync' : 'no-fsync'), fsync ? ['--fsync'] : []);
    try {
      const post = (bounds, concurrency) =>
        load(origin, { concurrency, ...bounds, make: () => ({ method: 'POST', path: routes.ours.create, headers, body: BODY_TEXT }) });
      await post(WARMUP, 1);
      for (const c of [1, 32]) {
        await sleep(500);
        runs[`${fsync}:${c}`] = await post(c === 1 ? API_RUN.c1 : API_RUN.c32, c);
        log(`--fsync ${fsync}: post${c} ${JSON.stringify(runs[`${fsync}:${c}`])}`);
      }
    } finally {
      await stop(child);
    }
  }
  for (const c of [1, 32]) {
    const synced = runs[`true:${c}`];
    const plain = runs[`false:${c}`];
    row('5', `POST create with --fsync, 0 records, ${c} conn (beside: without it)`, runCell(synced), runCell(plain), fmt.ratio(synced.rps / plain.rps));
  }
}

// --- 6. filtered lists ----------------------------------------------------------------------------------

/**
 * GET by id beside two filtered lists on `RECORDS` payments (half paid, 100 payers' tax ids), each at 1 conn on a
 * server started from the seeded files: a filtered list should cost its page, not the table.
 */
async function listRuns() {
  log(`part 6: filtered lists, ${fmt.int(RECORDS)} payments`);
  const seeded = await seed('L', { payments: RECORDS, mix: true, chunk: Math.min(PART4.chunk, RECORDS) });
  if (seeded.error) throw new Error(`seeding ${RECORDS} payments failed: ${seeded.error}`);
  const ids = readFileSync(join(work, 'L.ids'), 'utf8').split('\n').filter(Boolean);
  const { child, origin } = await launch('ours', join(work, 'L'));
  try {
    const get = (path) => () => ({ method: 'GET', path: path(), headers });
    let n = 0;
    const runs = [
      ['GET /api/v1/va-payments/{id}', get(() => routes.ours.one(ids[(n = (n * 7919 + 1) % ids.length)]))],
      ['GET /api/v1/va-payments?status=completed&limit=20', get(() => '/api/v1/va-payments?status=completed&limit=20')],
      ['GET /api/v1/va-payments?clientTaxId=20100000420&limit=20', get(() => '/api/v1/va-payments?clientTaxId=20100000420&limit=20')],
    ];
    const results = [];
    for (const [what, make] of runs) {
      await load(origin, { concurrency: 1, ...WARMUP, make });
      await sleep(500);
      const run = await load(origin, { concurrency: 1, ...API_RUN.c1, make });
      log(`${what}: ${JSON.stringify(run)}`);
      results.push([what, run]);
    }
    const byId = results[0][1];
    for (const [what, run] of results) {
      const ratio = run.p50 / byId.p50;
      row('6', `${what}, ${fmt.int(RECORDS)} payments, 1 conn (beside: by id)`, runCell(run), `p50 ${fmt.ms(byId.p50)} ms`, fmt.ratio(ratio), run === byId ? '' : 'p50 ≤ 2×', run === byId ? '' : verdict(ratio <= 2));
    }
  } finally {
    await stop(child);
  }
}

// --- 3. cold start ---------------------------------------------------------------------------------

const targets = [];

async function coldStart(loadedOurs, loadedJson) {
  log('cold start');
  const times = async (n, args, env) => {
    const out = [];
    for (let i = 0; i < n; i++) {
      const run = await runTimed(args, { env });
      if (run.code !== 0) throw new Error(`${args.join(' ')} exited with ${run.code}: ${run.stderr}`);
      out.push(run.ms);
    }
    return median(out);
  };
  const node = await times(COLD.quick, ['-e', '0']);
  const version = await times(COLD.quick, [BIN, '--version']);
  const server = await launch('ours', join(work, 'list'));
  for (let i = 0; i < 20; i++) {
    await fetch(`${server.origin}/api/v1/va-payments`, { method: 'POST', headers, body: BODY_TEXT }).then((r) => r.arrayBuffer());
  }
  const list = await times(COLD.quick, [BIN, 'payments', 'list', '--json'], { VA_SANDBOX_URL: server.origin, VA_SANDBOX_API_KEY: KEY });
  await stop(server.child);
  const nodeAgain = await times(COLD.quick, ['-e', '0']);
  const baseline = median([node, nodeAgain]);

  // `whole`: without the index file a clean stop writes, as after a crash: the server reads every record first.
  const starts = async (n, kind, source, whole = false) => {
    const out = [];
    for (let i = 0; i < n; i++) {
      const dir = join(work, `start-${kind}-${i}`);
      if (source) cpSync(source, dir, { recursive: true, preserveTimestamps: true });
      if (whole) rmSync(join(dir, 'state.json.index'));
      const started = await launch(kind, dir);
      out.push(started.readyMs);
      await stop(started.child);
      rmSync(dir, { recursive: true, force: true });
    }
    return median(out);
  };
  const startEmpty = await starts(COLD.start, 'ours', null);
  const startLoaded = await starts(COLD.startLoaded, 'ours', loadedOurs);
  const startWhole = await starts(COLD.startLoaded, 'ours', loadedOurs, true);
  const jsonLoaded = await starts(COLD.startLoaded, 'json', loadedJson);

  const base = `node -e 0: ${fmt.ms(baseline)} ms`;
  row('3', `va-sandbox --version (median of ${COLD.quick})`, `${fmt.ms(version)} ms`, base, fmt.ratio(version / baseline));
  row('3', `va-sandbox payments list --json, running server (median of ${COLD.quick})`, `${fmt.ms(list)} ms`, base, fmt.ratio(list / baseline));
  row('3', `va-sandbox start until /health answers, new data file (median of ${COLD.start})`, `${fmt.ms(startEmpty)} ms`, base, fmt.ratio(startEmpty / baseline));
  row('3', `start until it answers, ${fmt.int(RECORDS)} payments, after a clean stop (median of ${COLD.startLoaded})`, `${fmt.ms(startLoaded)} ms`, `json-server: ${fmt.ms(jsonLoaded)} ms`, fmt.ratio(startLoaded / jsonLoaded));
  row('3', `the same, read whole (no index file, as after a crash)`, `${fmt.ms(startWhole)} ms`, `json-server: ${fmt.ms(jsonLoaded)} ms`, fmt.ratio(startWhole / jsonLoaded));
  targets.push(['T', '--version vs node -e 0', `${fmt.ms(version)} ms`, base, fmt.ratio(version / baseline), '≤ 1.5×', verdict(version <= 1.5 * baseline)]);
  targets.push(['T', 'payments list --json vs node -e 0', `${fmt.ms(list)} ms`, base, fmt.ratio(list / baseline), '≤ 2.5×', verdict(list <= 2.5 * baseline)]);
  targets.push(['T', `server ready with ${fmt.int(RECORDS)} payments`, `${fmt.ms(startLoaded)} ms`, '1000 ms', fmt.ratio(startLoaded / 1000), '< 1 s', verdict(startLoaded < 1000)]);
}

// --- 4. memory and size ------------------------------------------------------------------------------

async function bigState() {
  log(`part 4: ${fmt.int(RECORDS)} payments, each paid by a transfer`);
  const seeded = await seed('B', { payments: RECORDS, pay: true, chunk: Math.min(PART4.chunk, RECORDS) });
  const dir = join(work, 'B');
  const what = `${fmt.int(RECORDS)} payments + ${fmt.int(RECORDS)} transfers`;
  const problems = [
    seeded.payments < RECORDS ? `only ${fmt.int(seeded.payments)} + ${fmt.int(seeded.transfers)} could be saved: ${seeded.error}` : null,
    seeded.closeError ? `stopping the seeding server failed: ${seeded.closeError}` : null,
  ].filter(Boolean);
  const size = dirSize(dir);
  let server;
  try {
    server = await launch('ours', dir);
  } catch (error) {
    row('4', `data size, ${what}`, [fmt.mb(size), ...problems].join(' — '));
    row('4', `server peak RSS, ${what}`, `server did not start: ${String(error.message).slice(0, 200)}`);
    targets.push(['T', `${what} kept and readable after a restart`, 'no', '', '', 'kept', verdict(false)]);
    return;
  }
  // What a restarted server reports: everything committed must be there.
  const totals = await fetch(`${server.origin}/api/v1/va-payments?limit=1`, { headers })
    .then((r) => r.json())
    .then((b) => b.pagination.total);
  const transfers = await fetch(`${server.origin}/sandbox/v1/transfers?limit=1`, { headers })
    .then((r) => r.json())
    .then((b) => b.pagination.total);
  // Some writes, so the measure includes what a save costs: creates, and transfers paying them.
  const cvus = [];
  const writes = await load(server.origin, {
    concurrency: 8,
    count: PART4.writes,
    seconds: PART4.writeSeconds,
    make: (i) =>
      i % 2 === 1 && cvus.length
        ? { method: 'POST', path: '/sandbox/v1/transfers', headers, body: JSON.stringify({ to: cvus.shift(), total: BODY.amount }) }
        : { method: 'POST', path: '/api/v1/va-payments', headers, body: BODY_TEXT },
    onResponse: (_, text) => {
      const data = JSON.parse(text).data;
      if (data.cvu && data.status) cvus.push(data.cvu);
    },
  });
  const rss = rssOf(server.child.pid);
  // A graceful stop (SIGTERM), as a user's Ctrl-C: it must save and exit 0.
  const t0 = performance.now();
  running.delete(server.child);
  server.child.child.kill('SIGTERM');
  let timer;
  const exit = await Promise.race([server.child.exited, new Promise((done) => (timer = setTimeout(done, 120_000, null)))]);
  clearTimeout(timer);
  if (exit === null) await server.child.stop();
  const stopMs = performance.now() - t0;
  const stoppedWell = exit !== null && exit.code === 0;
  const after = dirSize(dir);
  row('4', `data size, ${what}`, [`${fmt.mb(size)} as seeded, ${fmt.mb(after)} after the writes and the stop`, ...problems].join(' — '));
  row('4', `server peak RSS, ${what}: start (${fmt.ms(server.readyMs)} ms to ready) + ${writes.ok} writes in ${writes.seconds.toFixed(1)} s`, `${fmt.mb(rss.peak)}${writes.errors ? ` (${writes.errors} write errors: ${writes.firstError})` : ''}`);
  row('4', `graceful stop (SIGTERM) with that state`, stoppedWell ? `exit 0 in ${fmt.ms(stopMs)} ms` : `FAILED: ${exit === null ? 'still running after 120 s' : `exit ${exit.code ?? exit.signal}`} — ${lastLine(server.child.output())}`);
  const kept = totals === seeded.payments && transfers === seeded.transfers && seeded.payments === RECORDS;
  targets.push(['T', `${what} kept and readable after a restart`, `${fmt.int(totals)} + ${fmt.int(transfers)} read back`, `${fmt.int(RECORDS)} + ${fmt.int(RECORDS)}`, '', 'kept', verdict(kept)]);
  targets.push(['T', `graceful stop with ${what}`, stoppedWell ? 'exit 0' : 'failed', '', '', 'exit 0', verdict(stoppedWell)]);
}

const lastLine = (text) => text.trim().split('\n').filter((line) => /error/i.test(line)).at(0)?.slice(0, 160) ?? text.trim().split('\n').at(-1)?.slice(0, 160) ?? '';

// --- output --------------------------------------------------------------------------------------------

function print(minutes) {
  const cpu = cpus();
  const lines = [
    `va-sandbox bench — ${new Date().toISOString()}`,
    `machine: ${cpu.length} × ${cpu[0]?.model.trim() ?? 'cpu'}, ${fmt.mb(totalmem()).replace(' MiB', '')} MiB RAM, Node ${process.version}, ${process.platform}; loopback only`,
    `servers: va-sandbox (built CLI, \`start --data\`, file-backed) and json-server ${jsonServerVersion()} (\`json-server db.json --quiet\`: with --watch it reloads on its own writes and resets connections under write load), each a child process; json-server answers a write before it reaches the file, va-sandbox after; load from this process (undici Pool, keep-alive)`,
    `part 1: per run at most ${fmt.int(API_RUN.c1.count)} requests / ${API_RUN.c1.seconds} s at 1 conn, ${fmt.int(API_RUN.c32.count)} / ${API_RUN.c32.seconds} s at 32 conn, (POSTs with ${fmt.int(RECORDS)} records: ${SLOW_SECONDS} s), after ${WARMUP.count} warm-up requests; body ${BODY_TEXT}; "0 records": GETs read what the POST runs made`,
    `part 2: ${CALLBACKS.receivers} receivers answering 200; ${CALLBACKS.latencyTransfers} sequential transfers (≤ ${CALLBACKS.latencySeconds} s), then ${fmt.int(CALLBACKS.sustainedTransfers)} transfers at 32 conn (≤ ${CALLBACKS.sustainedSeconds} s); then a fresh server with ${fmt.int(BACKLOG.deliveries)} callbacks failing (--retry-delays 60,60) and ${fmt.int(BACKLOG.creates)} creates (≤ ${BACKLOG.seconds} s)`,
    `part 5: creates on a new data file with --fsync and without, bounds as part 1, the data in the system's temp folder`,
    `part 6: ${fmt.int(RECORDS)} payments (every other one paid, 100 payers' tax ids: 1,000 payments each), the server started from them; each row at 1 conn, bounds as part 1`,
    `seeding: va-sandbox through its core in a child process (bench/seed.js), json-server by writing db.json; total ${minutes} min`,
    '',
    table(['part', 'figure', 'va-sandbox', 'json-server / baseline', 'ratio', 'target', 'result'], rows),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

function jsonServerVersion() {
  try {
    return JSON.parse(readFileSync(join(ROOT, 'node_modules', 'json-server', 'package.json'), 'utf8')).version;
  } catch {
    return '?';
  }
}

// Last, once every declaration above is initialized.
try {
  await main();
} catch (error) {
  log(`failed: ${error.stack ?? error}`);
  process.exitCode = 1;
} finally {
  for (const child of running) await child.stop();
  for (const receiver of receivers) receiver.server.closeAllConnections(), receiver.server.close();
  rmSync(work, { recursive: true, force: true });
}
