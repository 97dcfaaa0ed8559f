import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { getRequestListener, RequestError } from '@hono/node-server';
import type { AccountCache, IdSource, WallClock } from '../../core/index.js';
import { iso, SandboxError } from '../../core/index.js';
import { DEFAULT_BUFFER_BUDGET, DEFAULT_DATA, DEFAULT_HOST, DEFAULT_PORT } from '../runtime/defaults.js';
import { type ProgressView, progressBoard } from '../runtime/progress.js';
import { createRuntime, type Runtime } from '../runtime/runtime.js';
import { fileStore, memoryStore, startRefusal } from '../store/database.js';
import { filesMadeFor } from '../store/made-files.js';
import { type AppOptions, createApp, errorEnvelope } from './app.js';
import { CONNECTION_LIMITS, type ConnectionLimits, connectionGate } from './backpressure.js';
import { BUDGET_RETRY_AFTER, BufferBudget, hasBody } from './budget.js';
import { type Env, rawHeader } from './routes/kit.js';
import { bearerKey, callbackEntry, type LogEntry, requestKey, withoutKey } from './server-log.js';

export interface ServerOptions extends AppOptions {
  port?: number;
  host?: string;
  /** The state database; ignored with `memory`. */
  data?: string;
  memory?: boolean;
  /** `synchronous=FULL`: each group of writes is synced before it is answered, and survives a crash of the machine. */
  fsync?: boolean;
  /** Sandbox seconds before each retry. */
  retryDelays?: number[];
  callbackTimeoutMs?: number;
  /** Client taxIds must pass the CUIT check digit. */
  strictTaxId?: boolean;
  /** `--hubs`: the payment hub ids accepted (others are 404); any positive id when absent. */
  hubIds?: number[];
  /** `--keep`: days of sandbox clock after which ended payments, their events, deliveries and transfers are removed. */
  keepDays?: number;
  /** `--journal`: the newest `/api/v1` requests kept per account (10,000 when absent; 0 keeps none). */
  journal?: number;
  clock?: WallClock;
  ids?: IdSource;
  log?: (line: string) => void;
  /** The server log (contract part 5): told of every request and every callback attempt. */
  onLog?: (entry: LogEntry) => void;
  version?: string;
  /**
   * Let @hono/node-server put its lighter Request and Response in place of the global ones, so an answer is
   * written without building a fetch Response and its stream. It changes globals, so only a process the server
   * owns (`va-sandbox start`) asks for it, never a test suite that embeds the sandbox.
   */
  ownsProcess?: boolean;
  /** How long a client may take to send its request; `SLOW_CLIENT_TIMEOUTS` for what is not given. */
  timeouts?: Partial<ServerTimeouts>;
  /** Told how the server's own long work (a migration at start, a retention sweep) stands, then null once it is over. */
  onServerWork?: (view: ProgressView | null) => void;
  /** How many accounts are kept in memory, and how long unused; `ACCOUNT_CACHE` when absent. */
  accountCache?: AccountCache;
  /** What one connection may make the server hold; `CONNECTION_LIMITS` for what is not given. */
  connections?: Partial<ConnectionLimits>;
  /** `--buffer-budget`: bytes the whole process may hold for clients (`BufferBudget`); `DEFAULT_BUFFER_BUDGET` when absent. */
  bufferBudget?: number;
}

/**
 * How long the server waits on a client, in ms: for a request's headers from its first byte (or from the
 * connection's start), for the whole request (headers and body, not the answer: a live stream is not cut), and on
 * an idle keep-alive connection for its next request. Node looks for expired requests every `checkEveryMs`. A
 * connection that sends part of a request and then nothing, or trickles it, is answered 408 and closed, so a few
 * hundred of them hold no sockets for long; Node's defaults are 60 s, 300 s and a look every 30 s.
 */
export interface ServerTimeouts {
  headersMs: number;
  requestMs: number;
  keepAliveMs: number;
  checkEveryMs: number;
}

export const SLOW_CLIENT_TIMEOUTS: ServerTimeouts = {
  headersMs: 10_000,
  requestMs: 30_000,
  keepAliveMs: 5_000,
  checkEveryMs: 1_000,
};

