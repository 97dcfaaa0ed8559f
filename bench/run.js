// `npm run bench`: va-sandbox measured beside json-server (and `node -e 0`) in the same run, printed as ONE table.
// Everything runs on loopback, every loop is bounded in count and in time, and every process it starts is stopped.
// Progress goes to stderr; stdout gets the machine, the request counts and the table.
// Environment: BENCH_RECORDS (default 100000) scales the seeded data, for a quick trial run (part 8 seeds ten times
// as many, or BENCH_LARGE); BENCH_ONLY=<part> runs one part alone (see PARTS).
// va-sandbox keeps its state in one SQLite database (`--data DIR/state.db`); its size on disk is the database and its
// WAL (`state.db-wal`), the lock file and `-shm` aside.
import { randomUUID } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  BIN,
  dataSize,
  dependencyVersion,
  fmt,
  freePort,
  JSON_SERVER_BIN,
  load,
  log,
  median,
  percentile,
  rssOf,
  runBench,
  runTimed,
  SEED_ARGS,
  sizeCell,
  startChild,
  startScript,
  startWireMock,
  table,
  waitReady,
  watchRss,
  wiremockMissing,
} from './lib.js';

const RECORDS = Number(process.env.BENCH_RECORDS ?? 100_000);
const KEY = 'sk_bench';
/** The one request body both servers get: an ordinary time-locked VA payment. */
const BODY = {
  paymentHubId: 1,
  currency: 'ARS',
  lockMode: 'time',
  amount: 1500,
  externalReference: 'order-1042',
  metadata: { source: 'bench' },
};
const BODY_TEXT = JSON.stringify(BODY);

/** Bounds of each load run: at most `count` requests and at most `seconds`, whichever ends first. */
const API_RUN = { c1: { count: 2_000, seconds: 8 }, c32: { count: 6_000, seconds: 8 } };
/** With the seeded records a create may take seconds: those runs get longer, for enough samples. */
const SLOW_SECONDS = 20;
const WARMUP = { count: 20, seconds: 3 };
const CALLBACKS = {
  receivers: 50,
  latencyTransfers: 200,
  latencySeconds: 40,
  sustainedTransfers: 1_000,
  sustainedSeconds: 90,
};
/** A backlog: this many callbacks failing (HTTP 500) and waiting to retry, while creates are measured at 1 conn. */
const BACKLOG = { deliveries: 5_000, creates: 1_000, seconds: 20 };
const COLD = { quick: 9, start: 5, startLoaded: 3 };
const PART4 = { writes: 200, writeSeconds: 20 };
/**
 * Parts 7 and 8: creates at 32 conn, run longer than part 1's (a bare server does 6,000 in under a second), after a
 * warm-up at 32 conn (the JVM compiles WireMock's hot paths).
 */
const FLOOD = { run: { count: 30_000, seconds: 8 }, warmup: { count: 3_000, seconds: 3 } };
/** Part 8: ten times the records of the other parts (1,000,000 by default), or BENCH_LARGE. */
const LARGE = Number(process.env.BENCH_LARGE ?? 10 * RECORDS);
/**
 * Part 8's seeded payments: part 1's body with the longest TTL (8 h), so that none falls due while the part runs (a
 * start with expiries due reads the account and expires them first); `--mix` gives each its own external reference.
 */
const LARGE_BODY_TEXT = JSON.stringify({ ...BODY, ttlSeconds: 28_800 });
/** 1.5 KB, read as 1,500 bytes. */
const KB_1_5 = 1_500;

const rows = [];
const row = (part, figure, ours, other = '', ratio = '', target = '', result = '') =>
  rows.push([part, figure, ours, other, ratio, target, result]);
const verdict = (ok) => (ok === null ? 'n/a' : ok ? 'PASS' : 'FAIL');
/** The target rows (part T), printed after every part's rows; `ok` null: not measured (n/a). */
const targets = [];
const target = (figure, ours, other, ratio, goal, ok) =>
  targets.push(['T', figure, ours, other, ratio, goal, verdict(ok)]);

const work = mkdtempSync(join(tmpdir(), 'va-bench-'));
const running = new Set();
const track = (child) => (running.add(child), child);
const stop = async (child) => (running.delete(child), child.stop());
let receivers = [];

/**
 * The parts, run in this order; `BENCH_ONLY=<name>` runs one alone (its rows and its targets), e.g.
 * `BENCH_ONLY=large node bench/run.js` after `npm run build`.
 */
const PARTS = {
  api: apiRuns, // 1
  callbacks: callbackRuns, // 2
  start: coldStart, // 3
  state: bigState, // 4
  fsync: fsyncRuns, // 5
  lists: listRuns, // 6
  ceilings: ceilingRuns, // 7
  large: largeRuns, // 8
};

async function main() {
  const started = performance.now();
  const only = process.env.BENCH_ONLY;
  if (only && !Object.hasOwn(PARTS, only))
    throw new Error(`BENCH_ONLY=${only}: no such part (one of ${Object.keys(PARTS).join(', ')})`);
  log(`work folder ${work}; ${fmt.int(RECORDS)} records${only ? `; part ${only} only` : ''}`);
  for (const [name, part] of Object.entries(PARTS)) if (!only || only === name) await part();
  print(((performance.now() - started) / 60_000).toFixed(1));
}

// --- data sets -----------------------------------------------------------------------------------

/** Each data set is made once, by the first part that needs it. */
const once = (make) => {
  let made = null;
  return () => (made ??= make());
};

/** Data set A: `RECORDS` payments after a clean stop (kept as A0, with its files' times, as `cp -p` does), and their ids. */
const dataA = once(async () => {
  const seeded = await seed('A', { payments: RECORDS });
  if (seeded.error) throw new Error(`seeding ${RECORDS} payments failed: ${seeded.error}`);
  const pristine = join(work, 'A0');
  cpSync(join(work, 'A'), pristine, { recursive: true, preserveTimestamps: true });
  return {
    pristine,
    ids: readFileSync(join(work, 'A.ids'), 'utf8').split('\n').filter(Boolean),
    size: dataSize(join(pristine, 'state.db')),
  };
});

