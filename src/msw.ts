import { AsyncResource } from 'node:async_hooks';
import { type HttpHandler, http } from 'msw';
import type { WallClock } from './core/index.js';
import type { AttemptResult, Transport } from './sandbox/delivery/index.js';
import { type AppOptions, createApp, NO_ANSWER } from './sandbox/http/index.js';
import { createRuntime, type Runtime } from './sandbox/runtime/index.js';
import { memoryStore } from './sandbox/store/index.js';

/** One callback attempt, as the sandbox sends it. */
export interface Callback {
  url: string;
  headers: Record<string, string>;
  /** The event's JSON body. */
  // biome-ignore lint/suspicious/noExplicitAny: a test reads each event type's body its own way
  body: any;
  eventId: string;
  eventType: string;
}

export interface SandboxHandlersOptions extends AppOptions {
  /** Where the handlers answer, e.g. `https://va-sandbox.test` or `http://localhost:4580/va`: `${baseUrl}/api/v1/...`. */
  baseUrl: string;
  /**
   * Receives every callback attempt instead of real HTTP. Its answer is the status (default 200; not 2xx fails the
   * attempt, which is retried); a throw is a network error. Without it, callbacks go over real HTTP, which msw
   * does not intercept.
   */
  // biome-ignore lint/suspicious/noConfusingVoidType: a handler that returns nothing answers 200
  onCallback?: (callback: Callback) => number | void | Promise<number | void>;
  /** Milliseconds an attempt may take (`onCallback` settling, or the HTTP exchange) before it is a timeout; default 10,000. */
  callbackTimeoutMs?: number;
  /** Sandbox seconds before each callback retry (default 5, 25). */
  retryDelays?: number[];
  clock?: WallClock;
  strictTaxId?: boolean;
  /** The payment hub ids accepted (others are 404); any positive id when absent. */
  hubIds?: number[];
}

export type SandboxHandlers = HttpHandler[] & {
  /** Stops the sandbox's timers and deliveries; its state is forgotten. */
  close(): Promise<void>;
  /**
   * Resolves once every callback due so far, in every account, has been attempted: delivered, or failed and waiting
   * for a retry that is not due yet (move the clock to make it due). Rejects after `timeoutMs` (default 20,000).
   */
  settle(options?: { timeoutMs?: number }): Promise<void>;
};

/**
 * msw request handlers that answer the whole `/api/v1` and `/sandbox/v1` surface (plus `/health` and
 * `/openapi.json`) in-process, with the same core and app as the server, over state kept in memory.
 *
 *     const server = setupServer(...sandboxHandlers({ baseUrl: 'https://va-sandbox.test' }));
 */
export function sandboxHandlers(options: SandboxHandlersOptions): SandboxHandlers {
  const base = new URL(options.baseUrl);
  const prefix = base.pathname.replace(/\/+$/, '');
  const ready = createRuntime({
    store: memoryStore(),
    clock: options.clock,
    retryDelays: options.retryDelays,
    callbackTimeoutMs: options.callbackTimeoutMs,
    strictTaxId: options.strictTaxId,
    hubIds: options.hubIds,
    transport: options.onCallback && toTransport(options.onCallback),
  }).then((runtime) => ({ runtime, app: createApp(runtime, options) }));

  // The sandbox answers in the async context it was made in, not in the intercepted request's, as a server would: msw 3
  // follows a request's async context into the HTTP it leads to, and would take the callbacks this sandbox then sends
  // over real HTTP (no onCallback) for requests of the caller's own.
  const answer = AsyncResource.bind(async (request: Request): Promise<Response> => {
    const { app } = await ready;
    const response = await app.fetch(prefix ? await withoutPrefix(request, prefix) : request);
    // An API fault that leaves no answer (a reset, a hang, a lost answer): the network error a closed connection is.
    return response.headers.has(NO_ANSWER) ? Response.error() : response;
  });
  const handle = ({ request }: { request: Request }): Promise<Response> => answer(request);
  const handlers = ['/api/v1/*', '/sandbox/v1/*', '/health', '/openapi.json'].map((path) =>
    http.all(`${base.origin}${prefix}${path}`, handle),
  );
  return Object.assign(handlers, {
    close: async () => (await ready).runtime.close(),
    settle: async ({ timeoutMs = 20_000 } = {}) => {
      const { runtime } = await ready;
      const deadline = Date.now() + timeoutMs;
      while (callbacksDue(runtime)) {
        if (Date.now() > deadline) throw new Error(`callbacks were still due after ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    },
  });
}

/** Whether an attempt is running, or any account has a delivery whose attempt is due by its clock. */
function callbacksDue(runtime: Runtime): boolean {
  if (runtime.deliverer.inFlight() > 0) return true;
  return runtime.sandbox.accounts().some((account) => {
    const now = account.now();
    for (let page = 1; ; page++) {
      const open = account.deliveries.listDeliveries({ status: 'pending,retrying', limit: '100', page: String(page) });
      if (open.data.some((delivery) => delivery.nextAttemptAt !== null && delivery.nextAttemptAt <= now)) return true;
      if (page >= open.pagination.totalPages) return false;
    }
  });
}

/** The request as the app sees it: the path below the base URL's own path. */
async function withoutPrefix(request: Request, prefix: string): Promise<Request> {
  const url = new URL(request.url);
  url.pathname = url.pathname.slice(prefix.length) || '/';
  const body = request.method === 'GET' || request.method === 'HEAD' ? undefined : await request.arrayBuffer();
  return new Request(url, { method: request.method, headers: request.headers, body });
}

function toTransport(onCallback: NonNullable<SandboxHandlersOptions['onCallback']>): Transport {
  return async ({ url, headers, body }): Promise<AttemptResult> => {
    try {
      const status =
        (await onCallback({
          url,
          headers,
          body: JSON.parse(body),
          eventId: headers['X-Service-Event-Id'] ?? '',
          eventType: headers['X-Service-Event-Type'] ?? '',
        })) ?? 200;
      if (status >= 200 && status < 300)
        return { responseStatus: status, responseBody: null, error: null, errorMessage: null };
      return {
        responseStatus: status,
        responseBody: null,
        error: status >= 300 && status < 400 ? 'redirect' : 'http_status',
        errorMessage: `HTTP ${status}`,
      };
    } catch (error) {
      return {
        responseStatus: null,
        responseBody: null,
        error: 'network',
        errorMessage: `onCallback threw: ${(error as Error).message}`,
      };
    }
  };
}
