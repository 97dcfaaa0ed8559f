import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Context, Hono } from 'hono';
import { z } from 'zod';
import { type Account, type ApiFaultType, type Page, parse, SandboxError } from '../../../core/index.js';
import type { Runtime } from '../../runtime/runtime.js';

/** `Bindings`: what the Node server passes beside the Request (absent in-process, under msw). */
export type Env = {
  Bindings: { incoming?: IncomingMessage; outgoing?: ServerResponse } | undefined;
  Variables: { account: Account; body: string; apiFault: { ruleId: string; type: ApiFaultType } };
};

type Ok = (c: Context<Env>, data: unknown, status?: 200 | 201, extra?: Record<string, unknown>) => Response;
/** Answers with the contract's error envelope (app.ts's), with extra headers. */
export type Fail = (c: Context<Env>, error: SandboxError, headers?: Record<string, string>) => Response;

interface WriteOptions {
  status?: 200 | 201;
  /** `none`: the endpoint takes no body (an empty one or `{}`); `optional`: a JSON body or none at all. */
  body?: 'json' | 'none' | 'optional';
  /** Added beside `data` in the envelope, as the cancel response does. */
  message?: string;
}

/**
 * How routes are declared: a read answers from the account as committed (`Store.committed`: never showing a write
 * that may still be refused); a write changes it, waits until the state is
 * on disk, then answers, so an acknowledged write is never lost; a write that raised callbacks also waits while its
 * account's backlog is long (`paced`). Routes stay one line: parse, call, answer.
 */
export function routeKit(app: Hono<Env>, runtime: Runtime, ok: Ok) {
  const write =
    (handler: (account: Account, body: unknown, c: Context<Env>) => unknown, options: WriteOptions = {}) =>
    async (c: Context<Env>) => {
      const body =
        options.body === 'none' ? parse(noBody, jsonBody(c, false) ?? {}) : jsonBody(c, options.body !== 'optional');
      const account = c.get('account');
      const backlog = runtime.deliverer.backlogOf(account);
      // A write reads the clock once: what it records, and the events it raises, carry one instant.
      const result = account.write(() => handler(account, body, c));
      // Read before the handler's first await: whether this write raised callbacks, not what others did meanwhile.
      const raised = runtime.deliverer.backlogOf(account) > backlog;
      const data = await result;
      await runtime.commit();
      if (raised) await runtime.deliverer.paced(account);
      return ok(c, data, options.status ?? 200, options.message ? { message: options.message } : {});
    };
  return {
    app,
    runtime,
    /**
     * A read; `stores`: it may change the state too (a hub made on first use), so it waits for the disk like a write.
     * What the handler puts in `beside` goes beside `data` in the envelope.
     */
    get: (
      path: string,
      handler: (account: Account, c: Context<Env>, beside: Record<string, unknown>) => unknown,
      options: { stores?: boolean } = {},
    ) =>
      app.get(path, async (c) => {
        const beside: Record<string, unknown> = {};
        const data = await runtime.store.committed(() => handler(c.get('account'), c, beside));
        if (options.stores) await runtime.commit();
        return ok(c, data, 200, beside);
      }),
    /** A list in the contract's shape: `data` is the page's items, `pagination` sits beside it; `stores` as `get`'s. */
    list: (
      path: string,
      handler: (account: Account, query: Record<string, string>, c: Context<Env>) => Page<unknown>,
      options: { stores?: boolean } = {},
    ) =>
      app.get(path, async (c) => {
        const { data, pagination } = await runtime.store.committed(() => handler(c.get('account'), c.req.query(), c));
        if (options.stores) await runtime.commit();
        return ok(c, data, 200, { pagination });
      }),
    post: (path: string, handler: Parameters<typeof write>[0], options?: WriteOptions) =>
      app.post(path, write(handler, options)),
    patch: (path: string, handler: Parameters<typeof write>[0], options?: WriteOptions) =>
      app.patch(path, write(handler, options)),
    put: (path: string, handler: Parameters<typeof write>[0], options?: WriteOptions) =>
      app.put(path, write(handler, options)),
    delete: (path: string, handler: Parameters<typeof write>[0], options?: WriteOptions) =>
      app.delete(path, write(handler, options)),
  };
}

export type RouteKit = ReturnType<typeof routeKit>;

const noBody = z.strictObject({});

/** The request's JSON body: 415 unless it is JSON, 400 INVALID_JSON when it does not parse. */
function jsonBody(c: Context<Env>, required: boolean): unknown {
  const text = c.get('body');
  if (text.trim() === '') {
    if (required)
      throw new SandboxError('INVALID_JSON', 'Request body is empty: send a JSON object', ['(body): is empty']);
    return undefined;
  }
  const type = header(c, 'content-type') ?? '';
  if (!/^application\/json\s*(;|$)/i.test(type)) {
    throw new SandboxError('UNSUPPORTED_MEDIA_TYPE', `Content-Type must be application/json, got ${type || 'none'}`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new SandboxError('INVALID_JSON', `Request body is not valid JSON: ${(error as Error).message}`, [
      '(body): is not valid JSON',
    ]);
  }
}

/**
 * A request header (`name` in lower case) as `Headers.get` gives it: repeated ones joined by ", ". Under the Node
 * server it is read from the incoming message's raw headers: asking the Request for its headers makes the adapter
 * build a whole Headers object for the few this app reads.
 */
export function header(c: Context<Env>, name: string): string | undefined {
  const raw = c.env?.incoming?.rawHeaders;
  return raw ? rawHeader(raw, name) : c.req.header(name);
}

/** A header of Node's `rawHeaders` (name, value, name, value...), as `Headers.get` gives it. */
export function rawHeader(raw: string[], name: string): string | undefined {
  let value: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i]!.length === name.length && raw[i]!.toLowerCase() === name)
      value = value === undefined ? raw[i + 1] : `${value}, ${raw[i + 1]}`;
  }
  return value;
}

/** A path parameter (routes declare it, so it is always there). */
export const param = (c: Context<Env>, name: string): string => c.req.param(name) ?? '';
