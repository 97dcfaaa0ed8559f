/** Time as the core writes and reads it: ISO 8601 text, milliseconds, and the injected source of real time. */

/** The source of real time, injected so tests can pin and move it. */
export interface WallClock {
  now(): number;
}

/** The last two instants `iso` wrote, newest first: a write's times are one or two instants (now, an expiry). */
let lastMs = Number.NaN;
let lastText = '';
let beforeMs = Number.NaN;
let beforeText = '';

export const iso = (ms: number): string => {
  if (ms === lastMs) return lastText;
  if (ms === beforeMs) return beforeText;
  const text = new Date(ms).toISOString();
  beforeMs = lastMs;
  beforeText = lastText;
  lastMs = ms;
  lastText = text;
  return text;
};

export const ms = (isoText: string): number => Date.parse(isoText);
