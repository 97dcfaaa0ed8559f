// Shared pieces of the benchmark: child processes, a bounded load loop, percentiles, /proc readings, the table.
// Plain ESM JavaScript, run by `npm run bench` after the build; nothing here is part of the package.
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';

export const ROOT = resolve(import.meta.dirname, '..');
export const BIN = join(ROOT, 'bin', 'va-sandbox.js');
export const JSON_SERVER_BIN = join(ROOT, 'node_modules', 'json-server', 'lib', 'cli', 'bin.js');
/** How to run bench/seed.js (the core keeps no records in memory: Node's default heap is enough at 1,000,000 payments). */
export const SEED_ARGS = [join(ROOT, 'bench', 'seed.js')];

/** Progress goes to stderr, so stdout holds only the table. */
export const log = (line) => process.stderr.write(`[bench] ${line}\n`);

/** Runs a bench script's `main`: a failure is logged and exits 1; `cleanup` (stopping what it started) runs either way. */
export async function runBench(main, cleanup) {
  try {
    await main();
  } catch (error) {
    log(`failed: ${error.stack ?? error}`);
    process.exitCode = 1;
  } finally {
    await cleanup();
  }
}

/** A free loopback port (bound then released). */
export async function freePort() {
  const server = createServer();
  await new Promise((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address();
  await new Promise((done) => server.close(done));
  return port;
}

/** Starts a long-running child (a server: Node unless `options.command`); `stop()` SIGKILLs it and waits for the exit. */
export function startChild(args, options = {}) {
  const child = spawn(options.command ?? process.execPath, args, {
    cwd: options.cwd ?? ROOT,
    env: { ...process.env, NO_COLOR: '1', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output = (output + chunk).slice(-4000)));
  child.stderr.on('data', (chunk) => (output = (output + chunk).slice(-4000)));
  const exited = new Promise((done) => child.once('exit', (code, signal) => done({ code, signal })));
  return {
    child,
    pid: child.pid,
    exited,
    output: () => output,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

/** Polls `url` until it answers 2xx; resolves with the ms since `startedAt`. Fails if the child exits or after `timeoutMs`. */
export async function waitReady(url, child, startedAt, timeoutMs = 120_000) {
  const deadline = startedAt + timeoutMs;
  for (;;) {
    if (child.child.exitCode !== null || child.child.signalCode !== null) {
      throw new Error(`server exited before answering ${url}: ${child.output()}`);
    }
    try {
      const response = await fetch(url);
      await response.arrayBuffer();
      if (response.ok) return performance.now() - startedAt;
    } catch {
      // Not listening yet.
    }
    if (performance.now() > deadline)
      throw new Error(`no answer from ${url} within ${timeoutMs} ms: ${child.output()}`);
    await sleep(5);
  }
}

/** The version of an installed dependency, or '?'. */
export function dependencyVersion(name) {
  try {
    return JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')).version;
  } catch {
    return '?';
  }
}

/**
 * One of the bench's own servers (bench/bare-server.js, bench/floor-server.js, ...) on a free port, with its other
 * arguments; `track` is given the child at once, so a failed start is still stopped.
 */
export async function startScript(track, script, ...args) {
  const port = await freePort();
  const t0 = performance.now();
  const child = track(startChild([join(ROOT, 'bench', script), String(port), ...args]));
  const origin = `http://127.0.0.1:${port}`;
  return { child, origin, readyMs: await waitReady(`${origin}/`, child, t0) };
}

export const WIREMOCK_JAR = join(
  ROOT,
  'node_modules',
  'wiremock',
  'build',
  `wiremock-standalone-${dependencyVersion('wiremock')}.jar`,
);

/** Why WireMock cannot run here, or null. */
export function wiremockMissing() {
  const java = spawnSync('java', ['-version'], { stdio: 'ignore' });
  if (java.error) return 'no `java` on PATH (Debian: apt-get install default-jre-headless)';
  return existsSync(WIREMOCK_JAR) ? null : `no ${WIREMOCK_JAR} (npm ci installs it)`;
}

/** WireMock's standalone JAR answering the stub in bench/wiremock (copied into `work`), no request journal or logging. */
export async function startWireMock(track, work) {
  const port = await freePort();
  const root = join(work, 'wiremock');
  cpSync(join(ROOT, 'bench', 'wiremock'), root, { recursive: true });
  const args = [
    '-jar',
    WIREMOCK_JAR,
    '--port',
    String(port),
    '--bind-address',
    '127.0.0.1',
    '--root-dir',
    root,
    '--no-request-journal',
    '--disable-request-logging',
    '--disable-banner',
  ];
  const t0 = performance.now();
  const child = track(startChild(args, { command: 'java' }));
  const origin = `http://127.0.0.1:${port}`;
  return { child, origin, readyMs: await waitReady(`${origin}/__admin/health`, child, t0) };
}

/** CPU time (user + system) a live process has used so far, in ms, from /proc (Linux). */
export function cpuMsOf(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ').at(-1).split(' ');
  // utime and stime are the 14th and 15th fields of the line, the 12th and 13th after the command's name.
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
}

/** The kernel's clock ticks a second (`getconf CLK_TCK`), which /proc counts CPU time in. */
const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/** Runs a command to its end; resolves with its wall time (ms), exit code (or the signal that ended it) and output. */
export function runTimed(args, options = {}) {
  return new Promise((done) => {
    const started = performance.now();
    const child = spawn(process.execPath, args, {
      cwd: options.cwd ?? ROOT,
      env: { ...process.env, NO_COLOR: '1', ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.once('close', (code, signal) => done({ ms: performance.now() - started, code, signal, stdout, stderr }));
  });
}

/** Peak and current RSS of a live process, in bytes, from /proc (Linux). */
export function rssOf(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
    return { peak: kb('VmHWM'), now: kb('VmRSS') };
  } catch {
    return { peak: NaN, now: NaN };
  }
}

/**
 * Follows a live process's peak RSS (VmHWM) until it exits, read every 50 ms: `peak()` is the highest seen, so a
 * peak during a stop is caught up to its last 50 ms.
 */
export function watchRss(pid) {
  let peak = NaN;
  const read = () => {
    const now = rssOf(pid).peak;
    if (Number.isFinite(now) && !(now <= peak)) peak = now; // NaN once the process is gone
  };
  read();
  const timer = setInterval(read, 50);
  return {
    peak() {
      read();
      return peak;
    },
    stop: () => clearInterval(timer),
  };
}

/** What a database takes on disk: the file and its WAL (`-wal`), if there is one; the lock file and `-shm` aside. */
export function dataSize(file) {
  return [file, `${file}-wal`].reduce(
    (total, name) => total + (statSync(name, { throwIfNoEntry: false })?.size ?? 0),
    0,
  );
}

/** A database's file and WAL, each in MiB, for the rows that say how big it is. */
export function sizeCell(file) {
  const wal = statSync(`${file}-wal`, { throwIfNoEntry: false })?.size ?? 0;
  return `${fmtMb(dataSize(file))}: database ${fmtMb(dataSize(file) - wal)} + WAL ${fmtMb(wal)}`;
}

const fmtMb = (bytes) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

/** Nearest-rank percentile of sorted numbers. */
export function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))];
}

export const median = (values) =>
  percentile(
    [...values].sort((a, b) => a - b),
    0.5,
  );

/**
 * The load generator: `concurrency` connections (an undici Pool) each running requests back to back, until `count`
 * requests were sent or `seconds` passed, whichever comes first. `make(i)` gives request i: {method, path, headers, body}.
 * Returns throughput over the whole run and latency percentiles of the successful requests.
 */
export async function load(origin, { concurrency, count, seconds, make, onResponse }) {
  const pool = new Pool(origin, { connections: concurrency, pipelining: 1, keepAliveTimeout: 30_000 });
  const latencies = [];
  let next = 0;
  let errors = 0;
  let firstError = null;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  const worker = async () => {
    while (next < count && performance.now() < deadline) {
      const i = next++;
      const request = make(i);
      const t0 = performance.now();
      try {
        const response = await pool.request({ ...request, headersTimeout: 600_000, bodyTimeout: 600_000 });
        const text = await response.body.text();
        const ms = performance.now() - t0;
        if (response.statusCode >= 200 && response.statusCode < 300) {
          latencies.push(ms);
          onResponse?.(i, text);
        } else {
          errors++;
          firstError ??= `HTTP ${response.statusCode} ${text.slice(0, 200)}`;
        }
      } catch (error) {
        errors++;
        firstError ??= String(error?.message ?? error);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const elapsed = (performance.now() - started) / 1000;
  await pool.close();
  latencies.sort((a, b) => a - b);
  return {
    sent: next,
    ok: latencies.length,
    errors,
    firstError,
    seconds: elapsed,
    rps: latencies.length / elapsed,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
  };
}

// --- formatting ----------------------------------------------------------------------------------

export const fmt = {
  rps: (n) => (Number.isFinite(n) ? (n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2)) : 'n/a'),
  ms: (n) => (Number.isFinite(n) ? (n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2)) : 'n/a'),
  mb: (bytes) => (Number.isFinite(bytes) ? `${(bytes / 1024 / 1024).toFixed(1)} MiB` : 'n/a'),
  ratio: (n) => (Number.isFinite(n) ? `${n >= 10 ? n.toFixed(1) : n.toFixed(2)}×` : 'n/a'),
  int: (n) => n.toLocaleString('en-US'),
};

/** One Markdown table: every row has the same columns; cells are padded so it reads as plain text too. */
export function table(header, rows) {
  const all = [header, ...rows].map((row) => row.map((cell) => String(cell ?? '')));
  const widths = header.map((_, i) => Math.max(...all.map((row) => row[i].length)));
  const line = (row) => `| ${row.map((cell, i) => cell.padEnd(widths[i])).join(' | ')} |`;
  return [line(all[0]), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...all.slice(1).map(line)].join('\n');
}
