import type { Context } from 'hono';
import { apiFaultError, iso, type Strike } from '../../core/index.js';
import type { Runtime } from '../runtime/runtime.js';
import { BUDGET_RETRY_AFTER, type BufferBudget } from './budget.js';
import { type Env, type Fail, header, param, type RouteKit } from './routes/kit.js';
import { bearerKey, type LogEntry, requestKey, withoutKey } from './server-log.js';

/** Contract part 7: an account's API fault rules, added, listed and removed like its other sandbox settings. */
export function apiFaultRoutes({ post, list, delete: del }: RouteKit): void {
  post('/sandbox/v1/api-faults', (account, body) => account.apiFaults.add(body), { status: 201 });
  list('/sandbox/v1/api-faults', (account, query) => account.apiFaults.list(query));
  del('/sandbox/v1/api-faults', (account) => account.apiFaults.clear(), { body: 'none' });
  del('/sandbox/v1/api-faults/:id', (account, _body, c) => account.apiFaults.remove(param(c, 'id')), { body: 'none' });
}

/**
 * The `/api/v1` middleware that applies them, after the body is read and before idempotency: an error, a reset or a
 * hang answers before anything is carried out; a lost answer lets the request (and its Idempotency-Key's answer) be
 * committed first, then closes the connection; a delay holds the answer.
 */
export function apiFaults(runtime: Runtime, fail: Fail, onLog?: (entry: LogEntry) => void, budget?: BufferBudget) {
  return async (c: Context<Env>, next: () => Promise<void>) => {
    const account = c.get('account');
    const strike = account.apiFaults.strike(c.req.method, c.req.path);
    if (!strike) return next();
    c.set('apiFault', { ruleId: strike.ruleId, type: strike.fault.type });
    // The rule's count and generator are stored before it acts: after a restart the sequence goes on from here.
    await runtime.commit();
    // The log's time is real time, as its other lines'.
    onLog?.(faultEntry(c, strike, iso(runtime.sandbox.clock.now())));
    const { fault } = strike;
    // What a delay or a hang holds counts in the buffer budget: past it (but for the request's own body, counted when
    // it was let in), they are refused rather than held.
    const busy =
      (fault.type === 'delay' || fault.type === 'hang') && budget?.over(Number(header(c, 'content-length')) || 0);
    if (busy) return fail(c, budget!.refusal(), { 'Retry-After': BUDGET_RETRY_AFTER });
    switch (fault.type) {
      case 'error':
        return fail(c, apiFaultError(strike.ruleId, fault), fault.status === 429 ? { 'Retry-After': '1' } : {});
      case 'delay':
        await next();
        return delayed(c, fault.ms, budget);
      case 'reset':
        return noAnswer(c, true);
      case 'hang':
        return hang(c, fault.ms, fail, budget);
      case 'lost_answer':
        await next();
        // After the route (and the Idempotency-Key's answer) is committed: its answer is replaced by none.
        return noAnswer(c, false);
    }
  };
}

/** Holds the route's answer for `ms`, its bytes counted in the budget meanwhile. */
async function delayed(c: Context<Env>, ms: number, budget: BufferBudget | undefined): Promise<void> {
  if (!budget || !c.res.body) return void (await new Promise((resolve) => setTimeout(resolve, ms)));
  const answer = c.res;
  const body = await answer.arrayBuffer();
  const release = budget.hold(body.byteLength);
  try {
    await new Promise((resolve) => setTimeout(resolve, ms));
  } finally {
    release();
  }
  c.res = new Response(body, { status: answer.status, headers: answer.headers });
}

/**
 * Holds the connection with no answer for `ms`, then closes it. Past `HELD_CONNECTIONS` connections held at once the
 * request is answered at once, 503 with Retry-After, and its connection closed, so the server keeps no descriptor for it.
 */
async function hang(
  c: Context<Env>,
  ms: number,
  fail: Fail,
  budget: BufferBudget | undefined,
): Promise<Response | void> {
  const socket = c.env?.incoming?.socket;
  const release = socket && budget ? budget.holdConnection(socket) : () => {};
  if (!release) {
    const why = `API fault rules hold ${budget!.heldLimit} hanging connections, the most this server holds at once`;
    return fail(c, budget!.refusal(why), { 'Retry-After': BUDGET_RETRY_AFTER, Connection: 'close' });
  }
  try {
    await clientGoneOr(c, ms);
  } finally {
    release();
  }
  return noAnswer(c, false);
}

const faultEntry = (c: Context<Env>, strike: Strike, time: string): LogEntry => ({
  type: 'fault',
  time,
  ruleId: strike.ruleId,
  fault: strike.fault.type,
  method: c.req.method,
  path: withoutKey(c.req.path, bearerKey(header(c, 'authorization'))),
  key: requestKey(header(c, 'authorization')),
});

/**
 * The header of an in-process answer that stands for no answer at all: there is no connection to close, and Hono
 * re-wraps a `Response.error()`, so the msw handlers turn this one into the network error `fetch` would see.
 */
export const NO_ANSWER = 'x-va-sandbox-no-answer';

/**
 * Closes the connection with no answer: a TCP reset, or a plain close. 444 is nginx's "closed with no answer", as the
 * request's log line shows it.
 */
function noAnswer(c: Context<Env>, reset: boolean): void {
  const socket = c.env?.incoming?.socket;
  if (reset) socket?.resetAndDestroy();
  else socket?.destroy();
  // Set, not returned: a response a middleware returns after the route answered is not used. Under the Node server
  // nothing is written: @hono/node-server leaves a response marked as already sent alone.
  c.res = new Response(null, {
    status: 444,
    headers: socket ? { 'x-hono-already-sent': 'true' } : { [NO_ANSWER]: reset ? 'reset' : 'closed' },
  });
}

/** Resolves after `ms`, or as soon as the client closes the connection (or aborts the request, in process). */
function clientGoneOr(c: Context<Env>, ms: number): Promise<void> {
  const socket = c.env?.incoming?.socket;
  // Under the Node server the socket says it; asking the Request for its signal would build one for nothing.
  const signal = socket ? null : c.req.raw.signal;
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      socket?.off('close', done);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    socket?.once('close', done);
    signal?.addEventListener('abort', done);
  });
}
