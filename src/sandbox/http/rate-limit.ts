/**
 * A fixed one-minute window per API key, on real time (rate limits are about the caller, not the sandbox clock). Only
 * the current minute's counts are kept: a key costs nothing once its minute is over.
 */
export function rateLimiter(limit: number, now: () => number) {
  const MINUTE = 60_000;
  let minute = 0;
  let counts = new Map<string, number>();
  return (key: string) => {
    const at = now();
    const start = Math.floor(at / MINUTE) * MINUTE;
    if (start !== minute) {
      minute = start;
      counts = new Map();
    }
    const count = (counts.get(key) ?? 0) + 1;
    counts.set(key, count);
    const headers = {
      'X-RateLimit-Limit': String(limit),
      'X-RateLimit-Remaining': String(Math.max(limit - count, 0)),
      'X-RateLimit-Reset': String((start + MINUTE) / 1000),
    };
    return { allowed: count <= limit, retryAfter: Math.max(Math.ceil((start + MINUTE - at) / 1000), 1), headers };
  };
}

export type RateLimiter = ReturnType<typeof rateLimiter>;