/** Starts the sandbox HTTP server; resolves once it listens. `close()` stops it and flushes the state. */
export async function startServer(options: ServerOptions = {}) {
  const data = options.data ?? DEFAULT_DATA;
  const made = options.memory ? null : filesMadeFor(data);
  const progress = progressBoard(options.onServerWork);
  const store = options.memory
    ? memoryStore(options.journal)
    : fileStore(data, { fsync: options.fsync, log: options.log, progress, journal: options.journal });
  const runtime = await createRuntime({
    store,
    progress,
    clock: options.clock,
    ids: options.ids,
    retryDelays: options.retryDelays,
    callbackTimeoutMs: options.callbackTimeoutMs,
    strictTaxId: options.strictTaxId,
    hubIds: options.hubIds,
    keepDays: options.keepDays,
    log: options.log,
    version: options.version,
    accountCache: options.accountCache,
  }).catch((error: unknown) => {
    // What fell due at start read a page the start's check did not find damaged (a large file's is done beside it).
    throw store.path === null ? error : startRefusal(store.path, error);
  });
  const host = options.host ?? DEFAULT_HOST;
  const budget = new BufferBudget(options.bufferBudget ?? DEFAULT_BUFFER_BUDGET);
  // The address it binds is a name its callers use too; loopback ones are always allowed.
  const app = createApp(runtime, { ...options, budget, allowedHosts: [host, ...(options.allowedHosts ?? [])] });
  const now = () => iso(runtime.sandbox.clock.now());
  const fetch = options.onLog ? logged(app, runtime, options.onLog, now) : app.fetch;
  const server = httpServer(
    fetch,
    now,
    options.ownsProcess ?? false,
    runtime.log,
    { ...SLOW_CLIENT_TIMEOUTS, ...options.timeouts },
    {
      ...CONNECTION_LIMITS,
      ...options.connections,
    },
    budget,
  );
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? DEFAULT_PORT, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    await runtime.close();
    made?.remove();
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE')
      throw new Error(`port ${options.port ?? DEFAULT_PORT} on ${host} is already in use; pick another with --port`);
    throw error;
  }
  const { port } = server.address() as AddressInfo;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  return {
    url,
    port,
    runtime,
    app,
    dataPath: store.path,
    /** Rejects, with the line a start refuses it with, if a large database's check beside the server finds it damaged. */
    checked: store.checked,
    async close(): Promise<void> {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        if ('closeAllConnections' in server) server.closeAllConnections();
      });
      await runtime.close();
    },
  };
}

export type RunningServer = Awaited<ReturnType<typeof startServer>>;

/** `onLog`: the app's fetch, telling each request and each callback attempt (`--log`). */
function logged(
  app: ReturnType<typeof createApp>,
  runtime: Runtime,
  onLog: NonNullable<ServerOptions['onLog']>,
  now: () => string,
): ReturnType<typeof createApp>['fetch'] {
  runtime.sandbox.on(
    (live) => {
      const entry = callbackEntry(live, now());
      if (entry) onLog(entry);
    },
    ['delivery'],
  );
  return async (request, env, ...rest) => {
    const started = performance.now();
    const response = await app.fetch(request, env, ...rest);
    // The Node server passes the incoming message: its raw headers are read, not a Headers object built for one.
    const authorization = rawHeader((env as Env['Bindings'])!.incoming!.rawHeaders, 'authorization');
    const path = withoutKey(pathOfUrl(request.url), bearerKey(authorization));
    onLog({
      type: 'request',
      time: now(),
      method: request.method,
      path,
      status: response.status,
      ms: Math.round(performance.now() - started),
      key: requestKey(authorization),
    });
    return response;
  };
}

/**
 * The Node server around the app. A request Node's parser refuses (bad request line, headers or framing), or
 * that cannot become a fetch Request (no Host, a target that is not a path), never reaches the app: it is
 * answered here, in the same error envelope, instead of Node's bare `400 Bad Request`.
 */