/** json-server's data: `RECORDS` records in its db.json (J, kept as J0), and their ids. */
const dataJ = once(async () => {
  const ids = writeJsonServerDb(join(work, 'J'), RECORDS);
  cpSync(join(work, 'J'), join(work, 'J0'), { recursive: true });
  return { pristine: join(work, 'J0'), ids, size: statSync(join(work, 'J0', 'db.json')).size };
});

// --- 1. API throughput and latency -------------------------------------------------------------

async function apiRuns() {
  const a = await dataA();
  const j = await dataJ();
  const results = {};
  for (const records of [0, RECORDS]) {
    results[`ours:${records}`] = await serverRuns(
      'ours',
      records,
      records ? join(work, 'A') : join(work, 'A-empty'),
      records ? a.ids : [],
    );
    results[`json:${records}`] = await serverRuns(
      'json',
      records,
      records ? join(work, 'J') : join(work, 'J-empty'),
      records ? j.ids : [],
    );
  }
  for (const records of [0, RECORDS]) {
    for (const op of ['post', 'get']) {
      for (const c of [1, 32]) {
        const ours = results[`ours:${records}`][`${op}${c}`];
        const json = results[`json:${records}`][`${op}${c}`];
        const what = op === 'post' ? 'POST create' : 'GET by id';
        row(
          '1',
          `${what}, ${fmt.int(records)} records, ${c} conn`,
          runCell(ours),
          runCell(json),
          fmt.ratio(ours.rps / json.rps),
        );
      }
    }
    row(
      '1',
      `server peak RSS after those runs, ${fmt.int(records)} records`,
      fmt.mb(results[`ours:${records}`].rss.peak),
      fmt.mb(results[`json:${records}`].rss.peak),
      fmt.ratio(results[`ours:${records}`].rss.peak / results[`json:${records}`].rss.peak),
    );
  }
  row(
    '1',
    `data size with ${fmt.int(RECORDS)} payments (after the seed's clean stop: state.db and its WAL, if any)`,
    fmt.mb(a.size),
    fmt.mb(j.size),
    fmt.ratio(a.size / j.size),
  );
  // Issue 16's figure, and issue 31's: what a payment costs on disk with its `created` event (and whatever else the
  // store keeps of it: its pool CVU row, the indexes).
  const perPayment = a.size / RECORDS;
  const perRecord = j.size / RECORDS;
  row(
    '1',
    `bytes on disk per payment with its created event (that size / ${fmt.int(RECORDS)})`,
    `${fmt.int(Math.round(perPayment))} bytes`,
    `json-server: ${fmt.int(Math.round(perRecord))} bytes per bare record`,
    fmt.ratio(perPayment / perRecord),
  );

  for (const c of [1, 32]) {
    const ours = results[`ours:${RECORDS}`][`post${c}`].rps;
    const json = results[`json:${RECORDS}`][`post${c}`].rps;
    target(
      `create throughput vs json-server, ${fmt.int(RECORDS)} records, ${c} conn`,
      `${fmt.rps(ours)} req/s`,
      `${fmt.rps(json)} req/s`,
      fmt.ratio(ours / json),
      '≥ 2×',
      ours >= 2 * json,
    );
  }
  for (const c of [1, 32]) {
    const ours = results['ours:0'][`post${c}`].rps;
    const json = results['json:0'][`post${c}`].rps;
    target(
      `create throughput vs json-server, 0 records, ${c} conn`,
      `${fmt.rps(ours)} req/s`,
      `${fmt.rps(json)} req/s`,
      fmt.ratio(ours / json),
      '≥ 1×',
      ours >= json,
    );
  }
  const p99 = results[`ours:${RECORDS}`].post32.p99;
  target(
    `p99 create latency, ${fmt.int(RECORDS)} records, 32 conn`,
    `${fmt.ms(p99)} ms`,
    '20 ms',
    fmt.ratio(p99 / 20),
    '< 20 ms',
    p99 < 20,
  );
  target(
    `bytes on disk per payment with its created event, ${fmt.int(RECORDS)} payments`,
    `${fmt.int(Math.round(perPayment))} bytes`,
    `1.5 KB = ${fmt.int(KB_1_5)} bytes`,
    fmt.ratio(perPayment / KB_1_5),
    '≤ 1.5 KB (#31)',
    perPayment <= KB_1_5,
  );
}

// --- seeding -------------------------------------------------------------------------------------

/**
 * Seeds data set `name` (a folder of its own, `state.db` in it) through the sandbox core in a child process. `kill`:
 * left as a SIGKILL leaves a server that took creates: a sixth of the payments came after the others, 1,000 a
 * commit, and the process is killed right after the last was acknowledged (the WAL as those commits left it).
 */
async function seed(name, { payments, pay, mix, payEvery, kill, body = BODY_TEXT }) {
  const dir = join(work, name);
  mkdirSync(dir, { recursive: true });
  const tail = kill ? Math.round(payments / 6) : 0;
  const args = [
    ...SEED_ARGS,
    '--data',
    join(dir, 'state.db'),
    '--key',
    KEY,
    '--payments',
    String(payments - tail),
    '--ids',
    join(work, `${name}.ids`),
    '--body',
    body,
  ];
  if (pay) args.push('--pay');
  if (mix) args.push('--mix');
  if (payEvery) args.push('--pay-every', String(payEvery));
  if (kill) args.push('--kill', '--tail', String(tail));
  const t0 = performance.now();
  const run = await runTimed(args);
  const exit = run.code ?? run.signal;
  const result = JSON.parse(run.stdout.trim().split('\n').at(-1) || 'null') ?? {
    error: `seed exited with ${exit}: ${run.stderr.slice(-500)}`,
  };
  if (exit !== (kill ? 'SIGKILL' : 0)) result.error ??= `seed exited with ${exit}: ${run.stderr.slice(-500)}`;
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
        [BIN, 'start', '--port', String(port), '--data', join(dir, 'state.db'), '--rate-limit', '0', ...extra]
      : [JSON_SERVER_BIN, join(dir, 'db.json'), '--port', String(port), '--host', '127.0.0.1', '--quiet'];
  const t0 = performance.now();
  const child = track(startChild(args));
  const origin = `http://127.0.0.1:${port}`;
  const readyMs = await waitReady(kind === 'ours' ? `${origin}/health` : `${origin}/`, child, t0);
  return { child, origin, readyMs };
}

