import type { Context } from 'hono';
import { SandboxError } from '../../core/index.js';
import type { Runtime } from '../runtime/runtime.js';
import { type Env, header } from './routes/kit.js';

/**
 * Idempotency-Key on a POST: the first response (status and body) is replayed for the same key and body,
 * with `Idempotent-Replayed: true`; the same key with another body is a 409. The key is reserved before the
 * handler runs: a request with it that arrives meanwhile waits for that answer (or, with another body, is a 409).
 * A first request that fails is not remembered and releases the key, so the next one in line runs itself.
 */
export function idempotency(runtime: Runtime) {
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
