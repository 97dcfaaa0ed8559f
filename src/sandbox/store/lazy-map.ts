import type { Places } from './record-places.js';

/** Where a `LazyMap`'s entries are kept: split in buckets by `bucketOf(key)`, each read only when first needed. */
export interface BucketSource<K, V> {
  buckets: number;
  read(bucket: number): [K, V][];
  /**
   * False when the bucket surely does not hold the key (true when it may): a key just made (a new payment's id) is
   * then known absent without reading and parsing its bucket.
   */
  mayHold?(bucket: number, key: K): boolean;
  /** The buckets as the index file writes them, for a fold that can keep them so (see `TakenMap.writtenBucket`). */
  written?: WrittenBuckets<K>;
}

/** A source's buckets as written: records named by refs to `places` (see `writeIndexSections`). */
export interface WrittenBuckets<K> {
  /** Each table's places in the snapshot the refs name records of. */
  places: readonly Places[];
  buckets: number;
  read(bucket: number): [unknown, unknown][];
  /** A key as the map holds it. */
  key(written: unknown): K;
}

/**
 * The bucket of a key among `buckets` (FNV-1a of its text, its high bits folded into the low ones, which alone depend
 * only on the low bits of each character: CVUs, whose digits' parity their check digits fix, filled only every other
 * bucket): the same for whoever writes and reads the buckets.
 */
export const bucketOf = (key: string | number, buckets: number): number => hashOf(key) % buckets;

/** What `bucketOf` takes the remainder of: one hash of a key for its bucket among any number of them. */
export function hashOf(key: string | number): number {
  const text = String(key);
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return (hash ^ (hash >>> 16)) >>> 0;
}

/** About how many entries share a bucket: a bucket is a fraction of a millisecond to read. */
const BUCKET = 512;

/** How many buckets `entries` entries are split in (a power of two). */
export const bucketsFor = (entries: number): number => 2 ** Math.ceil(Math.log2(Math.max(1, entries / BUCKET)));

/**
 * How many buckets `entries` entries are split in when they were split in `before` the last time: as many again while
 * that is within a factor of four of `bucketsFor` (a bucket of up to ~2,000 entries), so that what names an entry by its
 * bucket, the index file's refs, can be kept as it is (see `writeIndexSections`); else `bucketsFor`.
 */
export function bucketsKept(entries: number, before: number | undefined): number {
  const fit = bucketsFor(entries);
  return before !== undefined && before * 4 >= fit && before <= fit * 4 ? before : fit;
}

/**
 * A Map whose entries may still be in storage: the bucket of a key is read the first time that key is used, so
 * an index of 100,000 entries costs nothing until it is asked, and then only the bucket asked. Without a source
 * it is a plain Map. Reading a key not set since, or deleting one, reads its bucket first, unless the source can tell
 * the bucket does not hold it (`mayHold`); setting one does not (a start replaying a journal sets many keys), so a
 * bucket read later leaves out the keys set since. Iterating reads every bucket.
 */
export class LazyMap<K extends string | number, V> {
  private readonly map = new Map<K, V>();
  private unread: Set<number>;
  /** Items appended to lists whose bucket was unread, by bucket: they go after what the bucket holds. */
  private readonly appended = new Map<number, Map<K, unknown[]>>();

  constructor(private source?: BucketSource<K, V>) {
    this.unread = new Set(source ? Array.from({ length: source.buckets }, (_, i) => i) : []);
  }

  /**
   * Reads the bucket of `key` if unread. A key set since is whole here (a bucket read later leaves it as it is), so
   * reading it needs no bucket; deleting it does, or the bucket read later would put its old value back.
   */
  private need(key: K, deleting = false): void {
    if (this.unread.size === 0 || (!deleting && this.map.has(key))) return;
    const bucket = bucketOf(key, this.source!.buckets);
    if (!this.unread.has(bucket)) return;
    if (this.source!.mayHold?.(bucket, key) ?? true) {
      this.read(bucket);
      return;
    }
    // Not in the bucket: what was appended to its list since is the whole list.
    const lists = this.appended.get(bucket);
    const items = lists?.get(key);
    if (items) {
      this.map.set(key, items as V);
      lists!.delete(key);
    }
  }

  private read(bucket: number): void {
    this.unread.delete(bucket);
    for (const [k, v] of this.source!.read(bucket)) if (!this.map.has(k)) this.map.set(k, v);
    for (const [k, items] of this.appended.get(bucket) ?? []) {
      const list = this.map.get(k) as unknown[] | undefined;
      this.map.set(k, (list ? list.concat(items) : items) as V);
    }
    this.appended.delete(bucket);
    if (this.unread.size === 0) this.source = undefined; // all read: the storage can go
  }