const routes = {
  ours: {
    create: '/api/v1/va-payments',
    one: (id) => `/api/v1/va-payments/${id}`,
    idOf: (text) => JSON.parse(text).data.id,
  },
  json: { create: '/payments', one: (id) => `/payments/${id}`, idOf: (text) => JSON.parse(text).id },
};
const headers = { 'content-type': 'application/json', authorization: `Bearer ${KEY}` };

/** The four runs of part 1 on one server: POST at 1 and 32 connections, then GET by id at 1 and 32. */
async function serverRuns(kind, records, dir, existingIds) {
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
    return load(origin, {
      concurrency,
      ...bounds,
      make: () => ({ method: 'GET', path: route.one(pool[Math.floor(random() * pool.length)]), headers }),
    });
  };
  const label = `${kind === 'ours' ? 'va-sandbox' : 'json-server'}, ${fmt.int(records)} records`;
  log(`${label}: warm-up`);
  await post(WARMUP, 1);
  await get(WARMUP, 1);
  const out = {};
  for (const [name, run, concurrency] of [
    ['post1', post, 1],
    ['post32', post, 32],
    ['get1', get, 1],
    ['get32', get, 32],
  ]) {
    await sleep(500);
    const bounds = concurrency === 1 ? API_RUN.c1 : API_RUN.c32;
    out[name] = await run(
      records && name.startsWith('post') ? { ...bounds, seconds: SLOW_SECONDS } : bounds,
      concurrency,
    );
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
              if (waiter?.check()) waiter.done();
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
      const timer = setTimeout(
        () => ((waiter = null), fail(new Error(`timed out after ${seconds} s waiting for ${what}`))),
        seconds * 1000,
      );
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
  const transfer = (payment) => ({
    method: 'POST',
    path: '/sandbox/v1/transfers',
    headers,
    body: JSON.stringify({ to: payment.cvu, total: BODY.amount }),
  });

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
  row(
    '2',
    `transfer → cash_in_received at the receiver, one at a time`,
    `p50 ${fmt.ms(percentile(latencies, 0.5))} · p99 ${fmt.ms(percentile(latencies, 0.99))} ms (n=${latencies.length})`,
    'json-server: no callbacks',
  );

  // Sustained: many transfers at 32 connections to payments spread over 50 receivers; 2 callbacks each.
  log('callbacks: sustained run');
  const many = await createPayments(CALLBACKS.sustainedTransfers);
  // The transfers' pace is judged against creates at 32 conn on the same server, in the same minute (no callbacks).
  const createAt32 = (bounds) =>
    load(origin, {
      concurrency: 32,
      ...bounds,
      make: () => ({ method: 'POST', path: routes.ours.create, headers, body: BODY_TEXT }),
    });
  await createAt32(WARMUP);
  const creates = await createAt32(API_RUN.c32);
  log(`callbacks: creates at 32 conn ${JSON.stringify(creates)}`);
  await sleep(500);
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
  await rx
    .until(() => sent.every(done), CALLBACKS.sustainedSeconds, `${expected} callbacks`)
    .catch(() => (complete = false));
  const arrived = sent.flatMap((p) =>
    ['cash_in_received', 'succeeded'].map((t) => rx.arrivals.get(`${t}:${p.id}`)).filter((x) => x !== undefined),
  );
  const last = Math.max(...arrived);
  const perSecond = arrived.length / ((last - t0) / 1000);
  const underLoad = sent
    .filter((p) => rx.arrivals.has(`cash_in_received:${p.id}`))
    .map((p) => rx.arrivals.get(`cash_in_received:${p.id}`) - sentAt.get(p.id))
    .sort((a, b) => a - b);
  row(
    '2',
    `sustained callbacks/s to ${rx.list.length} receivers (${sent.length} transfers at 32 conn, 2 callbacks each)`,
    `${fmt.rps(perSecond)} callbacks/s (${arrived.length} of ${expected}${complete ? '' : ', INCOMPLETE'}; transfers ${fmt.rps(run.rps)} req/s)`,
    'json-server: no callbacks',
  );
  const loadedP50 = percentile(underLoad, 0.5);
  row(
    '2',
    `transfer → cash_in_received during that run`,
    `p50 ${fmt.ms(loadedP50)} · p99 ${fmt.ms(percentile(underLoad, 0.99))} ms (n=${underLoad.length})`,
    'json-server: no callbacks',
  );
  row(
    '2',
    'POST create, 32 conn, on that server just before the transfers (no callbacks)',
    runCell(creates),
    'json-server: no callbacks',
  );
  const ratio = run.rps / creates.rps;
  target(
    'transfers at 32 conn vs creates at 32 conn (part 2, the same server)',
    `${fmt.rps(run.rps)} req/s`,
    `${fmt.rps(creates.rps)} req/s`,
    fmt.ratio(ratio),
    '≥ 0.5× (#39)',
    run.errors === 0 && ratio >= 0.5,
  );
  target(
    `transfer → cash_in_received p50 under sustained load (${sent.length} transfers at 32 conn)`,
    `${fmt.ms(loadedP50)} ms`,
    '20 ms',
    fmt.ratio(loadedP50 / 20),
    '< 20 ms (#39)',
    complete && loadedP50 < 20,
  );
  target(
    `callbacks/s to ${rx.list.length} receivers during that run`,
    `${fmt.rps(perSecond)} callbacks/s`,
    '1,600 callbacks/s',
    fmt.ratio(perSecond / 1_600),
    '≥ 1,600/s (#39)',
    complete && perSecond >= 1_600,
  );
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
    await load(origin, {
      concurrency: 8,
      count: BACKLOG.deliveries,
      seconds: 60,
      make: create(JSON.stringify({ ...BODY, callbackUrl: hook })),
    });
    for (const deadline = performance.now() + 60_000; attempts < BACKLOG.deliveries && performance.now() < deadline; )
      await sleep(50);
    const run = await load(origin, {
      concurrency: 1,
      count: BACKLOG.creates,
      seconds: BACKLOG.seconds,
      make: create(BODY_TEXT),
    });
    row(
      '2',
      `POST create, 1 conn, beside ${fmt.int(attempts)} callbacks failed (HTTP 500) and waiting to retry`,
      runCell(run),
      'json-server: no callbacks',
    );
  } finally {
    await stop(child);
    failing.closeAllConnections();
    failing.close();
  }
}

