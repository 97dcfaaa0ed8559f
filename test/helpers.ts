import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, afterEach } from 'vitest';
import { type RunningServer, type ServerOptions, startServer } from '../src/sandbox/http/server.js';
import { readAccount } from '../src/sandbox/store/database.js';
import { mismatch, templateOf } from './openapi-check.js';

export const ROOT = resolve(import.meta.dirname, '..');

/** What the API requires on every VA payment create (paymentHubId, currency, lockMode): spread first, then the test's fields. */
export const PAYMENT = { paymentHubId: 1, currency: 'ARS', lockMode: 'time' } as const;
/** What the API requires on every client create. */
export const CLIENT = { paymentHubId: 1 } as const;
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
/** A client of the API with one key; `beforeWrite` runs before every request that is not a GET. */
export function api(baseUrl: string, key = 'sk_test', beforeWrite: () => void = () => {}) {
  const call = async (
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<ApiResponse> => {
    if (method !== 'GET') beforeWrite();
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
    const answer = { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : null };
    // Every answer the suite gets is held to the OpenAPI document (paths it does not have aside: those are 404s).
    const problem =
      answer.body !== null && templateOf(path) !== undefined
        ? mismatch(method, path, answer.status, answer.body)
        : null;
    if (problem) throw new Error(`the answer does not match the OpenAPI document: ${problem}`);
    return answer;
  };
  /** The body of a 2xx answer; throws with the envelope otherwise. */
  const ok = async (method: string, path: string, body?: unknown) => {
    const response = await call(method, path, body);
    if (response.status >= 300)
      throw new Error(`${method} ${path} -> ${response.status} ${JSON.stringify(response.body)}`);
    return response.body;
  };
  return {
    key,
    call,
    get: (path: string) => call('GET', path),
    post: (path: string, body?: unknown, headers?: Record<string, string>) => call('POST', path, body, headers),
    patch: (path: string, body?: unknown) => call('PATCH', path, body),
    /** `data` of a 2xx answer; throws with the envelope otherwise. */
    async data(method: string, path: string, body?: unknown) {
      return (await ok(method, path, body)).data;
    },
    /** A list's page as the API answers it: `data` (the items) and `pagination` beside it. */
    async list(
      path: string,
    ): Promise<{ data: any; pagination: { page: number; limit: number; total: number; totalPages: number } }> {
      const { data, pagination } = await ok('GET', path);
      return { data, pagination };
    },
  };
}
export type Api = ReturnType<typeof api>;

/**
 * An incident file with open deliveries to `callbackUrl`, which never heard of them: the source account (`key`)
 * forwards every attempt to a port that refuses, and is exported once `payments` VA payments' `created` callbacks
 * are retrying. Its import must hold them (contract part 5).
 */
export async function incidentWithOpenDeliveries(baseUrl: string, key: string, callbackUrl: string, payments = 1) {
  const source = api(baseUrl, key);
  await source.data('PUT', '/sandbox/v1/forwarding', { url: 'http://127.0.0.1:1/refused' });
  const created = [];
  for (let i = 0; i < payments; i++)
    created.push(await source.data('POST', '/api/v1/va-payments', { ...PAYMENT, callbackUrl }));
  await eventually(
    async () => (await source.list('/sandbox/v1/deliveries?status=retrying')).pagination.total === payments,
    10_000,
    'retrying deliveries',
  );
  return { doc: await source.data('GET', '/sandbox/v1/export'), payments: created };
}

/**
 * A state database at `data` holding one VA payment (`payment` spread over the defaults) whose `created` callback goes
 * to a closed port, written by a server closed once that delivery is retrying: the payment and its delivery.
 */
export async function retryingDelivery(data: string, key: string, payment: object = {}, options: ServerOptions = {}) {
  const server = await startServer({ port: 0, host: '127.0.0.1', data, ...options });
  const client = api(server.url, key);
  const callbackUrl = `http://127.0.0.1:${await freePort()}/hook`; // nothing listens there
  const created = await client.data('POST', '/api/v1/va-payments', { ...PAYMENT, callbackUrl, ...payment });
  const [delivery] = await eventually(
    async () => {
      const { data: items } = await client.list('/sandbox/v1/deliveries?status=retrying');
      return items.length === 1 && items;
    },
    10_000,
    'the first attempt',
  );
  await server.close();
  return { payment: created, delivery };
}

export interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: any;
  raw: string;
  at: number;
}

