import { describe, expect, it } from 'vitest';
import { bucketOf, bucketsFor, bucketsKept, LazyMap } from '../../src/sandbox/store/lazy-map.js';
import { generateCvu } from '../../src/core/cvu.js';
import { seededIds } from '../../src/core/ids.js';

/**
 * A LazyMap over `entries` in `buckets` buckets, counting the buckets read; `knows`: it can tell a key is not stored;
 * `written`: its buckets can also be read as an index file writes them, here each string with `w:` in front.
 */
function stored(entries: [string, unknown][], buckets = 4, knows = false, written = false) {
  const reads: number[] = [];
  const inBucket = (bucket: number) => entries.filter(([key]) => bucketOf(key, buckets) === bucket);
  const map = new LazyMap<string, unknown>({
    buckets,
    read: (bucket) => {
      reads.push(bucket);
      return inBucket(bucket) as [string, never][];
    },
    ...(knows && { mayHold: (_bucket, key) => entries.some(([stored]) => stored === key) }),
    ...(written && { written: { places: [], buckets, read: (bucket) => inBucket(bucket).map(writeAs), key: (key) => (key as string).slice(2) } }),
  });
  return { map, reads };
}

/** How `stored` writes strings (and a fold's `short`): with `w:` in front. */
const writeAs = (value: unknown): never =>
  (typeof value === 'string' ? `w:${value}` : Array.isArray(value) ? value.map(writeAs) : value) as never;

describe('LazyMap: a key its bucket surely does not hold', () => {
  it('is asked for, deleted or appended to without reading the bucket; a stored key still reads it', () => {
    const { map, reads } = stored([['old', ['x']]], 1, true);
    expect([map.get('new'), map.has('new'), map.delete('new')]).toEqual([undefined, false, false]);
    map.append('fresh', 'a');
    map.append('fresh', 'b');
    expect(map.get('fresh')).toEqual(['a', 'b']);
    expect(reads).toEqual([]);
    map.append('old', 'y');
    expect(map.get('old')).toEqual(['x', 'y']);
    expect(reads).toEqual([0]);
    expect(Object.fromEntries(map.entries())).toEqual({ old: ['x', 'y'], fresh: ['a', 'b'] });
  });
});

describe('LazyMap: writes that need not read', () => {
  it('a set reads no bucket, and a bucket read later does not bring back the older value', () => {
    const { map, reads } = stored([['a', 1], ['b', 2]]);
    map.set('a', 10);
    expect([map.get('a'), map.has('a')]).toEqual([10, true]); // set since: its bucket has nothing newer
    expect(reads).toEqual([]);
    expect([map.get('a'), map.get('b')]).toEqual([10, 2]);
    expect(Object.fromEntries(map.entries())).toEqual({ a: 10, b: 2 });
  });

  it('an append to an unread list reads nothing and lands after what the bucket holds, in order', () => {
    const { map, reads } = stored([['list', ['x']]]);
    map.append('list', 'y');
    map.append('list', 'z');
    map.append('fresh', 'only');
    expect(reads).toEqual([]);
    expect(map.get('list')).toEqual(['x', 'y', 'z']);
    expect(map.get('fresh')).toEqual(['only']);
    map.append('list', 'w'); // read now: appended in place
    expect(map.get('list')).toEqual(['x', 'y', 'z', 'w']);
  });

  it('a set after appends replaces the list whole; a delete reads the bucket and removes the key for good', () => {
    const { map } = stored([['list', ['x']], ['gone', 1]]);
    map.append('list', 'y');
    map.set('list', ['new']);
    expect(map.get('list')).toEqual(['new']);
    expect(map.delete('gone')).toBe(true);
    expect(map.has('gone')).toBe(false);
    expect([...map.entries()].map(([key]) => key).sort()).toEqual(['list']);
  });

  it('reading a key set since reads no bucket; deleting it does, so the bucket read later does not bring it back', () => {
    const { map, reads } = stored([['a', 1]], 1);
    map.set('a', 10);
    expect([map.get('a'), map.has('a')]).toEqual([10, true]);
    expect(reads).toEqual([]);
    expect(map.delete('a')).toBe(true);
    expect(reads).toEqual([0]);
    expect([map.get('a'), [...map.entries()]]).toEqual([undefined, []]);
  });
});