// --- 5. --fsync ---------------------------------------------------------------------------------------

/** Creates on a new database at 1 and 32 connections, with `--fsync` (synchronous=FULL: each commit synced) and without. */
async function fsyncRuns() {
  const runs = {};
  for (const fsync of [false, true]) {
    const { child, origin } = await launch('ours', join(work, fsync ? 'fsync' : 'no-fsync'), fsync ? ['--fsync'] : []);
    try {
      const post = (bounds, concurrency) =>
        load(origin, {
          concurrency,
          ...bounds,
          make: () => ({ method: 'POST', path: routes.ours.create, headers, body: BODY_TEXT }),
        });
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
    row(
      '5',
      `POST create with --fsync, 0 records, ${c} conn (beside: without it)`,
      runCell(synced),
      runCell(plain),
      fmt.ratio(synced.rps / plain.rps),
    );
  }
}

// --- 6. filtered lists ----------------------------------------------------------------------------------

/**
 * GET by id beside two filtered lists on `RECORDS` payments (half paid, 100 payers' tax ids), each at 1 conn on a
 * server started from the seeded database: a filtered list should cost its page, not the table.
 */
async function listRuns() {
  log(`part 6: filtered lists, ${fmt.int(RECORDS)} payments`);
  const seeded = await seed('L', { payments: RECORDS, mix: true });
  if (seeded.error) throw new Error(`seeding ${RECORDS} payments failed: ${seeded.error}`);
  const ids = readFileSync(join(work, 'L.ids'), 'utf8').split('\n').filter(Boolean);
  const size = fmt.mb(dataSize(join(work, 'L', 'state.db')));
  const { child, origin, readyMs } = await launch('ours', join(work, 'L'));
  row('6', `server ready from that database (${size}, after the seed's clean stop)`, `${fmt.ms(readyMs)} ms`);
  try {
    // The first request after a start: timed on its own, before the warm-ups.
    const first = await timedGet(origin, '/api/v1/va-payments?status=completed&limit=20');
    row(
      '6',
      `the first request after that start, GET /api/v1/va-payments?status=completed&limit=20`,
      `${fmt.ms(first.ms)} ms (HTTP ${first.status})`,
    );
    const get = (path) => () => ({ method: 'GET', path: path(), headers });
    let n = 0;
    const runs = [
      ['GET /api/v1/va-payments/{id}', get(() => routes.ours.one(ids[(n = (n * 7919 + 1) % ids.length)]))],
      ['GET /api/v1/va-payments?status=completed&limit=20', get(() => '/api/v1/va-payments?status=completed&limit=20')],
      [
        'GET /api/v1/va-payments?clientTaxId=20100000420&limit=20',
        get(() => '/api/v1/va-payments?clientTaxId=20100000420&limit=20'),
      ],
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
      row(
        '6',
        `${what}, ${fmt.int(RECORDS)} payments, 1 conn (beside: by id)`,
        runCell(run),
        `p50 ${fmt.ms(byId.p50)} ms`,
        fmt.ratio(ratio),
        run === byId ? '' : 'p50 ≤ 2×',
        run === byId ? '' : verdict(ratio <= 2),
      );
    }
  } finally {
    await stop(child);
  }
}

// --- 3. cold start ---------------------------------------------------------------------------------

async function coldStart() {
  const loadedOurs = (await dataA()).pristine;
  const loadedJson = (await dataJ()).pristine;
  // As a crash leaves them: SIGKILLed right after its writes were acknowledged, the last sixth 1,000 a commit.
  const killed = await seed('K', { payments: RECORDS, kill: true });
  if (killed.error) throw new Error(`seeding ${RECORDS} payments to kill failed: ${killed.error}`);
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
    await fetch(`${server.origin}/api/v1/va-payments`, { method: 'POST', headers, body: BODY_TEXT }).then((r) =>
      r.arrayBuffer(),
    );
  }
  const list = await times(COLD.quick, [BIN, 'payments', 'list', '--json'], {
    VA_SANDBOX_URL: server.origin,
    VA_SANDBOX_API_KEY: KEY,
  });
  await stop(server.child);
  const nodeAgain = await times(COLD.quick, ['-e', '0']);
  const baseline = median([node, nodeAgain]);

  // Each start from a fresh copy: until it answers (/health for ours, / for json-server), then the first page of the
  // list, the first request after the start.
  const starts = async (n, kind, source) => {
    const ready = [];
    const first = [];
    for (let i = 0; i < n; i++) {
      const dir = join(work, `start-${kind}-${i}`);
      if (source) cpSync(source, dir, { recursive: true, preserveTimestamps: true });
      const started = await launch(kind, dir);
      ready.push(started.readyMs);
      if (source)
        first.push((await timedGet(started.origin, kind === 'ours' ? FIRST_PAGE : '/payments?_page=1&_limit=20')).ms);
      await stop(started.child);
      rmSync(dir, { recursive: true, force: true });
    }
    return { ready: median(ready), first: median(first) };
  };
  const startEmpty = (await starts(COLD.start, 'ours', null)).ready;
  const loaded = await starts(COLD.startLoaded, 'ours', loadedOurs);
  const json = await starts(COLD.startLoaded, 'json', loadedJson);
  const killedSize = sizeCell(join(work, 'K', 'state.db'));
  const killedStart = await starts(COLD.startLoaded, 'ours', join(work, 'K'));

  const base = `node -e 0: ${fmt.ms(baseline)} ms`;
  const jsonReady = `json-server: ${fmt.ms(json.ready)} ms`;
  const jsonFirst = `json-server, GET /payments?_page=1&_limit=20: ${fmt.ms(json.first)} ms`;
  row(
    '3',
    `va-sandbox --version (median of ${COLD.quick})`,
    `${fmt.ms(version)} ms`,
    base,
    fmt.ratio(version / baseline),
  );
  row(
    '3',
    `va-sandbox payments list --json, running server (median of ${COLD.quick})`,
    `${fmt.ms(list)} ms`,
    base,
    fmt.ratio(list / baseline),
  );
  row(
    '3',
    `va-sandbox start until /health answers, new database (median of ${COLD.start})`,
    `${fmt.ms(startEmpty)} ms`,
    base,
    fmt.ratio(startEmpty / baseline),
  );
  row(
    '3',
    `start until it answers, ${fmt.int(RECORDS)} payments, after a clean stop (${fmt.mb(dataSize(join(loadedOurs, 'state.db')))}; median of ${COLD.startLoaded})`,
    `${fmt.ms(loaded.ready)} ms`,
    jsonReady,
    fmt.ratio(loaded.ready / json.ready),
  );
  row(
    '3',
    `the first request after that start, GET ${FIRST_PAGE}`,
    `${fmt.ms(loaded.first)} ms`,
    jsonFirst,
    fmt.ratio(loaded.first / json.first),
  );
  row(
    '3',
    `start until /health answers, ${fmt.int(RECORDS)} payments, after SIGKILL, the last sixth committed 1,000 a commit (${killedSize}; median of ${COLD.startLoaded})`,
    `${fmt.ms(killedStart.ready)} ms`,
    jsonReady,
    fmt.ratio(killedStart.ready / json.ready),
  );
  row(
    '3',
    `the first request after that start, GET ${FIRST_PAGE}`,
    `${fmt.ms(killedStart.first)} ms`,
    jsonFirst,
    fmt.ratio(killedStart.first / json.first),
  );
  target(
    '--version vs node -e 0',
    `${fmt.ms(version)} ms`,
    base,
    fmt.ratio(version / baseline),
    '≤ 1.5×',
    version <= 1.5 * baseline,
  );
  target(
    'payments list --json vs node -e 0',
    `${fmt.ms(list)} ms`,
    base,
    fmt.ratio(list / baseline),
    '≤ 2.5×',
    list <= 2.5 * baseline,
  );
  target(
    `server ready with ${fmt.int(RECORDS)} payments`,
    `${fmt.ms(loaded.ready)} ms`,
    '1000 ms',
    fmt.ratio(loaded.ready / 1000),
    '< 1 s',
    loaded.ready < 1000,
  );
  target(
    `start after SIGKILL with ${fmt.int(RECORDS)} payments`,
    `${fmt.ms(killedStart.ready)} ms`,
    '1000 ms',
    fmt.ratio(killedStart.ready / 1000),
    '< 1 s',
    killedStart.ready < 1000,
  );
}

