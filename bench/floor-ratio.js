// `npm run build && node bench/floor-ratio.js`: issue 48's same-run ratios. va-sandbox (the built CLI on a new
// database), bench/contract-floor-server.js (what a create must do, at its least) and WireMock's stub server (when
// Java is here), all started at once, take creates at 32 connections in turn, the order rotated each round, so each
// round's ratios compare runs made a few seconds apart on the same machine. Per run: the requests answered, and the
// server's CPU time (user + system, /proc/PID/stat) over them, per request: a busy shared machine slows a server's
// throughput more than it changes the CPU a request costs. Prints one row a run, then the medians and the targets.
// Environment: BENCH_ROUNDS (default 5); BENCH_BASELINE=DIR adds the va-sandbox built in DIR (another checkout, after
// its `npm run build`) as one more server, so a change is measured against its base in the same rounds.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  BIN,
  cpuMsOf,
  dependencyVersion,
  fmt,
  freePort,
  load,
  log,
  median,
  runBench,
  startChild,
  startScript,
  startWireMock,
  table,
  waitReady,
  wiremockMissing,
} from './lib.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const RUN = { count: 6_000, seconds: 8 };
const WARMUP = { count: 3_000, seconds: 5 };
const KEY = 'sk_bench';
const BODY_TEXT = JSON.stringify({
  paymentHubId: 1,
  currency: 'ARS',
  lockMode: 'time',
  amount: 1500,
  externalReference: 'order-1042',
  metadata: { source: 'bench' },
});
const headers = { 'content-type': 'application/json', authorization: `Bearer ${KEY}` };

const work = mkdtempSync(join(tmpdir(), 'va-floor-'));
const running = [];
const track = (child) => (running.push(child), child);

async function startSandbox(bin = BIN, name = 'state.db') {
  const port = await freePort();
  const t0 = performance.now();
  const child = track(
    startChild([bin, 'start', '--port', String(port), '--data', join(work, name), '--rate-limit', '0']),
  );
  const origin = `http://127.0.0.1:${port}`;
  await waitReady(`${origin}/health`, child, t0);
  return { child, origin };
}

/** Creates at 32 conn on one server, and the server's CPU over them per answered create (µs). */
async function creates(server, bounds) {
  const before = cpuMsOf(server.child.pid);
  const run = await load(server.origin, {
    concurrency: 32,
    ...bounds,
    make: () => ({ method: 'POST', path: '/api/v1/va-payments', headers, body: BODY_TEXT }),
  });
  const cpuMs = cpuMsOf(server.child.pid) - before;
  return { ...run, cpuUs: (cpuMs * 1000) / run.ok };
}

async function main() {
  const missing = wiremockMissing();
  if (missing) log(`WireMock skipped: ${missing}`);
  const servers = {
    'va-sandbox': await startSandbox(),
    'contract floor': await startScript(track, 'contract-floor-server.js', join(work, 'floor.db')),
  };
  if (!missing) servers[`WireMock ${dependencyVersion('wiremock')}`] = await startWireMock(track, work);
  const baseline = process.env.BENCH_BASELINE;
  if (baseline)
    servers['va-sandbox baseline'] = await startSandbox(join(baseline, 'bin', 'va-sandbox.js'), 'baseline.db');
  const names = Object.keys(servers);
  for (const name of names) await creates(servers[name], WARMUP);
  const runs = Object.fromEntries(names.map((name) => [name, []]));
  const rows = [];
  for (let round = 0; round < ROUNDS; round++) {
    const order = names.map((_, i) => names[(i + round) % names.length]);
    for (const name of order) {
      await sleep(300);
      const run = await creates(servers[name], RUN);
      runs[name].push(run);
      log(
        `round ${round + 1} ${name}: ${fmt.rps(run.rps)} req/s, ${run.cpuUs.toFixed(0)} µs CPU/create, ${run.errors} errors`,
      );
      rows.push([
        String(round + 1),
        name,
        `${fmt.rps(run.rps)} req/s`,
        `${run.cpuUs.toFixed(0)} µs`,
        `p50 ${fmt.ms(run.p50)} · p99 ${fmt.ms(run.p99)} ms (n=${run.ok}${run.errors ? `, ${run.errors} errors: ${run.firstError}` : ''})`,
      ]);
    }
  }
  const ours = runs['va-sandbox'];
  /** Each round's ratio of va-sandbox to `name`, then their median. */
  const ratio = (name, key) => median(ours.map((run, i) => run[key] / runs[name][i][key]));
  const summary = names.map((name) => [
    'median',
    name,
    `${fmt.rps(median(runs[name].map((r) => r.rps)))} req/s`,
    `${median(runs[name].map((r) => r.cpuUs)).toFixed(0)} µs`,
    '',
  ]);
  const targets = [];
  for (const name of names.slice(1)) {
    targets.push([
      'ratio',
      `va-sandbox / ${name}`,
      `${fmt.ratio(ratio(name, 'rps'))} by throughput`,
      `${fmt.ratio(ratio(name, 'cpuUs'))} by CPU/create`,
      "median of the rounds' ratios",
    ]);
  }
  const lines = [
    `va-sandbox against the contract floor — ${new Date().toISOString()}, ${ROUNDS} rounds of at most ${fmt.int(RUN.count)} creates / ${RUN.seconds} s at 32 conn each, after ${fmt.int(WARMUP.count)} warm-up creates each`,
    '',
    table(['round', 'server', 'throughput', 'server CPU per create', 'latency'], [...rows, ...summary, ...targets]),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

await runBench(main, async () => {
  for (const child of running) await child.stop();
  rmSync(work, { recursive: true, force: true });
});
