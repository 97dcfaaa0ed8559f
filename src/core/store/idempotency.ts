import { ms } from '../conventions/index.js';
import { IDEMPOTENCY_TTL_MS } from '../records/index.js';
import type { AccountContext } from './account-context.js';

/** Idempotency-Keys: the answer each one got, replayed for its repeats until it is forgotten. */
export class Idempotency {
  constructor(private readonly ctx: AccountContext) {}

  idempotent(key: string) {
    return this.ctx.get('idempotency', key);
  }

  remember(key: string, fingerprint: string, status: number, body: unknown): void {
    const createdAt = this.ctx.now();
    this.ctx.put('idempotency', key, { fingerprint, status, body, createdAt });
  }

  /** Forgets a key fallen due, unless it was remembered again since. */
  forget(key: string, at: number): boolean {
    const record = this.ctx.get('idempotency', key);
    if (!record || ms(record.createdAt) + IDEMPOTENCY_TTL_MS !== at) return false;
    this.ctx.records.drop('idempotency', key);
    return true;
  }
}