describe('bucketsKept', () => {
  it('keeps the buckets of the last time while within a factor of four of what the entries need, else fits them', () => {
    expect(bucketsFor(300_000)).toBe(1024);
    expect(bucketsKept(300_000, 512)).toBe(512); // grown from 250,000 entries: each bucket ~590
    expect(bucketsKept(300_000, 256)).toBe(256);
    expect(bucketsKept(300_000, 128)).toBe(1024);
    expect(bucketsKept(300_000, undefined)).toBe(1024);
    expect(bucketsKept(1_000, 8)).toBe(8);
    expect(bucketsKept(1_000, 16)).toBe(2);
  });
});

describe('bucketOf', () => {
  it('spreads CVUs over every bucket, about evenly (their check digits fix their digits’ parity)', () => {
    const ids = seededIds(7);
    const counts = new Array<number>(64).fill(0);
    for (let i = 0; i < 6400; i++) counts[bucketOf(generateCvu(ids), 64)]!++;
    expect(Math.min(...counts)).toBeGreaterThan(50);
    expect(Math.max(...counts)).toBeLessThan(150);
  });
});

describe('LazyMap: taken for a fold', () => {
  /**
   * A map over 24 stored entries, and its twin, after the same writes: a bucket read, and in buckets left unread a
   * stored key set since, a stored list appended to, a new list and a new key; then taken, and changed again.
   */
  function takenAfterWrites(written: boolean) {
    const entries: [string, unknown][] = Array.from({ length: 24 }, (_, i) => [`k${i}`, i % 2 === 0 ? [`item${i}`] : i]);
    const unread = (key: string) => bucketOf(key, 4) !== bucketOf('k0', 4);
    const list = entries.find(([key, value]) => Array.isArray(value) && unread(key))![0];
    const fresh = Array.from({ length: 50 }, (_, i) => `new-list-${i}`).find(unread)!;
    const set = entries.find(([key, value]) => !Array.isArray(value) && unread(key))![0];
    const ops = (map: LazyMap<string, unknown>) => {
      map.get('k0'); // reads its bucket
      map.set(set, 'set since');
      map.append(list, 'appended');
      map.append(fresh, 'first');
      map.set('new-key', 42);
    };
    // Each its own copy: a bucket read hands out its lists, which appends then grow in place.
    const { map, reads } = stored(structuredClone(entries), 4, false, written);
    const twin = stored(structuredClone(entries)).map;
    ops(map);
    ops(twin);
    const before = reads.length;
    const taken = map.taken();
    expect(reads.length, 'taking reads no bucket').toBe(before);
    expect(taken.unread.length).toBe(3);
    // The lists held are the live ones: a fold copies them in the same turn (`indexesTaken`).
    const held = taken.held().map(([key, value]): [string, unknown] => [key, Array.isArray(value) ? [...(value as unknown[])] : value]);
    // Changes after it was taken do not reach it.
    map.set(set, 'later');
    map.append(list, 'later');
    map.append(fresh, 'later');
    map.delete('k5');
    return { entries, list, fresh, taken, held, twin, reads: () => reads.length };
  }

  it('holds its entries as they were when taken, reading no bucket then; a bucket not read is read when asked, as it was', () => {
    const { entries, list, fresh, taken, held, twin } = takenAfterWrites(false);
    const whole = [...held, ...taken.unread.flatMap((bucket) => taken.bucket(bucket))];
    expect(whole.length, 'each key once').toBe(new Set(whole.map(([key]) => key)).size);
    expect(new Map(whole)).toEqual(new Map(twin.entries()));
    expect(new Map(whole).get(list)).toEqual([entries.find(([key]) => key === list)![1]].flat().concat('appended'));
    expect(new Map(whole).get(fresh)).toEqual(['first']);
  });

  it('a bucket not read comes as written, with what was set or appended since written so, each key once', () => {
    const { taken, held, twin, reads } = takenAfterWrites(true);
    const before = reads();
    const unread = taken.unread.flatMap((bucket) => taken.writtenBucket(bucket, writeAs));
    expect(reads(), 'no bucket read back to ids').toBe(before);
    expect(unread.every(([key]) => String(key).startsWith('w:'))).toBe(true);
    const whole = [...writeAs(held), ...unread] as [string, unknown][];
    expect(whole.length, 'each key once').toBe(new Set(whole.map(([key]) => key)).size);
    expect(new Map(whole)).toEqual(new Map(writeAs([...twin.entries()])));
  });
});
