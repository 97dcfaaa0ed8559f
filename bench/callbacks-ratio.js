// `npm run build && BENCH_BASELINE=DIR node bench/callbacks-ratio.js`: part 2's transfers with two callbacks each
// (bench/run.js), measured on this build and on the one built in DIR (another checkout, after its `npm run build`) in
// alternated rounds, so a change to the callback path is compared with its base on the same machine a few seconds
// apart. Per round and server: payments made (8 conn) with their callbacks spread over 50 local receivers, then one
// transfer to each at 32 conn; the server's CPU (user + system, /proc/PID/stat) from the first transfer until both
// callbacks of each have arrived, per transfer, and the callbacks per second over that time.
// Environment: BENCH_ROUNDS (default 4), BENCH_TRANSFERS (default 1,500 a round), BENCH_BASELINE (optional).
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { BIN, cpuMsOf, fmt, freePort, load, log, median, runBench, startChild, table, waitReady } from './lib.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const TRANSFERS = Number(process.env.BENCH_TRANSFERS ?? 1_500);
const RECEIVERS = 50;
const KEY = 'sk_bench';
const BODY = {
  paymentHubId: 1,
  currency: 'ARS',
  lockMode: 'time',
  amount: 1500,
  externalReference: 'order-1042',
  metadata: { source: 'bench' },
};
const headers = { 'content-type': 'application/json', authorization: `Bearer ${KEY}` };

const work = mkdtempSync(join(tmpdir(), 'va-callbacks-'));
const running = [];
const arrivals = new Map();
let receivers = [];

async function startReceivers() {
  receivers = await Promise.all(
    Array.from({ length: RECEIVERS }, async () => {
      const server = createServer((req, res) => {
        const chunks = [];
        req.on('data', (chunk) => chunks.push(chunk));
        req.on('end', () => {
          res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
          const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
          const key = `${body.eventType}:${body.vaPaymentId}`;
          if (!arrivals.has(key)) arrivals.set(key, performance.now());
        });
      });
      await new Promise((done) => server.listen(0, '127.0.0.1', done));
      return { server, url: `http://127.0.0.1:${server.address().port}` };
    }),
  );
}

/** Resolves once `check()` holds, polled every 5 ms; rejects after `seconds`. */
async function until(check, seconds, what) {
  const deadline = performance.now() + seconds * 1000;
  while (!check()) {
    if (performance.now() > deadline) throw new Error(`timed out after ${seconds} s waiting for ${what}`);
    await sleep(5);
  }
}

async function startSandbox(bin, name) {
  const port = await freePort();
  const t0 = performance.now();
  const child = startChild([bin, 'start', '--port', String(port), '--data', join(work, name), '--rate-limit', '0']);
  running.push(child);
  const origin = `http://127.0.0.1:${port}`;
  await waitReady(`${origin}/health`, child, t0);
  return { child, origin };
}

/** One round on one server: `TRANSFERS` payments, then a transfer to each; CPU per transfer and callbacks/s. */
async function round(server) {
  const payments = [];
  await load(server.origin, {
    concurrency: 8,
    count: TRANSFERS,
    seconds: 120,
    make: (i) => ({
      method: 'POST',
      path: '/api/v1/va-payments',
      headers,
      body: JSON.stringify({ ...BODY, callbackUrl: `${receivers[i % RECEIVERS].url}/va` }),
    }),
    onResponse: (_, text) => payments.push(JSON.parse(text).data),
  });
  await until(() => payments.every((p) => arrivals.has(`created:${p.id}`)), 120, 'the created callbacks');
  await sleep(300);
  const before = cpuMsOf(server.child.pid);
  const t0 = performance.now();
  const run = await load(server.origin, {
    concurrency: 32,
    count: payments.length,
    seconds: 120,
    make: (i) => ({
      method: 'POST',
      path: '/sandbox/v1/transfers',
      headers,
      body: JSON.stringify({ to: payments[i].cvu, total: BODY.amount }),
    }),
  });
  const both = (p) => arrivals.has(`cash_in_received:${p.id}`) && arrivals.has(`succeeded:${p.id}`);
  await until(() => payments.every(both), 120, "the transfers' callbacks");
  const cpuMs = cpuMsOf(server.child.pid) - before;
  const last = Math.max(...payments.map((p) => arrivals.get(`succeeded:${p.id}`)));
  return {
    rps: run.rps,
    errors: run.errors,
    cpuUs: (cpuMs * 1000) / run.ok,
    callbacksPerSecond: (payments.length * 2) / ((last - t0) / 1000),
  };
}

async function main() {
  await startReceivers();
  const servers = { 'va-sandbox': await startSandbox(BIN, 'state.db') };
  const baseline = process.env.BENCH_BASELINE;
  if (baseline)
    servers['va-sandbox baseline'] = await startSandbox(join(baseline, 'bin', 'va-sandbox.js'), 'baseline.db');
  const names = Object.keys(servers);
  const runs = Object.fromEntries(names.map((name) => [name, []]));
  const rows = [];
  for (let n = 0; n < ROUNDS; n++) {
    for (const name of names.map((_, i) => names[(i + n) % names.length])) {
      const run = await round(servers[name]);
      runs[name].push(run);
      log(
        `round ${n + 1} ${name}: ${run.cpuUs.toFixed(0)} µs CPU/transfer, ${fmt.rps(run.callbacksPerSecond)} callbacks/s, ${fmt.rps(run.rps)} transfers/s`,
      );
      rows.push([
        String(n + 1),
        name,
        `${run.cpuUs.toFixed(0)} µs`,
        `${fmt.rps(run.callbacksPerSecond)}/s`,
        `${fmt.rps(run.rps)} req/s${run.errors ? `, ${run.errors} errors` : ''}`,
      ]);
    }
  }
  const of = (name, key) => median(runs[name].map((run) => run[key]));
  const summary = names.map((name) => [
    'median',
    name,
    `${of(name, 'cpuUs').toFixed(0)} µs`,
    `${fmt.rps(of(name, 'callbacksPerSecond'))}/s`,
    `${fmt.rps(of(name, 'rps'))} req/s`,
  ]);
  const ours = runs['va-sandbox'];
  const ratio = (key) => median(ours.map((run, i) => run[key] / runs['va-sandbox baseline'][i][key]));
  const ratios = baseline
    ? [
        [
          'ratio',
          'va-sandbox / baseline',
          fmt.ratio(ratio('cpuUs')),
          fmt.ratio(ratio('callbacksPerSecond')),
          fmt.ratio(ratio('rps')),
        ],
      ]
    : [];
  const heading = `transfers with two callbacks — ${new Date().toISOString()}, ${ROUNDS} rounds of ${fmt.int(TRANSFERS)} transfers at 32 conn, ${RECEIVERS} receivers`;
  const header = ['round', 'server', 'server CPU per transfer (with its 2 callbacks)', 'callbacks/s', 'transfers'];
  process.stdout.write(`${heading}\n\n${table(header, [...rows, ...summary, ...ratios])}\n`);
}

await runBench(main, async () => {
  await Promise.all(running.map((child) => child.stop()));
  for (const { server } of receivers) server.close();
  rmSync(work, { recursive: true, force: true });
});
