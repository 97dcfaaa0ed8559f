import { describe, expect, it } from 'vitest';
import { bucketOf, LazyMap } from '../../src/sandbox/store/lazy-map.js';
import { generateCvu } from '../../src/core/cvu.js';
import { seededIds } from '../../src/core/ids.js';

/** A LazyMap over `entries` in `buckets` buckets, counting the buckets read. */
function stored(entries: [string, unknown][], buckets = 4) {
  const reads: number[] = [];
  const map = new LazyMap<string, unknown>({
    buckets,
    read: (bucket) => {
      reads.push(bucket);
      return entries.filter(([key]) => bucketOf(key, buckets) === bucket) as [string, never][];
    },
  });
  return { map, reads };
}

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
