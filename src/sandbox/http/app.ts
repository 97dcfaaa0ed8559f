import { type Context, Hono } from 'hono';
import { methodNotAllowed } from 'hono/method-not-allowed';
import { type Account, iso, SandboxError } from '../../core/index.js';
import { scenarioJsonSchema } from '../../core/scenarios/scenario.js';
import type { Runtime } from '../runtime/runtime.js';
import { apiFaultRoutes, apiFaults } from './api-faults.js';
import type { BufferBudget } from './budget.js';
import { hostGuard } from './host-guard.js';
import { idempotency } from './idempotency.js';
import { journaling } from './journaling.js';
import { openApiDocument } from './openapi.js';
import { type RateLimiter, rateLimiter } from './rate-limit.js';
import { ClientGone, MIB, readIncoming, requestBodies } from './request-body.js';
import { accountExportRoutes } from './routes/account-export.js';
import { clientRoutes } from './routes/clients.js';
import { deliveryRoutes } from './routes/deliveries.js';
import { type Env, type Fail, header, routeKit } from './routes/kit.js';
import { requestRoutes } from './routes/requests.js';
import { sandboxRoutes } from './routes/sandbox.js';
import { vaPaymentRoutes } from './routes/va-payments.js';
import { bearerKey, type LogEntry, withoutKey } from './server-log.js';
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
  /** What the Node server holds for its clients (`BufferBudget`); none in process. */
  budget?: BufferBudget;
}

/** The real API's limit is per minute; the sandbox's default is generous but on, so clients see its headers. */
const DEFAULT_RATE_LIMIT = 6000;

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
  const timestamp = (c: Context<Env>) => {
    const account = c.get('account') as Account | undefined;
    return account ? account.now() : iso(wallNow());
  };
  const ok = (c: Context<Env>, data: unknown, status: 200 | 201 = 200, extra: Record<string, unknown> = {}) =>
    c.json({ success: true, data, ...extra, timestamp: timestamp(c) }, status);
  const fail: Fail = (c, error, headers = {}) =>
    c.json(errorEnvelope(error, c.req.path, timestamp(c)), error.status as 400, headers);

  app.onError(errorHandler(runtime, fail));
  if (options.allowedHosts) app.use(hostGuard(options.allowedHosts));
  app.notFound((c) => fail(c, new SandboxError('NOT_FOUND', `No route ${c.req.method} ${c.req.path}`)));
  app.use(
    methodNotAllowed({
      app,
      onMethodNotAllowed: (c, allowed) =>
        fail(
          c as Context<Env>,
          new SandboxError(
            'METHOD_NOT_ALLOWED',
            `${c.req.method} is not allowed on ${c.req.path}; use ${allowed.join(', ')}`,
          ),
          {
            Allow: allowed.join(', '),
          },
        ),
    }),
  );
  publicRoutes(app, runtime, options.budget);

  // Hono's router runs a prefix's middleware twice for a path spelled as its pattern ("/sandbox/v1/*"): its body
  // was read by the first run, so the second waited forever. No route has a `*` segment: such a path is a 404.
  app.use(async (c, next) => {
    if (!c.req.path.split('/').includes('*')) return next();
    if (c.env?.incoming) await readIncoming(c.env.incoming, MIB);
    return fail(c, new SandboxError('NOT_FOUND', `No route ${c.req.method} ${c.req.path}`));
  });
  const rateLimit = options.rateLimit ?? DEFAULT_RATE_LIMIT;
  const limiter = rateLimit > 0 ? rateLimiter(rateLimit, wallNow) : null;
  const bodies = requestBodies(fail);
  for (const prefix of ['/api/v1/*', '/sandbox/v1/*']) {
    // The limit is the production API's (`/api/v1`); the sandbox's own controls are not limited.
    app.use(prefix, accountOfKey(runtime, options.apiKeys, prefix === '/api/v1/*' ? limiter : null, fail));
    if (prefix === '/api/v1/*') app.use(prefix, journaling(runtime.store.journal));
    app.use(prefix, bodies);
    if (prefix === '/api/v1/*') app.use(prefix, apiFaults(runtime, fail, options.onLog, options.budget));
    app.use(prefix, idempotency(runtime));
  }

  const routes = routeKit(app, runtime, ok);
  vaPaymentRoutes(routes);
  clientRoutes(routes);
  sandboxRoutes(routes);
  deliveryRoutes(routes);
  accountExportRoutes(routes);
  apiFaultRoutes(routes);
  requestRoutes(routes);
  webUiRoutes(app);

  return app;
}