/** `hold`: send the status and body but never end the response (a body that never finishes). */
export type ReceiverAnswer =
  | { status: number; body?: string; headers?: Record<string, string>; hold?: boolean }
  | 'hang'
  | 'reset';

/**
 * A real callback receiver on loopback. `respond` decides each answer (default 200), possibly later (a promise);
 * `received` lists every request; `waitFor(n)` resolves once n requests (matching `filter`) arrived.
 */
export async function useReceiver(
  respond: (request: Received, index: number) => ReceiverAnswer | Promise<ReceiverAnswer> = () => ({ status: 200 }),
) {
  const received: Received[] = [];
  const waiters: { count: number; filter: (r: Received) => boolean; resolve: () => void }[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: unknown = null;
      try {
        body = JSON.parse(raw);
      } catch {
        body = raw;
      }
      const request: Received = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body,
        raw,
        at: Date.now(),
      };
      received.push(request);
      for (const waiter of [...waiters]) {
        if (received.filter(waiter.filter).length >= waiter.count) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve();
        }
      }
      const answer = await respond(request, received.length - 1);
      if (answer === 'hang') return;
      if (answer === 'reset') return req.socket.destroy();
      res.writeHead(answer.status, { 'content-type': 'text/plain', ...answer.headers });
      if (answer.hold) res.write(answer.body ?? 'ok');
      else res.end(answer.body ?? 'ok');
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
        const timer = setTimeout(
          () => fail(new Error(`receiver got ${received.filter(filter).length} of ${count} requests`)),
          timeoutMs,
        );
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

export interface CliProcess {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** Resolves with the output once it matches `pattern` (polling), for commands that keep running. */
  waitFor: (pattern: RegExp, stream?: 'stdout' | 'stderr', timeoutMs?: number) => Promise<string>;
  exited: Promise<number | null>;
}

/** The environment of a CLI run: without colour (FORCE_COLOR, which wins over NO_COLOR, only where `env` sets it). */
function plainEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const { FORCE_COLOR: _forced, ...rest } = process.env;
  return { ...rest, NO_COLOR: '1', ...env };
}

/** The built CLI as a long-running child process (server, receiver, `--follow`); killed after the file's tests. */
export function spawnCli(args: string[], env: Record<string, string> = {}, options: { cwd?: string } = {}): CliProcess {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: plainEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
    cwd: options.cwd,
  });
  const output = { stdout: '', stderr: '' };
  child.stdout!.on('data', (chunk) => (output.stdout += chunk));
  child.stderr!.on('data', (chunk) => (output.stderr += chunk));
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  register(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    return exited.then(() => undefined);
  }, 'file');
  return {
    child,
    stdout: () => output.stdout,
    stderr: () => output.stderr,
    exited,
    waitFor: (pattern, stream = 'stdout', timeoutMs = 10_000) =>
      eventually(
        () => {
          if (child.exitCode !== null)
            throw new Error(`va-sandbox ${args.join(' ')} exited with ${child.exitCode}: ${output.stderr}`);
          return pattern.test(output[stream]) ? output[stream] : '';
        },
        timeoutMs,
        `${pattern} on the ${stream} of va-sandbox ${args.join(' ')}`,
      ),
  };
}

export interface Spawned extends CliProcess {
  url: string;
}

/** The built CLI's server as a child process (`va-sandbox start`), ready once /health answers. */
export async function spawnServer(args: string[], env: Record<string, string> = {}): Promise<Spawned> {
  const port = await freePort();
  const cli = spawnCli(['start', '--port', String(port), ...args], env);
  const url = `http://127.0.0.1:${port}`;
  await eventually(
    async () => {
      if (cli.child.exitCode !== null) throw new Error(`server exited with ${cli.child.exitCode}: ${cli.stderr()}`);
      return (await fetch(`${url}/health`)).ok;
    },
    10_000,
    'the server to answer /health',
  );
  return { ...cli, url };
}

