import { iso, SandboxError, type WallClock } from '../conventions/index.js';

/** A clock that only moves when told: for tests and deterministic runs. */
export class FakeClock implements WallClock {
  constructor(private ms: number = Date.UTC(2026, 0, 1)) {}
  now(): number {
    return this.ms;
  }
  advance(ms: number): void {
    this.ms += ms;
  }
}

/**
 * The latest a sandbox clock may read: times are ISO 8601 with 4-digit years, and a year is left for what falls due
 * after it (expiries, retries, idempotency keys), all far inside Date's range.
 */
export const MAX_CLOCK_MS = Date.UTC(9999, 0, 1);

/** A clock move to `toMs` refused past MAX_CLOCK_MS, naming the field that asked for it. */
export function checkClockMove(toMs: number, field: string): void {
  if (toMs > MAX_CLOCK_MS) {
    throw new SandboxError('VALIDATION_ERROR', `The sandbox clock cannot pass ${iso(MAX_CLOCK_MS)}`, [
      `${field}: would move the clock past ${iso(MAX_CLOCK_MS)}`,
    ]);
  }
}