  get(key: K): V | undefined {
    this.need(key);
    return this.map.get(key);
  }

  has(key: K): boolean {
    this.need(key);
    return this.map.has(key);
  }

  set(key: K, value: V): this {
    this.map.set(key, value);
    if (this.appended.size > 0) this.appended.get(bucketOf(key, this.source!.buckets))?.delete(key); // replaced whole
    return this;
  }

  /** Appends to the list under `key` (a list index), leaving its bucket unread if it is. */
  append(key: K, item: unknown): void {
    const list = this.map.get(key) as unknown[] | undefined;
    if (list) list.push(item);
    else if (this.unread.size === 0 || !this.unread.has(bucketOf(key, this.source!.buckets))) this.map.set(key, [item] as V);
    else {
      const bucket = bucketOf(key, this.source!.buckets);
      let lists = this.appended.get(bucket);
      if (!lists) this.appended.set(bucket, (lists = new Map()));
      const pending = lists.get(key);
      if (pending) pending.push(item);
      else lists.set(key, [item]);
    }
  }

  delete(key: K): boolean {
    this.need(key, true);
    return this.map.delete(key);
  }

  /** Reads one bucket not read yet; false once all are. For reading them all ahead of use, a bucket at a time. */
  readNext(): boolean {
    const [bucket] = this.unread;
    if (bucket === undefined) return false;
    this.read(bucket);
    return true;
  }

  entries(): IterableIterator<[K, V]> {
    while (this.readNext());
    return this.map.entries();
  }

  /**
   * The entries as they are now, for a fold, without reading the buckets not read yet: those are read when the fold
   * writes them (`TakenMap.bucket`), as they are now. Reading them all here held the event loop for seconds at 300,000
   * payments, and kept them all in memory from then on.
   */
  taken(): TakenMap<K, V> {
    const unread = [...this.unread];
    const appended = new Map<number, Map<K, unknown[]>>();
    for (const [bucket, lists] of this.appended) appended.set(bucket, new Map([...lists].map(([key, items]) => [key, [...items]])));
    // A key set since in a bucket not read is whole here: what the bucket holds under it is older.
    const since = new Set<K>();
    if (unread.length > 0) for (const key of this.map.keys()) if (this.unread.has(bucketOf(key, this.source!.buckets))) since.add(key);
    return new TakenMap([...this.map.keys()], [...this.map.values()], this.source, unread, appended, since);
  }
}

/** A `LazyMap`'s entries as they were when taken: those it held then, and its buckets not read then. */
export class TakenMap<K, V> {
  constructor(
    /**
     * The entries held when taken, as their keys and their values (which may be live lists): two arrays, not a pair
     * each, until the fold writes the map (`held`): at 300,000 payments the pairs of every map at once were ~100 MB.
     */
    readonly keys: K[],
    readonly values: V[],
    private readonly source: BucketSource<K, V> | undefined,
    /** The buckets not read when taken. */
    readonly unread: number[],
    private readonly appended: Map<number, Map<K, unknown[]>>,
    private readonly since: Set<K>,
  ) {}

  /** The entries held when taken, as new pairs. */
  held(): [K, V][] {
    return this.keys.map((key, i) => [key, this.values[i]!]);
  }

  /** What a bucket not read when taken held then: its entries, with what was appended to their lists since. */
  bucket(bucket: number): [K, V][] {
    return this.merged(bucket, this.source!.read(bucket), (key) => key as K, (value) => value) as [K, V][];
  }

  /** The buckets as written, if the source has them (see `BucketSource.written`). */
  get written(): WrittenBuckets<K> | undefined {
    return this.source?.written;
  }

  /**
   * `bucket` as the index file writes it: what it held as written (its strings not read back to ids), what was
   * appended since through `short` (which writes it so).
   */
  writtenBucket(bucket: number, short: (value: unknown) => unknown): [unknown, unknown][] {
    const { read, key } = this.written!;
    return this.merged(bucket, read(bucket), key, short);
  }

  private merged(
    bucket: number,
    held: [unknown, unknown][],
    keyOf: (held: unknown) => K,
    short: (value: unknown) => unknown,
  ): [unknown, unknown][] {
    const entries: [unknown, unknown][] = [];
    const lists = this.appended.get(bucket);
    for (const entry of held) {
      const key = keyOf(entry[0]);
      if (this.since.has(key)) continue;
      const items = lists?.get(key);
      if (!items) {
        entries.push(entry); // as read: no new pair for each of the millions at 300,000 payments
        continue;
      }
      lists!.delete(key);
      entries.push([entry[0], (entry[1] as unknown[]).concat(short(items))]);
    }
    // Lists the bucket did not hold: what was appended is the whole list.
    for (const [key, items] of lists ?? []) entries.push([short(key), short(items)]);
    return entries;
  }
}
