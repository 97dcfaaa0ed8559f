/** Randomness, injected: UUIDs for records and digits for CVUs and aliases. */
export interface IdSource {
  uuid(): string;
  /** An integer in [0, max). */
  int(max: number): number;
}

/** A seeded PRNG (mulberry32): numbers in [0, 1), the same for the same seed. */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    const drawn = mulberry32Step(state);
    state = drawn.state;
    return drawn.value;
  };
}

/** One draw of mulberry32 from its whole state (one 32-bit number), and the state after it: a state can be stored. */
export function mulberry32Step(state: number): { value: number; state: number } {
  const next = (state + 0x6d2b79f5) >>> 0;
  let t = Math.imul(next ^ (next >>> 15), next | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return { value: ((t ^ (t >>> 14)) >>> 0) / 4294967296, state: next };
}

/** A seeded source that gives the same ids for the same seed: for tests and replays. */
export function seededIds(seed = 1): IdSource {
  const next = mulberry32(seed);
  const hex = (n: number) => Array.from({ length: n }, () => Math.floor(next() * 16).toString(16)).join('');
  return {
    int: (max) => Math.floor(next() * max),
    uuid: () => {
      const variant = (8 + Math.floor(next() * 4)).toString(16);
      return `${hex(8)}-${hex(4)}-4${hex(3)}-${variant}${hex(3)}-${hex(12)}`;
    },
  };
}

export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
