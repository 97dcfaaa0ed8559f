import { describe, expect, it } from 'vitest';
import { KeyFilter } from '../../src/sandbox/store/key-filter.js';
import { applyChanges, bucketOf, bucketsFor, bucketsKept, LazyMap, type BucketSource } from '../../src/sandbox/store/lazy-map.js';
import { generateCvu } from '../../src/core/cvu.js';
import { seededIds } from '../../src/core/ids.js';

/**
 * A LazyMap over `entries` in `buckets` buckets, counting the buckets read; `knows`: it can tell a key is not stored;
 * `written`: as an index file wrote them (the next fold adds its changes to them), holding about `written` entries.
 */
function stored(entries: [string, unknown][], buckets = 4, knows = false, written?: number) {
  const reads: number[] = [];
  const map = new LazyMap<string, unknown>(sourceOf(entries, buckets, reads, knows, written));
  return { map, reads };
}

function sourceOf(entries: [string, unknown][], buckets: number, reads: number[] = [], knows = false, written?: number): BucketSource<string, unknown> {
  // Each read its own copy, as a bucket parsed again.
  const inBucket = (bucket: number) => structuredClone(entries.filter(([key]) => bucketOf(key, buckets) === bucket));
  return {
    buckets,
    read: (bucket) => {
      reads.push(bucket);
      return inBucket(bucket) as [string, never][];
    },
    ...(knows && { mayHold: (key: string) => entries.some(([stored]) => stored === key) }),
    ...(written !== undefined && {
      written: { buckets, entries: written, filter: KeyFilter.of(entries.map(([key]) => key)), places: [], segments: () => Array.from({ length: buckets }, (_, bucket) => [Buffer.from(JSON.stringify(inBucket(bucket)))]), read: inBucket },
    }),
  };
}

