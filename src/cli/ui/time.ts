/** A span of seconds for people, in its two largest units: `45s`, `29m59s`, `1h05m`, `2d03h`. */
export function span(seconds: number): string {
  const units: [string, number][] = [
    ['d', Math.floor(seconds / 86400)],
    ['h', Math.floor((seconds % 86400) / 3600)],
    ['m', Math.floor((seconds % 3600) / 60)],
    ['s', Math.floor(seconds % 60)],
  ];
  const first = units.findIndex(([, n]) => n > 0);
  if (first < 0) return '0s';
  const [[unit, n], next] = [units[first]!, units[first + 1]];
  return next ? `${n}${unit}${String(next[1]).padStart(2, '0')}${next[0]}` : `${n}${unit}`;
}

/** Time left until `expiresAt` by the sandbox clock; `due` once past (the expiry is on its way). */
export function expiresIn(expiresAt: string, nowMs: number): string {
  const seconds = Math.ceil((Date.parse(expiresAt) - nowMs) / 1000);
  return seconds <= 0 ? 'due' : span(seconds);
}
