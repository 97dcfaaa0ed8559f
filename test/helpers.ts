import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, afterEach } from 'vitest';
import { startServer, type RunningServer, type ServerOptions } from '../src/sandbox/server.js';

export const ROOT = resolve(import.meta.dirname, '..');
export const BIN = join(ROOT, 'bin', 'va-sandbox.js');

/** Cleanups run after the current test file (or test, with `each`). Helpers register their own. */
const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
const testCleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of testCleanups.splice(0).reverse()) await cleanup();
});
const register = (cleanup: () => Promise<void> | void, scope: 'file' | 'test') =>
  (scope === 'file' ? cleanups : testCleanups).push(cleanup);

/** A temp folder removed after the file's tests. */
export function useTmp(): string {
  const dir = mkdtempSync(join(tmpdir(), 'va-sandbox-test-'));
  register(() => rmSync(dir, { recursive: true, force: true }), 'file');
  return dir;
}

/** The real server in this process on a free loopback port; memory state unless `data` is given. */
export async function useServer(options: ServerOptions = {}, scope: 'file' | 'test' = 'file'): Promise<RunningServer> {
  const server = await startServer({ port: 0, host: '127.0.0.1', memory: options.data === undefined, ...options });
  register(() => server.close(), scope);
  return server;
}

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

/** A tiny client of the sandbox API over real HTTP. */
export function api(baseUrl: string, key = 'sk_test') {
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<ApiResponse> => {
    const response = await fetch(baseUrl + path, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : null };
  };
  return {
    key,
    call,
    get: (path: string) => call('GET', path),
    post: (path: string, body?: unknown, headers?: Record<string, string>) => call('POST', path, body, headers),
    patch: (path: string, body?: unknown) => call('PATCH', path, body),
    /** `data` of a 2xx answer; throws with the envelope otherwise. */
    async data(method: string, path: string, body?: unknown) {
      const response = await call(method, path, body);
      if (response.status >= 300) throw new Error(`${method} ${path} -> ${response.status} ${JSON.stringify(response.body)}`);
      return response.body.data;
    },
  };
}
export type Api = ReturnType<typeof api>;

export interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: any;
  raw: string;
  at: number;
}

/**
 * A real callback receiver on loopback. `respond` decides each answer (default 200);
 * `received` lists every request; `waitFor(n)` resolves once n requests (matching `filter`) arrived.
 */
export async function useReceiver(
  respond: (request: Received, index: number) => { status: number; body?: string; headers?: Record<string, string> } | 'hang' | 'reset' = () => ({ status: 200 }),
) {
  const received: Received[] = [];
  const waiters: { count: number; filter: (r: Received) => boolean; resolve: () => void }[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: unknown = null;
      try {
        body = JSON.parse(raw);
      } catch {
        body = raw;
      }
      const request: Received = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body, raw, at: Date.now() };
      received.push(request);
      for (const waiter of [...waiters]) {
        if (received.filter(waiter.filter).length >= waiter.count) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve();
        }
      }
      const answer = respond(request, received.length - 1);
      if (answer === 'hang') return;
      if (answer === 'reset') return req.socket.destroy();
      res.writeHead(answer.status, { 'content-type': 'text/plain', ...answer.headers });
      res.end(answer.body ?? 'ok');
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  register(
    () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
    'file',
  );
  return {
    url,
    received,
    waitFor(count: number, filter: (r: Received) => boolean = () => true, timeoutMs = 15_000): Promise<Received[]> {
      if (received.filter(filter).length >= count) return Promise.resolve(received.filter(filter));
      return new Promise((done, fail) => {
        const timer = setTimeout(() => fail(new Error(`receiver got ${received.filter(filter).length} of ${count} requests`)), timeoutMs);
        waiters.push({ count, filter, resolve: () => (clearTimeout(timer), done(received.filter(filter))) });
      });
    },
  };
}

/** Waits until `check` returns a truthy value (polling), or fails after `timeoutMs`. */
export async function eventually<T>(check: () => Promise<T> | T, timeoutMs = 10_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** A free loopback port (bound then released). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((done) => server.close(() => done()));
  return port;
}

export interface Spawned {
  child: ChildProcess;
  url: string;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

/** The built CLI's server as a child process (`va-sandbox start`), ready once /health answers. */
export async function spawnServer(args: string[], env: Record<string, string> = {}): Promise<Spawned> {
  const port = await freePort();
  const child = spawn(process.execPath, [BIN, 'start', '--port', String(port), ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (chunk) => (out += chunk));
  child.stderr!.on('data', (chunk) => (err += chunk));
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  register(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    return exited.then(() => undefined);
  }, 'file');
  const url = `http://127.0.0.1:${port}`;
  await eventually(
    async () => {
      if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}: ${err}`);
      return (await fetch(`${url}/health`)).ok;
    },
    10_000,
    'the server to answer /health',
  );
  return { child, url, stdout: () => out, stderr: () => err, exited };
}

/** Runs the built CLI to completion. */
export function runCli(args: string[], env: Record<string, string> = {}, input?: string) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((done) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, NO_COLOR: '1', ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.stdin.end(input ?? '');
    child.once('close', (code) => done({ code, stdout, stderr }));
  });
}