/** The unfiltered first page of VA payments. */
const FIRST_PAGE = '/api/v1/va-payments?limit=20';

/** One GET, timed from the request until its whole body is read; with its status and, for our lists, the total. */
async function timedGet(origin, path) {
  const t0 = performance.now();
  let response;
  let text;
  try {
    response = await fetch(`${origin}${path}`, { headers });
    text = await response.text();
  } catch (error) {
    return {
      ms: performance.now() - t0,
      status: 0,
      total: null,
      text: `no answer: ${error.cause?.message ?? error.message}`,
    };
  }
  const ms = performance.now() - t0;
  let total = null;
  try {
    total = JSON.parse(text).pagination?.total ?? null;
  } catch {
    // not JSON: the status says why
  }
  return { ms, status: response.status, total, text: response.ok ? '' : text.slice(0, 200) };
}

// --- 4. memory and size ------------------------------------------------------------------------------

async function bigState() {
  log(`part 4: ${fmt.int(RECORDS)} payments, each paid by a transfer`);
  const seeded = await seed('B', { payments: RECORDS, pay: true });
  const dir = join(work, 'B');
  const what = `${fmt.int(RECORDS)} payments + ${fmt.int(RECORDS)} transfers`;
  const problems = [
    seeded.payments < RECORDS
      ? `only ${fmt.int(seeded.payments)} + ${fmt.int(seeded.transfers)} could be saved: ${seeded.error}`
      : null,
    seeded.closeError ? `stopping the seeding server failed: ${seeded.closeError}` : null,
  ].filter(Boolean);
  const file = join(dir, 'state.db');
  const size = dataSize(file);
  let server;
  try {
    server = await launch('ours', dir);
  } catch (error) {
    row('4', `data size, ${what}`, [fmt.mb(size), ...problems].join(' — '));
    row('4', `server peak RSS, ${what}`, `server did not start: ${String(error.message).slice(0, 200)}`);
    target(`${what} kept and readable after a restart`, 'no', '', '', 'kept', false);
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
        ? {
            method: 'POST',
            path: '/sandbox/v1/transfers',
            headers,
            body: JSON.stringify({ to: cvus.shift(), total: BODY.amount }),
          }
        : { method: 'POST', path: '/api/v1/va-payments', headers, body: BODY_TEXT },
    onResponse: (_, text) => {
      const data = JSON.parse(text).data;
      if (data.cvu && data.status) cvus.push(data.cvu);
    },
  });
  const rss = rssOf(server.child.pid);
  const stopped = await stopGracefully(server.child);
  const after = dataSize(file);
  row(
    '4',
    `data size, ${what} (state.db and its WAL)`,
    [`${fmt.mb(size)} as seeded, ${fmt.mb(after)} after the writes and the stop`, ...problems].join(' — '),
  );
  row(
    '4',
    `server peak RSS, ${what}: start (${fmt.ms(server.readyMs)} ms to ready), the first request + ${writes.ok} writes in ${writes.seconds.toFixed(1)} s`,
    `${fmt.mb(rss.peak)}${writes.errors ? ` (${writes.errors} write errors: ${writes.firstError})` : ''}`,
  );
  row('4', `graceful stop (SIGTERM) with that state`, stopped.cell);
  const kept = totals === seeded.payments && transfers === seeded.transfers && seeded.payments === RECORDS;
  target(
    `${what} kept and readable after a restart`,
    `${fmt.int(totals)} + ${fmt.int(transfers)} read back`,
    `${fmt.int(RECORDS)} + ${fmt.int(RECORDS)}`,
    '',
    'kept',
    kept,
  );
  target(`graceful stop with ${what}`, stopped.ok ? 'exit 0' : 'failed', '', '', 'exit 0', stopped.ok);
  target(
    `clean stop (SIGTERM until exit) with ${what}`,
    `${fmt.ms(stopped.ms)} ms`,
    '2000 ms',
    fmt.ratio(stopped.ms / 2000),
    '< 2 s',
    stopped.ok && stopped.ms < 2000,
  );
}

