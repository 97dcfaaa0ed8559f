import type { IncomingMessage } from 'node:http';
import { Hono, type Context } from 'hono';
import { methodNotAllowed } from 'hono/method-not-allowed';
import { iso, SandboxError, type Account } from '../core/index.js';
import { scenarioJsonSchema } from '../core/scenario.js';
import { openApiDocument } from './openapi.js';
import { apiFaultRoutes, apiFaults } from './api-faults.js';
import { accountExportRoutes } from './routes/account-export.js';
import { clientRoutes } from './routes/clients.js';
import { header, routeKit, type Env } from './routes/kit.js';
import type { LogEntry } from './server-log.js';
import { deliveryRoutes } from './routes/deliveries.js';
import { sandboxRoutes } from './routes/sandbox.js';
import { vaPaymentRoutes } from './routes/va-payments.js';
import { rateLimiter } from './rate-limit.js';
import type { Runtime } from './runtime.js';
import { webUiRoutes } from './web-ui.js';

export interface AppOptions {
  /** Accepted API keys; empty means any non-empty key (each one its own account). */
  apiKeys?: string[];
  /** `/api/v1` requests per minute per key (default `DEFAULT_RATE_LIMIT`); 0 turns the limit off. */
  rateLimit?: number;
  /**
   * Host names (or addresses) a request's `Host` may name besides loopback ones: the DNS-rebinding guard, on when
   * this is given (the Node server always gives it); in-process handlers (msw) never see a browser's request.
   */
  allowedHosts?: string[];
  /** The server log: the app tells it of each request an API fault rule faults. */
  onLog?: (entry: LogEntry) => void;
}

/** The real API's limit is per minute; the sandbox's default is generous but on, so clients see its headers. */
export const DEFAULT_RATE_LIMIT = 6000;

const MIB = 1024 * 1024;
const IMPORT_PATH = '/sandbox/v1/import';
/** The contract's body limit, and the larger one of an imported account (a whole incident, handed over). */
const bodyLimit = (path: string): number => (path === IMPORT_PATH ? 512 * MIB : MIB);

/** The contract's error body: the one shape every failure takes, in the app or before a request reaches it. */
export const errorEnvelope = (error: SandboxError, path: string, timestamp: string) => ({
  success: false,
  error: { code: error.code, message: error.message, details: error.details },
  timestamp,
  path,
});

/**
 * The HTTP face of the sandbox: `fetch(Request) -> Response`, so the same app serves the Node server
 * and in-process handlers. Routes only parse, call the core and answer; errors become envelopes in one place.
 */
