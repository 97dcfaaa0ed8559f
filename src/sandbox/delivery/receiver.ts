import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a receiver got, as it arrived, and the status it was answered with. */
export interface ReceivedCallback {
  method: string;
  /** Path and query, e.g. `/hooks/va`. */
  path: string;
  /** Lower-case names. */
  headers: Record<string, string>;
  /** Names as sent, in order, for showing a request as it arrived. */
  rawHeaders: [string, string][];
  /** The JSON body, or the raw text when it is not JSON. */
  // biome-ignore lint/suspicious/noExplicitAny: a test reads each event type's body its own way
  body: any;
  raw: string;
  status: number;
  receivedAt: string;
}

export interface ReceiverOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0: a free port. */
  port?: number;
  /** The answer to a request that is not told to fail (default 200). */
  status?: number;
  /** Told of each request as it is answered. */
  onReceive?: (request: ReceivedCallback) => void;
}

interface Failure {
  times: number;
  status: number;
  /** Only requests to this path or below it fail. */
  path: string;
}

/** What a receiver keeps between requests: what it got, the failures still armed, and who waits for more. */
interface ReceiverState {
  received: ReceivedCallback[];
  failures: Failure[];
  waiters: Set<() => void>;
}

/**
 * A callback receiver on a real port: records every request and answers 200, or a failing status for the next
 * requests it was told to fail (`failNext`), to watch the sandbox retry.
 */
export async function startReceiver(options: ReceiverOptions = {}) {
  const state: ReceiverState = { received: [], failures: [], waiters: new Set<() => void>() };
  const { received, failures } = state;

  const server = createServer((req, res) => {
    readAll(req).then((raw) => answer(req, res, raw, state, options));
  });
  const host = options.host ?? '127.0.0.1';
  await listen(server, options.port ?? 0, host);
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://${host === '0.0.0.0' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    /** Every request so far, in order of arrival. */
    received,
    /** The next `times` requests (to `path` or below it) are answered with `status` (default 500). */
    failNext(times: number, { status = 500, path = '/' }: { status?: number; path?: string } = {}): void {
      failures.push({ times, status, path });
    },
    /** Resolves with the matching requests once there are `count` of them. */
    waitFor(
      count: number,
      filter: (request: ReceivedCallback) => boolean = () => true,
      timeoutMs = 10_000,
    ): Promise<ReceivedCallback[]> {
      return waitForRequests(state, count, filter, timeoutMs);
    },
    /** Forgets what was received and any failures still armed. */
    clear(): void {
      received.length = 0;
      failures.length = 0;
    },
    close(): Promise<void> {
      return new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
    },
  };
}

/** Listens on `port` and `host`, or rejects with the error the server met there (a port in use, say). */
function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/**
 * Records one request and answers it: with the status of the first armed failure its path is under, else the
 * receiver's own; then tells `onReceive` and wakes whoever waits for requests.
 */
function answer(
  req: IncomingMessage,
  res: ServerResponse,
  raw: string,
  state: ReceiverState,
  options: ReceiverOptions,
): void {
  const path = req.url ?? '/';
  const failure = state.failures.find((f) => f.times > 0 && isUnder(path, f.path));
  if (failure) failure.times--;
  const status = failure?.status ?? options.status ?? 200;
  const request: ReceivedCallback = {
    method: req.method ?? '',
    path,
    headers: Object.fromEntries(Object.entries(req.headers).map(([name, value]) => [name, String(value)])),
    rawHeaders: pairs(req.rawHeaders),
    body: parseJson(raw),
    raw,
    status,
    receivedAt: new Date().toISOString(),
  };
  state.received.push(request);
  res.writeHead(status, { 'content-type': 'text/plain' }).end(status < 300 ? 'ok' : `receiver answers ${status}`);
  options.onReceive?.(request);
  for (const wake of state.waiters) wake();
}

/** Resolves with the requests that match `filter` once there are `count` of them; rejects after `timeoutMs`. */
function waitForRequests(
  state: ReceiverState,
  count: number,
  filter: (request: ReceivedCallback) => boolean,
  timeoutMs: number,
): Promise<ReceivedCallback[]> {
  const { received, waiters } = state;
  return new Promise((resolve, reject) => {
    const check = () => {
      const matching = received.filter(filter);
      if (matching.length < count) return false;
      done();
      resolve(matching);
      return true;
    };
    const timer = setTimeout(() => {
      done();
      reject(
        new Error(`the receiver got ${received.filter(filter).length} of ${count} requests within ${timeoutMs} ms`),
      );
    }, timeoutMs);
    const done = () => {
      clearTimeout(timer);
      waiters.delete(check);
    };
    if (!check()) waiters.add(check);
  });
}

export type Receiver = Awaited<ReturnType<typeof startReceiver>>;

/** Whether a request path is `prefix` or below it: `/hooks` covers `/hooks/va` and `/hooks?x=1`, not `/hooks2`. */
const isUnder = (path: string, prefix: string): boolean =>
  prefix === '/' ||
  path === prefix ||
  path.startsWith(`${prefix.replace(/\/$/, '')}/`) ||
  path.startsWith(`${prefix}?`);

/** The whole body as text; a request cut short keeps what arrived. */
async function readAll(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of req) chunks.push(chunk as Buffer);
  } catch {
    // The sender went away mid-body: record what came.
  }
  return Buffer.concat(chunks).toString('utf8');
}

const pairs = (flat: string[]): [string, string][] =>
  Array.from({ length: flat.length / 2 }, (_, i) => [flat[2 * i]!, flat[2 * i + 1]!]);

const parseJson = (raw: string): unknown => {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
};