function httpServer(
  fetch: (request: Request) => Response | Promise<Response>,
  now: () => string,
  overrideGlobalObjects: boolean,
  log: (line: string) => void,
  timeouts: ServerTimeouts,
  limits: ConnectionLimits,
  budget: BufferBudget,
) {
  let current: IncomingMessage | null = null;
  const listener = getRequestListener(fetch, {
    overrideGlobalObjects,
    // Called while `listener` still runs synchronously for `current`: with a RequestError when it cannot build the
    // Request (the client's fault), or with what the app threw past its own error handler (the sandbox's).
    errorHandler: (error) => {
      const path = pathOf(current?.url);
      const request = error instanceof RequestError;
      if (!request)
        log(`internal error on ${current?.method ?? '?'} ${path}: ${(error as Error).stack ?? String(error)}`);
      const fault = request
        ? malformed(error.message)
        : new SandboxError('INTERNAL_ERROR', 'Internal error: the sandbox logged it');
      const body = errorEnvelope(fault, path, now());
      return new Response(JSON.stringify(body), {
        status: fault.status,
        headers: { 'content-type': 'application/json', connection: 'close' },
      });
    },
  });
  // Host is checked by the listener above (in the envelope), not by Node (bare 400).
  const server = createServer(
    {
      requireHostHeader: false,
      headersTimeout: timeouts.headersMs,
      requestTimeout: timeouts.requestMs,
      connectionsCheckingInterval: timeouts.checkEveryMs,
    },
    connectionGate((req, res) => {
      const refused = budget.admit(req, res);
      if (refused) return Promise.resolve(refuse(req, res, refused, now()));
      current = req;
      const answered = listener(req, res);
      current = null;
      return answered;
    }, limits),
  );
  server.on('connection', (socket: Socket) => budget.watch(socket));
  server.keepAliveTimeout = timeouts.keepAliveMs;
  // A client that sends its request and then closes its side (half-close) still gets the answer: Node's default
  // ends the connection at once, dropping a response that waits for its commit. (Long-standing, if
  // untyped, switch of Node's HTTP server.)
  (server as typeof server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
  server.on('clientError', (error: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Socket) => {
    if (!socket.writable || error.code === 'ECONNRESET') return socket.destroy();
    // A request not received in time (ServerTimeouts): Node's own bare 408 (the contract has no code for it) when
    // nothing was written on the connection yet, then the socket is closed whether or not the client closes its side.
    if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      if (socket.bytesWritten > 0) return socket.destroy();
      return void socket.end('HTTP/1.1 408 Request Timeout\r\nContent-Length: 0\r\nConnection: close\r\n\r\n', () =>
        socket.destroy(),
      );
    }
    const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
    const fault = tooLarge
      ? new SandboxError('PAYLOAD_TOO_LARGE', 'Request headers are too large')
      : malformed(error.message);
    const target = /^\S+ (\S+)/.exec(error.rawPacket?.toString('latin1') ?? '')?.[1];
    const body = JSON.stringify(errorEnvelope(fault, pathOf(target), now()));
    socket.end(
      `HTTP/1.1 ${fault.status} ${tooLarge ? 'Payload Too Large' : 'Bad Request'}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
  return server;
}

/**
 * A request the buffer budget refuses, answered before the app reads anything of it: its body, unread, closes the
 * connection after the answer.
 */
function refuse(req: IncomingMessage, res: ServerResponse, error: SandboxError, timestamp: string): void {
  const body = JSON.stringify(errorEnvelope(error, pathOf(req.url), timestamp));
  const headers = { 'content-type': 'application/json', 'retry-after': BUDGET_RETRY_AFTER };
  res.writeHead(error.status, hasBody(req) ? { ...headers, connection: 'close' } : headers);
  res.end(body);
}

const malformed = (reason: string) =>
  new SandboxError('VALIDATION_ERROR', `Malformed HTTP request: ${reason}`, [`(request): ${reason}`]);

/** The path of a Request's URL, as `new URL(url).pathname` (the URL is already normalised: what follows the host, up to `?` or `#`). */
const pathOfUrl = (url: string): string => /^[a-z]+:\/\/[^/]*([^?#]*)/i.exec(url)?.[1] || '/';

/** The path of a raw request target, or "/" when it has none. */
const pathOf = (target: string | undefined): string => (target?.startsWith('/') ? target.split('?')[0]! : '/');