export function createApp(runtime: Runtime, options: AppOptions = {}) {
  const app = new Hono<Env>();
  const wallNow = () => runtime.sandbox.clock.now();
  const rateLimit = options.rateLimit ?? DEFAULT_RATE_LIMIT;
  const limiter = rateLimit > 0 ? rateLimiter(rateLimit, wallNow) : null;
  let importBusy = false;

  const timestamp = (c: Context<Env>) => {
    const account = c.get('account') as Account | undefined;
    return account ? account.now() : iso(wallNow());
  };
  const ok = (c: Context<Env>, data: unknown, status: 200 | 201 = 200, extra: Record<string, unknown> = {}) =>
    c.json({ success: true, data, ...extra, timestamp: timestamp(c) }, status);
  const fail = (c: Context<Env>, error: SandboxError, headers: Record<string, string> = {}) =>
    c.json(errorEnvelope(error, c.req.path, timestamp(c)), error.status as 400, headers);

  app.onError((error, c) => {
    // The rest of a too-large body is never read, so that connection cannot carry another request.
    if (error instanceof SandboxError) {
      // One the sandbox raised on purpose (a damaged record, named): the log says it too, in its one line.
      if (error.code === 'INTERNAL_ERROR') runtime.log(`${c.req.method} ${c.req.path}: ${error.message}`);
      return fail(c, error, error.code === 'PAYLOAD_TOO_LARGE' ? { Connection: 'close' } : {});
    }
    if (error instanceof ClientGone) {
      // Nobody is left to answer: said as what it is, not as the sandbox's error.
      runtime.log(`${c.req.method} ${c.req.path}: the client hung up before the request's body ended; nothing was done`);
      return c.body(null, 400);
    }
    runtime.log(`internal error on ${c.req.method} ${c.req.path}: ${error.stack ?? error.message}`);
    return fail(c, new SandboxError('INTERNAL_ERROR', 'Internal error: the sandbox logged it'));
  });
  if (options.allowedHosts) app.use(hostGuard(options.allowedHosts));
  app.notFound((c) => fail(c, new SandboxError('NOT_FOUND', `No route ${c.req.method} ${c.req.path}`)));
  app.use(
    methodNotAllowed({
      app,
      onMethodNotAllowed: (c, allowed) =>
        fail(c as Context<Env>, new SandboxError('METHOD_NOT_ALLOWED', `${c.req.method} is not allowed on ${c.req.path}; use ${allowed.join(', ')}`), {
          Allow: allowed.join(', '),
        }),
    }),
  );

  // A body sent to a public route is ignored but read: left unread, closing the connection resets it and can cut a
  // long answer (the OpenAPI document) short.
  for (const path of ['/health', '/openapi.json', '/scenario.schema.json']) {
    app.use(path, async (c, next) => {
      if (c.env?.incoming) await readIncoming(c.env.incoming, MIB);
      await next();
    });
  }
  app.get('/health', (c) => c.json({ status: 'ok', version: runtime.version, keepDays: runtime.keepDays }));
  app.get('/openapi.json', (c) => c.json(openApiDocument(runtime.version)));
  let scenarioSchema: Record<string, unknown> | undefined;
  app.get('/scenario.schema.json', (c) => c.json((scenarioSchema ??= scenarioJsonSchema())));

  // Hono's router runs a prefix's middleware twice for a path spelled as its pattern ("/sandbox/v1/*"): its body
  // was read by the first run, so the second waited forever. No route has a `*` segment: such a path is a 404.
  app.use(async (c, next) => {
    if (!c.req.path.split('/').includes('*')) return next();
    if (c.env?.incoming) await readIncoming(c.env.incoming, MIB);
    return fail(c, new SandboxError('NOT_FOUND', `No route ${c.req.method} ${c.req.path}`));
  });
  for (const prefix of ['/api/v1/*', '/sandbox/v1/*']) {
    app.use(prefix, async (c, next) => {
      const key = /^Bearer\s+(\S+)\s*$/i.exec(header(c, 'authorization') ?? '')?.[1];
      if (!key) throw new SandboxError('UNAUTHORIZED', 'Missing API key: send Authorization: Bearer <key>');
      if (options.apiKeys?.length && !options.apiKeys.includes(key)) {
        // Only the key's end is shown: enough to tell which one was sent, never the secret.
        throw new SandboxError('UNAUTHORIZED', `Unknown API key …${key.slice(-4)}: this sandbox accepts only the keys it was started with (--api-key)`);
      }
      // The limit is the production API's (`/api/v1`); the sandbox's own controls are not limited.
      const verdict = prefix === '/api/v1/*' ? limiter?.(key) : undefined;
      if (verdict && !verdict.allowed) {
        const error = new SandboxError('RATE_LIMIT_EXCEEDED', `More than ${rateLimit} requests per minute for this API key`);
        return fail(c, error, { ...verdict.headers, 'Retry-After': String(verdict.retryAfter) });
      }
      // Held in memory while the request runs: the same account object for every request of the key meanwhile.
      const { account, release } = runtime.sandbox.hold(key);
      try {
        c.set('account', account);
        // Nothing waits for a timer to catch up: what is due by the account's clock happens before any answer. If it
        // cannot be stored (a full disk) it is undone, and reads still answer; a write then fails on its own.
        if (account.clock.runDue()) await runtime.commit().catch(() => {});
        await next();
      } finally {
        release();
      }
      for (const [name, value] of Object.entries(verdict?.headers ?? {})) c.res.headers.set(name, value);
    });
    app.use(prefix, async (c, next) => {
      // An import holds its whole body, parsed, several times its size: one at a time per server, the next waits.
      const importing = c.req.path === IMPORT_PATH && c.req.method === 'POST';
      if (importing && importBusy) {
        const error = new SandboxError('RATE_LIMIT_EXCEEDED', 'Another import is in progress on this server; imports run one at a time', [
          '(request): another import is in progress',
        ]);
        // Its body is not read, so the connection cannot carry another request.
        return fail(c, error, { 'Retry-After': '1', Connection: 'close' });
      }
      importBusy ||= importing;
      try {
        c.set('body', await readBody(c.req.raw, bodyLimit(c.req.path), header(c, 'content-length'), c.env?.incoming));
        await next();
      } finally {
        if (importing) importBusy = false;
      }
    });
    if (prefix === '/api/v1/*') app.use(prefix, apiFaults(runtime, fail, options.onLog));
    app.use(prefix, idempotency(runtime));
  }

  const routes = routeKit(app, runtime, ok);
  vaPaymentRoutes(routes);
  clientRoutes(routes);
  sandboxRoutes(routes);
  deliveryRoutes(routes);
  accountExportRoutes(routes);
  apiFaultRoutes(routes);
  webUiRoutes(app);

  return app;
}

export type App = ReturnType<typeof createApp>;

/** `localhost`, 127.0.0.0/8 and `[::1]`: names a web page cannot make its own by rebinding DNS. */
const LOOPBACK = /^(localhost|127(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}|\[::1\])$/;

