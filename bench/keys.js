// What an API key costs the server (issue 38, finding 5): the built server on a new database; KEYS_READ reads of
// one key's VA payments (default 100,000: what the traffic alone grows the process by, its heap finding its size),
// then as many distinct keys that each read once, then KEYS_WRITE more keys that each create one VA payment (default
// 25,000). The server's RSS is read before, right after each run and once idle (IDLE_S seconds later).
// `npm run build && node bench/keys.js`; prints one table on stdout. Bounded: each run is a fixed count of requests
// on loopback.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { BIN, freePort, load, log, rssOf, startChild, table, waitReady } from './lib.js';

const KEYS_READ = Number(process.env.KEYS_READ ?? 100_000);
const KEYS_WRITE = Number(process.env.KEYS_WRITE ?? 25_000);
const IDLE_S = Number(process.env.IDLE_S ?? 15);
const CONCURRENCY = 32;

const mib = (bytes) => Math.round(bytes / 1024 / 1024);

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'va-sandbox-keys-'));
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const server = startChild([
    BIN,
    'start',
    '--port',
    String(port),
    '--data',
    join(dir, 'state.db'),
    '--quiet',
    '--rate-limit',
    '0',
  ]);
  try {
    await waitReady(`${origin}/health`, server, performance.now());
    const rss = () => mib(rssOf(server.pid).now);
    const rows = [];
    const run = async (what, keys, count, make) => {
      const before = rss();
      log(`${what}: ${count} keys`);
      const result = await load(origin, { concurrency: CONCURRENCY, count, seconds: 3600, make });
      if (result.errors > 0) throw new Error(`${what}: ${result.errors} errors, first: ${result.firstError}`);
      const after = rss();
      await sleep(IDLE_S * 1000);
      rows.push([
        what,
        keys.toLocaleString('en-US'),
        count.toLocaleString('en-US'),
        `${before} MiB`,
        `${after} MiB`,
        `${rss()} MiB`,
        `${Math.round(result.rps)}/s`,
      ]);
    };
    await run('one key, reads', 1, KEYS_READ, () => ({
      method: 'GET',
      path: '/api/v1/va-payments',
      headers: { authorization: 'Bearer sk_one' },
    }));
    await run('distinct keys, one read each', KEYS_READ, KEYS_READ, (i) => ({
      method: 'GET',
      path: '/api/v1/va-payments',
      headers: { authorization: `Bearer sk_read_${i}` },
    }));
    await run('distinct keys, one create each', KEYS_WRITE, KEYS_WRITE, (i) => ({
      method: 'POST',
      path: '/api/v1/va-payments',
      headers: { authorization: `Bearer sk_write_${i}`, 'content-type': 'application/json' },
      body: JSON.stringify({ paymentHubId: 1, currency: 'ARS', lockMode: 'time', amount: 100 }),
    }));
    console.log(
      table(['run', 'keys', 'requests', 'RSS before', 'RSS right after', `RSS ${IDLE_S} s idle`, 'pace'], rows),
    );
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