/** Every error a route or middleware throws, as the contract's envelope (or, for a client gone, no envelope at all). */
function errorHandler(runtime: Runtime, fail: Fail) {
  return (error: Error, c: Context<Env>) => {
    // The log never holds the API key, even where the path names it.
    const request = `${c.req.method} ${withoutKey(c.req.path, bearerKey(header(c, 'authorization')))}`;
    // The rest of a too-large body is never read, so that connection cannot carry another request.
    if (error instanceof SandboxError) {
      // One the sandbox raised on purpose (a damaged record, named): the log says it too, in its one line.
      if (error.code === 'INTERNAL_ERROR') runtime.log(`${request}: ${error.message}`);
      return fail(c, error, error.code === 'PAYLOAD_TOO_LARGE' ? { Connection: 'close' } : {});
    }
    if (error instanceof ClientGone) {
      // Nobody is left to answer: said as what it is, not as the sandbox's error.
      runtime.log(`${request}: the client hung up before the request's body ended; nothing was done`);
      return c.body(null, 400);
    }
    runtime.log(`internal error on ${request}: ${error.stack ?? error.message}`);
    return fail(c, new SandboxError('INTERNAL_ERROR', 'Internal error: the sandbox logged it'));
  };
}

/** What needs no key: the health check, the OpenAPI document and the scenario file schema. */
function publicRoutes(app: Hono<Env>, runtime: Runtime, budget: BufferBudget | undefined): void {
  // A body sent to a public route is ignored but read: left unread, closing the connection resets it and can cut a
  // long answer (the OpenAPI document) short.
  for (const path of ['/health', '/openapi.json', '/scenario.schema.json']) {
    app.use(path, async (c, next) => {
      if (c.env?.incoming) await readIncoming(c.env.incoming, MIB);
      await next();
    });
  }
  app.get('/health', (c) =>
    c.json({
      status: 'ok',
      version: runtime.version,
      keepDays: runtime.keepDays,
      ...(budget ? { bufferBudget: budget.view() } : {}),
    }),
  );
  app.get('/openapi.json', (c) => c.json(openApiDocument(runtime.version)));
  let scenarioSchema: Record<string, unknown> | undefined;
  app.get('/scenario.schema.json', (c) => c.json((scenarioSchema ??= scenarioJsonSchema())));
}

/**
 * The account of the request's API key (401 without one, or with one the sandbox was not started with), held while
 * the request runs, with what fell due by its clock done first; `limiter`: the key's per-minute limit, if any.
 */
function accountOfKey(runtime: Runtime, apiKeys: string[] | undefined, limiter: RateLimiter | null, fail: Fail) {
  return async (c: Context<Env>, next: () => Promise<void>) => {
    const key = bearerKey(header(c, 'authorization'));
    if (!key) throw new SandboxError('UNAUTHORIZED', 'Missing API key: send Authorization: Bearer <key>');
    if (apiKeys?.length && !apiKeys.includes(key)) {
      // Only the key's end is shown: enough to tell which one was sent, never the secret.
      throw new SandboxError(
        'UNAUTHORIZED',
        `Unknown API key …${key.slice(-4)}: this sandbox accepts only the keys it was started with (--api-key)`,
      );
    }
    const verdict = limiter?.(key);
    if (verdict && !verdict.allowed) {
      const error = new SandboxError(
        'RATE_LIMIT_EXCEEDED',
        `More than ${verdict.headers['X-RateLimit-Limit']} requests per minute for this API key`,
      );
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
  };
}