/** The host name of a Host header, lower case, without its port or a trailing dot; IPv6 keeps its brackets. */
const hostName = (host: string): string => {
  const name = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.split(':')[0]!;
  return name.toLowerCase().replace(/\.$/, '');
};

/**
 * The DNS-rebinding guard: a web page whose name was rebound to 127.0.0.1 reaches the sandbox with its own name in
 * `Host`, so only loopback names and the given ones are served, on every route (`/health` too); the rest is 403.
 */
function hostGuard(allowedHosts: string[]) {
  const allowed = new Set(allowedHosts.map((host) => hostName(host.includes(':') && !host.startsWith('[') ? `[${host}]` : host)));
  return async (c: Context<Env>, next: () => Promise<void>) => {
    const host = header(c, 'host') ?? '';
    const name = hostName(host);
    if (!LOOPBACK.test(name) && !allowed.has(name)) {
      throw new SandboxError('HOST_NOT_ALLOWED', `Host ${host || '(none)'} is not allowed: use a loopback address or start with --allowed-host`, [
        `Host: ${name || '(none)'} is not a loopback name or address, the --host value or an --allowed-host`,
      ]);
    }
    await next();
  };
}

/**
 * The raw body as text, refused with 413 past the limit (by its Content-Length, or as it streams in). Under the
 * Node server it is read from the incoming message itself: asking the Request for its body makes the adapter
 * build a whole fetch Request (streams, abort signal), the largest cost of a small POST.
 */
async function readBody(request: Request, limit: number, length: string | undefined, incoming?: IncomingMessage): Promise<string> {
  if (Number(length ?? 0) > limit) throw tooLarge(limit);
  if (request.method === 'GET' || request.method === 'HEAD') return '';
  if (incoming) return (await readIncoming(incoming, limit)).toString('utf8');
  if (!request.body) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of request.body) {
    size += chunk.length;
    if (size > limit) throw tooLarge(limit);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The client closed the connection before the body it announced arrived. */
class ClientGone extends Error {}

const tooLarge = (limit: number) => new SandboxError('PAYLOAD_TOO_LARGE', `Request body is over ${limit / MIB} MiB`);

/**
 * An incoming message's body, by its events: an async iterator over it (a promise per chunk, and the listeners that
 * watch for its end) cost a create more than the rest of reading it.
 */
function readIncoming(incoming: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const data = (chunk: Buffer) => {
      size += chunk.length;
      chunks.push(chunk);
      if (size <= limit) return;
      // The rest is not kept: after the answer (which closes the connection) the adapter reads it to its end.
      incoming.off('data', data);
      chunks.length = 0;
      reject(tooLarge(limit));
    };
    incoming.on('data', data);
    incoming.on('end', () => resolve(Buffer.concat(chunks, size)));
    // An incoming message errs only when its connection is gone (aborted, reset) before its body ended.
    incoming.on('error', () => reject(new ClientGone()));
    // Closed before its end: the client went away.
    incoming.on('close', () => {
      if (!incoming.readableEnded) reject(new ClientGone());
    });
  });
}

/**
 * Idempotency-Key on a POST: the first response (status and body) is replayed for the same key and body,
 * with `Idempotent-Replayed: true`; the same key with another body is a 409. The key is reserved before the
 * handler runs: a request with it that arrives meanwhile waits for that answer (or, with another body, is a 409).
 * A first request that fails is not remembered and releases the key, so the next one in line runs itself.
 */
function idempotency(runtime: Runtime) {
  const inFlight = new Map<string, { fingerprint: string; done: Promise<void> }>();
  return async (c: Context<Env>, next: () => Promise<void>) => {
    const key = header(c, 'idempotency-key');
    if (c.req.method !== 'POST' || !key) return next();
    const account = c.get('account');
    const fingerprint = `${c.req.method} ${c.req.path}\n${c.get('body')}`;
    const conflict = () =>
      new SandboxError('IDEMPOTENCY_KEY_CONFLICT', `Idempotency-Key ${key} was used with another request`, [
        'Idempotency-Key: already used with a different body or path',
      ]);
    const slot = `${account.key}\n${key}`;
    for (let first = inFlight.get(slot); first; first = inFlight.get(slot)) {
      if (first.fingerprint !== fingerprint) throw conflict();
      await first.done;
    }
    const seen = account.idempotency.idempotent(key);
    if (seen) {
      if (seen.fingerprint !== fingerprint) throw conflict();
      c.res = c.json(seen.body, seen.status as 200, { 'Idempotent-Replayed': 'true' });
      return;
    }
    let release = () => {};
    inFlight.set(slot, { fingerprint, done: new Promise<void>((resolve) => (release = resolve)) });
    try {
      await next();
      if (c.res.status >= 200 && c.res.status < 300) {
        account.idempotency.remember(key, fingerprint, c.res.status, await c.res.clone().json());
        await runtime.commit();
      }
    } finally {
      inFlight.delete(slot);
      release();
    }
  };
}