/** Runs the built CLI to completion. */
export function runCli(args: string[], env: Record<string, string> = {}, input?: string) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((done) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: plainEnv(env), stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.stdin.end(input ?? '');
    child.once('close', (code) => done({ code, stdout, stderr }));
  });
}

/**
 * A sandbox in this process for CLI tests, and `account()`: a fresh account on it (its own API key) with the built
 * CLI pointed at it the way a user would (VA_SANDBOX_URL, VA_SANDBOX_API_KEY), and an API client for setup.
 */
export async function useCliSandbox(prefix: string) {
  const server = await useServer();
  let n = 0;
  const account = () => {
    const key = `${prefix}_${++n}`;
    const env = { VA_SANDBOX_URL: server.url, VA_SANDBOX_API_KEY: key };
    const cli = (args: string[], more: Record<string, string> = {}) => runCli(args, { ...env, ...more });
    return {
      key,
      env,
      cli,
      api: api(server.url, key),
      /** Runs the command with --json, which must succeed, and parses what it printed. */
      async json(args: string[]) {
        const run = await cli([...args, '--json']);
        if (run.code !== 0) throw new Error(`va-sandbox ${args.join(' ')} exited with ${run.code}: ${run.stderr}`);
        return JSON.parse(run.stdout);
      },
    };
  };
  return { server, account };
}

/**
 * The CLI's human key/value block (up to the first blank line) as an object; throws unless every value
 * starts in the same column, which is what makes it readable.
 */
export function keyValues(text: string): Record<string, string> {
  const lines = text.split('\n\n')[0]!.split('\n').filter(Boolean);
  const columns = new Set(lines.map((line) => /^\S+ +/.exec(line)?.[0].length));
  if (columns.size !== 1) throw new Error(`not an aligned key/value block:\n${text}`);
  return Object.fromEntries(lines.map((line) => [line.split(' ')[0], line.replace(/^\S+ +/, '')]));
}

export interface StreamMessage {
  event: string;
  data: any;
}

/**
 * A client of `GET /sandbox/v1/stream` over real HTTP: `messages` are the parsed server-sent messages,
 * `raw` the text as received, `ended` resolves when the server ends the stream. Closed after the file's tests.
 */
export async function useStream(baseUrl: string, key = 'sk_test') {
  const controller = new AbortController();
  const response = await fetch(`${baseUrl}/sandbox/v1/stream`, {
    headers: { authorization: `Bearer ${key}` },
    signal: controller.signal,
  });
  const messages: StreamMessage[] = [];
  let raw = '';
  const ended = (async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of response.body!) {
        const text = decoder.decode(chunk, { stream: true });
        raw += text;
        buffer += text;
        for (let cut = buffer.indexOf('\n\n'); cut >= 0; cut = buffer.indexOf('\n\n')) {
          const lines = buffer.slice(0, cut).split('\n');
          buffer = buffer.slice(cut + 2);
          const event = lines.find((line) => line.startsWith('event: '))?.slice(7);
          const data = lines.filter((line) => line.startsWith('data: ')).map((line) => line.slice(6));
          if (event !== undefined) messages.push({ event, data: JSON.parse(data.join('\n')) });
        }
      }
    } catch {
      // Aborted by the test: the stream is over either way.
    }
  })();
  register(() => {
    controller.abort();
    return ended;
  }, 'file');
  return {
    response,
    messages,
    raw: () => raw,
    ended,
    /** Disconnects, as a client going away does. */
    close: () => (controller.abort(), ended),
    waitFor: async (
      predicate: (message: StreamMessage) => boolean,
      what = 'a stream message',
    ): Promise<StreamMessage> => (await eventually(() => messages.find(predicate), 10_000, what))!,
  };
}

/**
 * An account as the state database at `data` holds it, each table's records by id (read as support staff would, in
 * a connection of its own, with the server running); undefined when it holds none.
 */
export function stored(data: string, key: string): any {
  const db = new DatabaseSync(data, { readOnly: true });
  try {
    return readAccount((text) => db.prepare(text), key);
  } finally {
    db.close();
  }
}