/** A graceful stop (SIGTERM), as a user's Ctrl-C: it must save and exit 0; SIGKILLed after 120 s. */
async function stopGracefully(child) {
  const t0 = performance.now();
  running.delete(child);
  child.child.kill('SIGTERM');
  let timer;
  const exit = await Promise.race([child.exited, new Promise((done) => (timer = setTimeout(done, 120_000, null)))]);
  clearTimeout(timer);
  if (exit === null) await child.stop();
  const ms = performance.now() - t0;
  const ok = exit !== null && exit.code === 0;
  const cell = ok
    ? `exit 0 in ${fmt.ms(ms)} ms`
    : `FAILED: ${exit === null ? 'still running after 120 s' : `exit ${exit.code ?? exit.signal}`} — ${lastLine(child.output())}`;
  return { ms, ok, cell };
}

const lastLine = (text) =>
  text
    .trim()
    .split('\n')
    .filter((line) => /error/i.test(line))
    .at(0)
    ?.slice(0, 160) ??
  text.trim().split('\n').at(-1)?.slice(0, 160) ??
  '';

// --- 7. ceilings: a bare node:http server and WireMock's stub server -----------------------------------------

/**
 * Creates at 32 conn on four servers, each a child process started here, the same bounds and warm-up for each:
 * va-sandbox on a new database, bench/bare-server.js (node:http: read, parse, answer ~1 KB), bench/floor-server.js
 * (the same, storing two rows a create in SQLite with group commit) and WireMock's standalone
 * JAR answering a stub (bench/wiremock/mappings) with no request journal or logging. WireMock needs Java: without it,
 * those rows say so and the bench goes on.
 */
async function ceilingRuns() {
  log('part 7: va-sandbox, bare node:http, the SQLite floor and WireMock at 32 conn');
  const post = (origin, bounds) =>
    load(origin, {
      concurrency: 32,
      ...bounds,
      make: () => ({ method: 'POST', path: routes.ours.create, headers, body: BODY_TEXT }),
    });
  const measure = async (name, started) => {
    const { child, origin } = await started;
    try {
      await post(origin, FLOOD.warmup);
      await sleep(500);
      const run = await post(origin, FLOOD.run);
      log(`${name}: ${JSON.stringify(run)}`);
      return run;
    } finally {
      await stop(child);
    }
  };
  const ours = await measure('va-sandbox', launch('ours', join(work, 'ceiling')));
  const bare = await measure('bare node:http', launchScript('bare-server.js'));
  const floor = await measure('SQLite floor', launchScript('floor-server.js', join(work, 'floor.db')));
  const missing = wiremockMissing();
  const wiremock = missing ? null : await measure('WireMock', launchWireMock());
  if (missing) log(`WireMock rows skipped: ${missing}`);

  row(
    '7',
    'POST create, 0 records, 32 conn (beside: a bare node:http server, bench/bare-server.js)',
    runCell(ours),
    runCell(bare),
    fmt.ratio(ours.rps / bare.rps),
  );
  row(
    '7',
    'POST create, 0 records, 32 conn (beside: the SQLite floor, bench/floor-server.js)',
    runCell(ours),
    runCell(floor),
    fmt.ratio(ours.rps / floor.rps),
  );
  row(
    '7',
    `POST create, 0 records, 32 conn (beside: WireMock ${dependencyVersion('wiremock')} stub server)`,
    runCell(ours),
    wiremock ? runCell(wiremock) : `skipped: ${missing}`,
    wiremock ? fmt.ratio(ours.rps / wiremock.rps) : '',
  );
  const bareRatio = ours.rps / bare.rps;
  const vsBare = (goal, ok) =>
    target(
      'creates at 32 conn vs a bare node:http server',
      `${fmt.rps(ours.rps)} req/s`,
      `${fmt.rps(bare.rps)} req/s`,
      fmt.ratio(bareRatio),
      goal,
      ok,
    );
  vsBare('≥ 0.25× (#31)', bareRatio >= 0.25);
  vsBare('≥ 0.30× (#31: the aim)', bareRatio >= 0.3);
  vsBare('not below 0.20× (#31)', bareRatio >= 0.2);
  target(
    'creates at 32 conn vs the SQLite floor',
    `${fmt.rps(ours.rps)} req/s`,
    `${fmt.rps(floor.rps)} req/s`,
    fmt.ratio(ours.rps / floor.rps),
    '≥ 0.6× (#39)',
    ours.rps >= 0.6 * floor.rps,
  );
  target(
    'creates at 32 conn vs WireMock stub server',
    `${fmt.rps(ours.rps)} req/s`,
    wiremock ? `${fmt.rps(wiremock.rps)} req/s` : 'skipped: no Java',
    wiremock ? fmt.ratio(ours.rps / wiremock.rps) : '',
    '≥ 0.6× (#16; #31: beside it)',
    wiremock ? ours.rps >= 0.6 * wiremock.rps : null,
  );
}

/** One of the bench's own servers (bench/bare-server.js, bench/floor-server.js) on a free port, with its other arguments. */
const launchScript = (script, ...args) => startScript(track, script, ...args);

