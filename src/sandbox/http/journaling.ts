import type { Context } from 'hono';
import type { JournalStore } from '../store/journal.js';
import { NO_ANSWER } from './api-faults.js';
import { recordRequest } from './journal.js';
import type { Env } from './routes/kit.js';

/**
 * The `/api/v1` middleware that journals each request of an account: after the key's account is held (a request with
 * no account, a 401, is nobody's), before its body is read, so a body refused (413, 415, 400) is journaled too.
 */
export function journaling(journal: JournalStore) {
  return async (c: Context<Env>, next: () => Promise<void>) => {
    if (!journal.on) return next();
    const account = c.get('account');
    const at = account.nowMs();
    const started = performance.now();
    await next();
    const res = c.res;
    const answered = !(res.status === 444 && (res.headers.has('x-hono-already-sent') || res.headers.has(NO_ANSWER)));
    recordRequest(journal, account.key, {
      at,
      method: c.req.method,
      path: c.req.path,
      query: c.req.query(),
      headers: headersOf(c),
      requestBody: c.get('body') ?? null,
      status: answered ? res.status : null,
      responseBody: answered ? await res.clone().text() : null,
      durationMs: Math.round((performance.now() - started) * 10) / 10,
      replayed: res.headers.get('Idempotent-Replayed') === 'true',
      apiFault: c.get('apiFault') ?? null,
    });
  };
}

/** A request's headers as sent (under the Node server with their own spelling, in order). */
function headersOf(c: Context<Env>): [string, string][] {
  const raw = c.env?.incoming?.rawHeaders;
  if (!raw) return [...c.req.raw.headers.entries()];
  const pairs: [string, string][] = [];
  for (let i = 0; i < raw.length; i += 2) pairs.push([raw[i]!, raw[i + 1]!]);
  return pairs;
}