describe('LazyMap: a key its bucket surely does not hold', () => {
  it('may be there (mayHave) without reading a bucket: true for a stored key, false for a new one, true for one appended to', () => {
    const { map, reads } = stored([['old', ['x']]], 1, true);
    map.append('fresh', 'a');
    expect([map.mayHave('old'), map.mayHave('new'), map.mayHave('fresh')]).toEqual([true, false, true]);
    expect(reads).toEqual([]);
    // A source that cannot tell: the bucket is read to know.
    const blind = stored([['old', 1]], 1);
    expect([blind.map.mayHave('new'), blind.map.mayHave('old')]).toEqual([false, true]);
    expect(blind.reads).toEqual([0]);
  });

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

describe('LazyMap: what a fold takes', () => {
  const entries: [string, unknown][] = Array.from({ length: 24 }, (_, i) => [`k${i}`, i % 2 === 0 ? [`item${i}`] : i]);
  const unread = (key: string) => bucketOf(key, 4) !== bucketOf('k0', 4);
  const list = entries.find(([key, value]) => Array.isArray(value) && unread(key))![0];
  const readList = entries.find(([key, value]) => Array.isArray(value) && !unread(key) && key !== 'k0')![0];
  const set = entries.find(([key, value]) => !Array.isArray(value) && unread(key))![0];
  const gone = entries.find(([key, value]) => !Array.isArray(value) && key !== set)![0];
  const fresh = Array.from({ length: 50 }, (_, i) => `new-list-${i}`).find(unread)!;

  /** A map written by an index file, and a plain Map, after the same writes: each kind of change, in read and unread buckets. */
  function changed() {
    const { map, reads } = stored(entries, 4, false, entries.length);
    const plain = new Map(structuredClone(entries));
    for (const m of [map, plain]) {
      m.get('k0'); // reads its bucket
      m.set(set, 'set since');
      if (m instanceof LazyMap) for (const [key, item] of [[list, 'appended'], [readList, 'to a read list'], [fresh, 'first']] as const) m.append(key, item);
      else for (const [key, item] of [[list, 'appended'], [readList, 'to a read list'], [fresh, 'first']] as const) m.set(key, [...((m.get(key) as unknown[]) ?? []), item]);
      m.set('new-key', 42);
      m.delete(gone);
    }
    return { map, plain, reads };
  }

  it('takes what changed since the index file, as it is now, reading no bucket: applied to what it holds, the map as it is', () => {
    const { map, plain, reads } = changed();
    const before = reads.length;
    const taken = map.taken();
    expect(reads.length, 'taking reads no bucket').toBe(before);
    expect(taken.whole).toBeNull();
    expect(new Map(taken.changes.map((change) => [change[0], change]))).toEqual(
      new Map<string, unknown[]>([
        [set, [set, 'set since']],
        [list, [list, ['appended'], 1]],
        [readList, [readList, ['to a read list'], 1]],
        [fresh, [fresh, ['first'], 1]],
        ['new-key', ['new-key', 42]],
        [gone, [gone]],
      ]),
    );
    expect(new Map(applyChanges(structuredClone(entries), taken.changes))).toEqual(plain);
    // Later changes do not reach what was taken.
    map.append(readList, 'later');
    map.set('new-key', 43);
    expect(taken.changes.find(([key]) => key === readList)).toEqual([readList, ['to a read list'], 1]);
    expect(taken.changes.find(([key]) => key === 'new-key')).toEqual(['new-key', 42]);
  });

  it('takes next only what changed since the fold that took last; what a failed fold took, again, before what came after', () => {
    const { map, plain } = changed();
    const first = map.taken();
    map.append(list, 'after');
    plain.set(list, [...(plain.get(list) as unknown[]), 'after']);
    map.unfolded(true); // the fold failed: the index file is the one before it
    const again = map.taken();
    expect(again.changes.find(([key]) => key === list)).toEqual([list, ['appended', 'after'], 1]);
    expect(new Map(applyChanges(structuredClone(entries), again.changes))).toEqual(plain);
    // This one went through: the next fold adds to the file it wrote.
    const folded = applyChanges(structuredClone(entries), again.changes) as [string, unknown][];
    map.folded(sourceOf(folded, 4, [], false, folded.length));
    map.set('k1', 'last');
    expect(map.taken().changes).toEqual([['k1', 'last']]);
    expect(first.changes.length).toBe(6);
  });

  it('after a fold, reads its unread buckets from the index file that fold wrote: what was appended before, once', () => {
    const { map, reads } = stored(entries, 4, false, entries.length);
    map.append(list, 'before');
    const taken = map.taken();
    map.append(list, 'after');
    const folded = applyChanges(structuredClone(entries), taken.changes) as [string, unknown][];
    const newReads: number[] = [];
    map.folded(sourceOf(folded, 4, newReads, false, folded.length));
    expect(reads, 'nothing read from the index file before it').toEqual([]);
    expect(map.get(list)).toEqual([entries.find(([key]) => key === list)![1]].flat().concat('before', 'after'));
    expect(newReads).toEqual([bucketOf(list, 4)]);
  });

  it('is taken whole, reading every bucket, with no index file to add to, or once it outgrew its buckets four times over', () => {
    const plain = new LazyMap<string, unknown>();
    plain.set('a', [1]);
    const whole = plain.taken();
    expect([whole.whole, whole.written]).toEqual([[['a', [1]]], undefined]);
    (whole.whole![0]![1] as number[]).push(2);
    expect(plain.get('a'), 'a copy').toEqual([1]);

    const { map, reads } = stored(entries, 4, false, 8_000); // 4 buckets fit up to 8,192 entries
    for (let i = 0; i < 1_000; i++) map.set(`more${i}`, i);
    const grown = map.taken();
    expect(new Set(reads)).toEqual(new Set([0, 1, 2, 3]));
    expect(grown.whole).toHaveLength(entries.length + 1_000);
    expect(grown.entries).toBe(entries.length + 1_000);
  });
});