const launchWireMock = () => startWireMock(track, work);

// --- 8. a large account --------------------------------------------------------------------------------------------

/**
 * Part 8's first pages, on `LARGE` payments seeded with `--mix --pay-every 10` (a tenth paid, 100 payers' tax ids, an
 * external reference each): each is the first request after a start from the SIGKILLed database.
 */
const largePages = (ids) => [
  ['GET /api/v1/va-payments?limit=20', FIRST_PAGE],
  ['GET /api/v1/va-payments?status=completed&limit=20', '/api/v1/va-payments?status=completed&limit=20'],
  [
    `GET /api/v1/va-payments?externalReference=order-${Math.floor(ids / 2)}&limit=20`,
    `/api/v1/va-payments?externalReference=order-${Math.floor(ids / 2)}&limit=20`,
  ],
  ['GET /api/v1/va-payments?clientTaxId=20100000420&limit=20', '/api/v1/va-payments?clientTaxId=20100000420&limit=20'],
];

/**
 * `LARGE` payments, SIGKILLed right after their writes were acknowledged (the last sixth 1,000 a commit, see `seed`).
 * For each first page: a start from that database (the first right after the seed's SIGKILL, each later one right
 * after the SIGKILL of the one before), until /health answers, then that page as the first request, the same page
 * again, the server's peak RSS, and SIGKILL. Then one more start: creates at 32 conn (bounds as part 7) beside creates
 * on a new database in the
 * same run, the peak RSS from the start through the SIGTERM stop, and the stop.
 */
async function largeRuns() {
  log(`part 8: ${fmt.int(LARGE)} payments`);
  const seeded = await seed('X', { payments: LARGE, mix: true, payEvery: 10, kill: true, body: LARGE_BODY_TEXT });
  if (seeded.error) throw new Error(`seeding ${LARGE} payments failed: ${seeded.error}`);
  const dir = join(work, 'X');
  const size = sizeCell(join(dir, 'state.db'));
  const what = `${fmt.int(LARGE)} payments`;
  const seededNote = `seeded in ${(seeded.ms / 1000).toFixed(1)} s: made ${(seeded.makeMs / 1000).toFixed(1)} s, first commit ${(seeded.commitMs / 1000).toFixed(1)} s`;

  const pages = [];
  for (const [label, path] of largePages(LARGE - Math.round(LARGE / 6))) {
    const server = await launch('ours', dir);
    const rss = watchRss(server.child.pid);
    try {
      const first = await timedGet(server.origin, path);
      const again = await timedGet(server.origin, path);
      pages.push({ label, readyMs: server.readyMs, first, again, peak: rss.peak() });
      log(
        `${label}: ready ${fmt.ms(server.readyMs)} ms, first ${fmt.ms(first.ms)} ms (HTTP ${first.status}, total ${first.total}), again ${fmt.ms(again.ms)} ms`,
      );
    } finally {
      rss.stop();
      await stop(server.child);
    }
  }

  const post = (origin, bounds) =>
    load(origin, {
      concurrency: 32,
      ...bounds,
      make: () => ({ method: 'POST', path: routes.ours.create, headers, body: BODY_TEXT }),
    });
  const creates = async (origin) => {
    const warmup = await post(origin, FLOOD.warmup);
    await sleep(500);
    const run = await post(origin, FLOOD.run);
    return { warmup, run, both: joined([warmup, run]) };
  };
  /** Runs made one: their requests over their seconds (their latencies are not merged). */
  const joined = (runs) => {
    const sum = (key) => runs.reduce((total, one) => total + one[key], 0);
    return {
      ok: sum('ok'),
      errors: sum('errors'),
      seconds: sum('seconds'),
      rps: sum('ok') / sum('seconds'),
      p50: null,
      p99: null,
    };
  };
  /** What `load` gives, or two runs made one (their latencies are not merged). */
  const cell = (run) =>
    run.p50 === null
      ? `${fmt.rps(run.rps)} req/s (n=${fmt.int(run.ok)} in ${run.seconds.toFixed(1)} s${run.errors ? `, ${run.errors} errors` : ''})`
      : runCell(run);
  const empty = await launch('ours', join(work, 'X-empty'));
  const atZero = await creates(empty.origin);
  log(`creates at 0: ${JSON.stringify(atZero)}`);
  await stop(empty.child);

  const server = await launch('ours', dir);
  const rss = watchRss(server.child.pid);
  try {
    const atLarge = await creates(server.origin);
    log(`creates at ${LARGE}: ${JSON.stringify(atLarge)}`);
    const stopped = await stopGracefully(server.child);
    const peak = rss.peak();
    const ratio = (key) => atLarge[key].rps / atZero[key].rps;
    const firstStart = pages[0]?.readyMs ?? server.readyMs;
    const pagePeak = Math.max(...pages.map((page) => page.peak));
    row(
      '8',
      `start until /health answers, ${what}, right after the seed's SIGKILL (${size}; ${seededNote})`,
      `${fmt.ms(firstStart)} ms`,
    );
    for (const page of pages) {
      const answer =
        page.first.status === 200 ? `of ${fmt.int(page.first.total)}` : `HTTP ${page.first.status} ${page.first.text}`;
      row(
        '8',
        `${page.label}, ${what}: the first request after a start (ready in ${fmt.ms(page.readyMs)} ms)`,
        `${fmt.ms(page.first.ms)} ms (${answer})`,
        `the same again: ${fmt.ms(page.again.ms)} ms`,
        fmt.ratio(page.first.ms / page.again.ms),
      );
    }
    row(
      '8',
      `server peak RSS, ${what}: a start and those two requests (the highest of the ${pages.length} starts)`,
      fmt.mb(pagePeak),
    );
    row(
      '8',
      `POST create, ${what}, 32 conn, the ${fmt.int(FLOOD.warmup.count)} warm-up creates right after a start (beside: a new database)`,
      cell(atLarge.warmup),
      cell(atZero.warmup),
      fmt.ratio(ratio('warmup')),
    );
    row(
      '8',
      `POST create, ${what}, 32 conn, the run after the warm-up (beside: a new database, the same bounds)`,
      cell(atLarge.run),
      cell(atZero.run),
      fmt.ratio(ratio('run')),
    );
    row(
      '8',
      `POST create, ${what}, 32 conn, the warm-up and that run as one`,
      cell(atLarge.both),
      cell(atZero.both),
      fmt.ratio(ratio('both')),
    );
    row('8', `server peak RSS, ${what}: that start, ${fmt.int(atLarge.both.ok)} creates and the stop`, fmt.mb(peak));
    row('8', `graceful stop (SIGTERM) with ${what} + those creates`, stopped.cell);
    target(
      `start after SIGKILL with ${what}`,
      `${fmt.ms(firstStart)} ms`,
      '500 ms',
      fmt.ratio(firstStart / 500),
      '< 0.5 s (#31)',
      firstStart < 500,
    );
    for (const page of pages) {
      target(
        `${page.label}, ${what}, first request after a start`,
        `${fmt.ms(page.first.ms)} ms`,
        '20 ms',
        fmt.ratio(page.first.ms / 20),
        '< 20 ms (#31)',
        page.first.status === 200 && page.first.ms < 20,
      );
    }
    target(
      `creates at ${what} vs a new database, 32 conn, the run after the warm-up (at most ${fmt.int(FLOOD.run.count)} / ${FLOOD.run.seconds} s)`,
      `${fmt.rps(atLarge.run.rps)} req/s`,
      `${fmt.rps(atZero.run.rps)} req/s`,
      fmt.ratio(ratio('run')),
      '≥ 0.85× (#31)',
      ratio('run') >= 0.85,
    );
    const highest = Math.max(peak, pagePeak);
    target(
      `peak RSS with ${what} (the highest of part 8's starts)`,
      fmt.mb(highest),
      '300 MiB',
      fmt.ratio(highest / (300 * 2 ** 20)),
      '< 300 MiB (#31)',
      highest < 300 * 2 ** 20,
    );
  } finally {
    rss.stop();
    await stop(server.child);
  }
}

