// `npm run bench` (after bench/run.js): the web inspector's payments page with BENCH_RECORDS (default 100,000) VA
// payments in the account, in the system's Chromium: from navigation to the first page of rows on screen, the way a
// person opening /ui/payments waits for it. Progress on stderr; the table on stdout. Skipped (one line) without Chromium.
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { BIN, fmt, freePort, log, median, runTimed, SEED_ARGS, startChild, table, waitReady } from './lib.js';

const RECORDS = Number(process.env.BENCH_RECORDS ?? 100_000);
const CHROMIUM = '/usr/bin/chromium';
const KEY = 'sk_bench';
const RUNS = 7;
const TARGET_MS = 1000;

if (!existsSync(CHROMIUM)) {
  log(`web bench skipped: no browser at ${CHROMIUM} (install it with: apt-get install -y chromium)`);
  process.exit(0);
}

const work = mkdtempSync(join(tmpdir(), 'va-bench-web-'));
let server = null;
let browser = null;
try {
  const data = join(work, 'state.db');
  mkdirSync(work, { recursive: true });
  log(`seeding ${fmt.int(RECORDS)} payments`);
  const seed = await runTimed([...SEED_ARGS, '--data', data, '--key', KEY, '--payments', String(RECORDS)]);
  if (seed.code !== 0) throw new Error(`seeding failed: ${seed.stderr.slice(-500)}`);

  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  server = startChild([BIN, 'start', '--port', String(port), '--data', data]);
  await waitReady(`${origin}/health`, server, performance.now());
  // The server reads its records ahead after a quick start; the page is measured on a server that has settled.
  const api = await fetch(`${origin}/api/v1/va-payments?limit=1`, { headers: { authorization: `Bearer ${KEY}` } }).then(
    (r) => r.json(),
  );
  const total = api.pagination.total;
  log(`server ready with ${fmt.int(total)} payments`);

  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  await context.addInitScript((key) => localStorage.setItem('va-sandbox.apiKey', key), KEY);
  const shown = [];
  const apiMs = [];
  for (let run = 0; run < RUNS; run++) {
    const page = await context.newPage();
    const t0 = performance.now();
    await page.goto(`${origin}/ui/payments`);
    await page.locator('table.payments tbody tr').nth(19).waitFor({ timeout: 30_000 });
    shown.push(performance.now() - t0);
    await page.close();
    const a0 = performance.now();
    await fetch(`${origin}/api/v1/va-payments`, { headers: { authorization: `Bearer ${KEY}` } }).then((r) =>
      r.arrayBuffer(),
    );
    apiMs.push(performance.now() - a0);
  }
  const first = shown[0];
  const warm = median(shown.slice(1));
  const row = (figure, ms, target) => [
    figure,
    `${fmt.ms(ms)} ms`,
    target ? `< ${TARGET_MS} ms` : '',
    target ? (ms < TARGET_MS ? 'PASS' : 'FAIL') : '',
  ];
  process.stdout.write(
    `\n${table(
      [`web inspector, ${fmt.int(total)} payments`, 'ours', 'target', 'result'],
      [
        row('payments page, first page shown (first open, new tab)', first, true),
        row(`payments page, first page shown (median of ${RUNS - 1} more)`, warm, true),
        row('GET /api/v1/va-payments page 1 alone (median)', median(apiMs), false),
      ],
    )}\n`,
  );
} finally {
  await browser?.close();
  await server?.stop();
  rmSync(work, { recursive: true, force: true });
}
