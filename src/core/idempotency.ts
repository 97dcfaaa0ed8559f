import type { AccountContext } from './account-context.js';
import { ms } from './clock.js';
import type { DueWork } from './due-work.js';

/** How long an Idempotency-Key's answer is kept, by the account's clock. */
const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;

/** Idempotency-Keys: the answer each one got, replayed for its repeats until it is forgotten. */
export class Idempotency {
  constructor(
    private readonly ctx: AccountContext,
    private readonly due: DueWork,
  ) {}

  /** Schedules forgetting every key of the account's records. */
  build(): void {
    for (const [key, record] of Object.entries(this.ctx.state.idempotency)) this.due.schedule(ms(record.createdAt) + IDEMPOTENCY_TTL_MS, 'idempotency', key);
  }

  idempotent(key: string) {
    return this.ctx.state.idempotency[key];
  }

  remember(key: string, fingerprint: string, status: number, body: unknown): void {
    const createdAt = this.ctx.now();
    this.ctx.put('idempotency', key, { fingerprint, status, body, createdAt });
    this.due.schedule(ms(createdAt) + IDEMPOTENCY_TTL_MS, 'idempotency', key);
  }

  /** Forgets a key fallen due, unless it was remembered again since. */
  forget(key: string, at: number): boolean {
    const record = this.ctx.state.idempotency[key];
    if (!record || ms(record.createdAt) + IDEMPOTENCY_TTL_MS !== at) return false;
    this.ctx.drop('idempotency', key);
    return true;
  }
}