// --- output --------------------------------------------------------------------------------------------

function print(minutes) {
  const cpu = cpus();
  const lines = [
    `va-sandbox bench — ${new Date().toISOString()}`,
    `machine: ${cpu.length} × ${cpu[0]?.model.trim() ?? 'cpu'}, ${fmt.mb(totalmem()).replace(' MiB', '')} MiB RAM, Node ${process.version}, ${process.platform}; loopback only`,
    `servers: va-sandbox (built CLI, \`start --data DIR/state.db\`: SQLite through node:sqlite: every lookup and page a query on an index) and json-server ${dependencyVersion('json-server')} (\`json-server db.json --quiet\`: with --watch it reloads on its own writes and resets connections under write load), each a child process; json-server answers a write before it reaches the file, va-sandbox after; load from this process (undici Pool, keep-alive)`,
    `part 1: per run at most ${fmt.int(API_RUN.c1.count)} requests / ${API_RUN.c1.seconds} s at 1 conn, ${fmt.int(API_RUN.c32.count)} / ${API_RUN.c32.seconds} s at 32 conn, (POSTs with ${fmt.int(RECORDS)} records: ${SLOW_SECONDS} s), after ${WARMUP.count} warm-up requests; body ${BODY_TEXT}; "0 records": GETs read what the POST runs made`,
    `part 2: ${CALLBACKS.receivers} receivers answering 200; ${CALLBACKS.latencyTransfers} sequential transfers (≤ ${CALLBACKS.latencySeconds} s), then on the same server creates at 32 conn (bounds as part 1) and ${fmt.int(CALLBACKS.sustainedTransfers)} transfers at 32 conn (≤ ${CALLBACKS.sustainedSeconds} s); then a fresh server with ${fmt.int(BACKLOG.deliveries)} callbacks failing (--retry-delays 60,60) and ${fmt.int(BACKLOG.creates)} creates (≤ ${BACKLOG.seconds} s)`,
    `part 3: starts from a fresh copy each; after SIGKILL: the seed committed five sixths at once, the last sixth 1,000 a commit, and SIGKILLed itself; "the first request": GET ${FIRST_PAGE} right after /health answered`,
    `part 5: creates on a new database with --fsync (synchronous=FULL) and without (NORMAL), bounds as part 1, the data in the system's temp folder`,
    `part 6: ${fmt.int(RECORDS)} payments (every other one paid, 100 payers' tax ids: 1,000 payments each, an external reference each), the server started from them; each row at 1 conn, bounds as part 1`,
    `part 7: creates at 32 conn, at most ${fmt.int(FLOOD.run.count)} / ${FLOOD.run.seconds} s after ${fmt.int(FLOOD.warmup.count)} / ${FLOOD.warmup.seconds} s of warm-up, on va-sandbox (new database), bench/bare-server.js (node:http), bench/floor-server.js (the same storing each create's payment and event rows in SQLite, group commit) and WireMock ${dependencyVersion('wiremock')} (java -jar, --no-request-journal --disable-request-logging, stub in bench/wiremock), one after the other`,
    `part 8: ${fmt.int(LARGE)} payments (a tenth paid, 100 payers' tax ids, an external reference each, TTL 8 h) SIGKILLed right after their writes were acknowledged (as part 3); for each of 4 first pages a start from that database, /health, that page as the first request and again, then SIGKILL; then a start, creates at 32 conn as part 7 (beside: a new database, the same), peak RSS through the SIGTERM stop`,
    `seeding: va-sandbox through its core in a child process (bench/seed.js, one commit: one SQLite transaction), json-server by writing db.json; total ${minutes} min`,
    '',
    table(
      ['part', 'figure', 'va-sandbox', 'json-server / baseline', 'ratio', 'target', 'result'],
      [...rows, ...targets],
    ),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

// Last, once every declaration above is initialized.
await runBench(main, async () => {
  for (const child of running) await child.stop();
  for (const receiver of receivers) receiver.server.closeAllConnections(), receiver.server.close();
  rmSync(work, { recursive: true, force: true });
});
