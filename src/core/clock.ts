/** The source of real time, injected so tests can pin and move it. */
export interface WallClock {
  now(): number;
}

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

export const iso = (ms: number): string => new Date(ms).toISOString();
export const ms = (isoText: string): number => Date.parse(isoText);
