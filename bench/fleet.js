// The fleet's throughput: 1, then 3 `va-sandbox start` instances (each its own database in a temp folder) behind
// docs/scale-out.md's HAProxy configuration, the same bounded load through the proxy each time: `concurrency`
// connections creating VA payments over 400 API keys for `seconds`. Prints a Markdown table on stdout.
// `npm run build && node bench/fleet.js [seconds] [concurrency]`; needs haproxy on PATH.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, fmt, freePort, load, log, ROOT, startChild, table, waitReady } from './lib.js';

const seconds = Number(process.argv[2] ?? 10);
const concurrency = Number(process.argv[3] ?? 32);
const KEYS = 400;
const CONFIG = /```haproxy\n([^]*?)```/.exec(readFileSync(join(ROOT, 'docs', 'scale-out.md'), 'utf8'))[1];
const body = JSON.stringify({ paymentHubId: 1, currency: 'ARS', lockMode: 'time', amount: 1500 });

async function fleet(instances, dir) {
  const ports = await Promise.all(Array.from({ length: instances }, () => freePort()));
  const children = ports.map((port, i) =>
    startChild([
      BIN,
      'start',
      '--port',
      String(port),
      '--data',
      join(dir, `${instances}-${i}.db`),
      '--quiet',
      '--rate-limit',
      '0',
    ]),
  );
  const proxyPort = await freePort();
  // The doc's backend with one `server` line per instance.
  const servers = ports.map((port, i) => `  server s${i} 127.0.0.1:${port}`).join('\n');
  const config = CONFIG.replace('bind 127.0.0.1:4580', `bind 127.0.0.1:${proxyPort}`).replace(
    /( {2}server \w+ 127\.0\.0\.1:\d+\n?)+/,
    `${servers}\n`,
  );
  writeFileSync(join(dir, 'fleet.cfg'), config);
  const proxy = startChild(['-db', '-f', join(dir, 'fleet.cfg')], { command: 'haproxy' });
  const started = performance.now();
  await Promise.all(ports.map((port, i) => waitReady(`http://127.0.0.1:${port}/health`, children[i], started)));
  const origin = `http://127.0.0.1:${proxyPort}`;
  await waitReady(`${origin}/health`, proxy, started);
  try {
    return await load(origin, {
      concurrency,
      count: Number.MAX_SAFE_INTEGER,
      seconds,
      make: (i) => ({
        method: 'POST',
        path: '/api/v1/va-payments',
        headers: { authorization: `Bearer sk_bench_${i % KEYS}`, 'content-type': 'application/json' },
        body,
      }),
    });
  } finally {
    await proxy.stop();
    await Promise.all(children.map((child) => child.stop()));
  }
}

const dir = mkdtempSync(join(tmpdir(), 'va-sandbox-fleet-'));
const rows = [];
try {
  for (const instances of [1, 3]) {
    log(`${instances} instance(s) behind haproxy: ${concurrency} connections, ${seconds} s`);
    const run = await fleet(instances, dir);
    if (run.errors > 0) log(`${run.errors} errors, the first: ${run.firstError}`);
    rows.push([instances, fmt.rps(run.rps), fmt.ms(run.p50), fmt.ms(run.p99), run.errors]);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
process.stdout.write(
  `${table(['instances behind the proxy', 'payments created per second', 'p50 ms', 'p99 ms', 'errors'], rows)}\n`,
);
