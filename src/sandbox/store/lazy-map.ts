import type { KeyFilter } from './key-filter.js';
import type { Places } from './record-places.js';

/** Where a `LazyMap`'s entries are kept: split in buckets by `bucketOf(key)`, each read only when first needed. */
export interface BucketSource<K, V> {
  buckets: number;
  read(bucket: number): [K, V][];
  /**
   * False when the key is surely not stored (true when it may be): a key just made (a new payment's id) is then known
   * absent without reading and parsing its bucket (see `KeyFilter`).
   */
  mayHold?(key: K): boolean;
  /** The buckets as the index file wrote them, for the next fold to copy what did not change (see `WrittenMap`). */
  written?: WrittenMap<K>;
}

/**
 * A change to a map, as a delta of the index file writes it: `[key, value]` set (so a bucket's entries read as changes
 * set them all), `[key]` deleted, `[key, items, 1]` items appended to the list under the key.
 */
export type MapChange<K> = [K, unknown] | [K] | [K, unknown[], 1];

/**
 * A map's buckets as the last index file wrote them: each a base (its entries, records named by refs to `places`) and
 * the deltas written by the folds since (the changes, ids as they are), which a fold copies as they are, adding a delta
 * for what changed since (see `writeIndexSections`).
 */
export interface WrittenMap<K> {
  buckets: number;
  /** About how many entries it holds: exact when written whole, counting each key set since as a new one. */
  entries: number;
  /** The keys it may hold: every key written in it (see `KeyFilter`). */
  filter: KeyFilter;
  /** Each table's places in the snapshot the refs name records of. */
  places: readonly Places[];
  /** Every bucket as written, read now: its base, then its deltas, oldest first. */
  segments(): Buffer[][];
  /** A bucket's entries: its base with its deltas applied, keys as the map holds them. */
  read(bucket: number): [K, unknown][];
}

/** `entries` with `changes` applied in order (a new array; `entries` itself when there are none). */
export function applyChanges<K>(entries: [K, unknown][], changes: readonly MapChange<K>[]): [K, unknown][] {
  if (changes.length === 0) return entries;
  const map = new Map(entries);
  for (const change of changes) {
    if (change.length === 1) map.delete(change[0]);
    else if (change.length === 3) map.set(change[0], ((map.get(change[0]) as unknown[] | undefined) ?? []).concat(change[1]));
    else map.set(change[0], change[1]);
  }
  return [...map];
}

/** A value as it is now, for a fold writing it later while the live one changes: arrays and objects copied. */
export const copied = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map((item) => (typeof item === 'object' ? copied(item) : item))
    : value !== null && typeof value === 'object'
      ? Object.fromEntries(Object.entries(value).map(([key, item]) => [key, copied(item)]))
      : value;

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

/** A key set (or deleted) since the changes were last taken: its value now is what to write. */
const WHOLE = 0;
/** What changed under a key since the changes were last taken: set whole, or these items appended to its list. */
type Changed = typeof WHOLE | unknown[];

/**
 * A Map whose entries may still be in storage: the bucket of a key is read the first time that key is used, so
 * an index of 100,000 entries costs nothing until it is asked, and then only the bucket asked. Without a source
 * it is a plain Map. Reading a key not set since, or deleting one, reads its bucket first, unless the source can tell
 * the bucket does not hold it (`mayHold`); setting one does not (a start replaying a journal sets many keys), so a
 * bucket read later leaves out the keys set since. Iterating reads every bucket.
 *
 * It also keeps what changed since a fold last took its changes (`taken`), key by key, so the fold writes only that:
 * a list changed in place must be set again (see `Index`).
 */
export class LazyMap<K extends string | number, V> {
  private readonly map = new Map<K, V>();
  private unread: Set<number>;
  /** Items appended to lists whose bucket was unread, by bucket: they go after what the bucket holds. */
  private readonly appended = new Map<number, Map<K, unknown[]>>();
  /** The buckets as the last index file wrote them (none: the next fold writes the map whole). */
  private written: WrittenMap<K> | undefined;
  private changed = new Map<K, Changed>();
  /** What the fold under way took: its changes, and the lists appended to in unread buckets, with their lengths then. */
  private taking: { changed: Map<K, Changed>; appended: [number, K, unknown[], number][] } | null = null;

  constructor(private source?: BucketSource<K, V>) {
    this.unread = new Set(source ? Array.from({ length: source.buckets }, (_, i) => i) : []);
    this.written = source?.written;
  }

  /**
   * Reads the bucket of `key` if unread. A key set since is whole here (a bucket read later leaves it as it is), so
   * reading it needs no bucket; deleting it does, or the bucket read later would put its old value back.
   */
  private need(key: K, deleting = false): void {
    if (this.unread.size === 0 || (!deleting && this.map.has(key))) return;
    const bucket = bucketOf(key, this.source!.buckets);
    if (!this.unread.has(bucket)) return;
    if (this.source!.mayHold?.(key) ?? true) {
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

  /** `Index.mayHave`: true for a key of an unread bucket that the source cannot tell is not there, without reading it. */
  mayHave(key: K): boolean {
    if (this.map.has(key)) return true;
    const bucket = this.unread.size === 0 ? -1 : bucketOf(key, this.source!.buckets);
    if (!this.unread.has(bucket)) return false;
    if (!this.source!.mayHold) return this.has(key);
    return this.source!.mayHold(key) || this.appended.get(bucket)?.has(key) === true;
  }

  set(key: K, value: V): this {
    this.map.set(key, value);
    this.changed.set(key, WHOLE);
    if (this.appended.size > 0) this.appended.get(bucketOf(key, this.source!.buckets))?.delete(key); // replaced whole
    return this;
  }

  /** Appends to the list under `key` (a list index), leaving its bucket unread if it is. */
  append(key: K, item: unknown): void {
    const changed = this.changed.get(key);
    if (changed === undefined) this.changed.set(key, [item]);
    else if (changed !== WHOLE) changed.push(item);
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
    const had = this.map.delete(key);
    if (had) this.changed.set(key, WHOLE);
    return had;
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
   * For a fold: what changed since the last fold took it, as it is now, reading no bucket; or, when there is no index
   * file to add those changes to (or its buckets no longer fit the map), every entry, reading the buckets not read yet.
   * Until the fold says how it went (`folded`, `unfolded`), later changes are kept apart.
   */
  taken(): TakenMap<K> {
    const changed = this.changed;
    this.changed = new Map();
    const changes: MapChange<K>[] = [];
    let added = 0;
    for (const [key, change] of changed) {
      if (change !== WHOLE) changes.push([key, change.slice(), 1]);
      else if (this.map.has(key)) changes.push([key, copied(this.map.get(key))]);
      else changes.push([key]);
      added += changes.at(-1)!.length === 1 ? -1 : 1;
    }
    const appended: [number, K, unknown[], number][] = [];
    for (const [bucket, lists] of this.appended) for (const [key, items] of lists) appended.push([bucket, key, items, items.length]);
    this.taking = { changed, appended };
    const written = this.written;
    const entries = written ? written.entries + added : this.map.size;
    if (written && bucketsKept(entries, written.buckets) === written.buckets) return { written, changes, entries, whole: null };
    // Written whole: rare once the map has an index file (it grew four times over), and held whole already without one.
    const whole = [...this.entries()].map(([key, value]): [K, unknown] => [key, copied(value)]);
    return { written: undefined, changes, entries: whole.length, whole };
  }

  /**
   * The fold that took the changes wrote them into the index file whose buckets `source` reads: the map reads its unread
   * buckets there from now on (what was appended to their lists before is there), and the next fold adds to them.
   */
  folded(source: BucketSource<K, V> | undefined): void {
    if (!source?.written) return this.unfolded(false);
    const taking = this.taking;
    this.taking = null;
    if (!taking) return;
    this.written = source.written;
    if (this.unread.size === 0) return;
    this.source = source; // as many buckets: a map read whole was not split anew (see `taken`)
    for (const [bucket, key, items, length] of taking.appended) {
      const lists = this.appended.get(bucket);
      if (lists?.get(key) !== items) continue; // read, or set whole, since
      items.splice(0, length);
      if (items.length === 0) lists.delete(key);
    }
  }

  /**
   * The fold that took the changes failed (`indexed`), or wrote no index file (the next fold writes the map whole): its
   * changes are changes again, before the later ones.
   */
  unfolded(indexed: boolean): void {
    const taking = this.taking;
    this.taking = null;
    if (!indexed) this.written = undefined;
    if (!taking) return;
    const later = this.changed;
    this.changed = taking.changed;
    for (const [key, change] of later) {
      const before = this.changed.get(key);
      if (before === undefined) this.changed.set(key, change);
      else if (before === WHOLE || change === WHOLE) this.changed.set(key, WHOLE);
      else this.changed.set(key, before.concat(change));
    }
  }
}

/** What a fold writes of a map (see `LazyMap.taken`). */
export interface TakenMap<K> {
  /** The buckets the last index file wrote, which this fold adds `changes` to; none when it writes `whole`. */
  written: WrittenMap<K> | undefined;
  changes: MapChange<K>[];
  /** About how many entries the map holds. */
  entries: number;
  whole: [K, unknown][] | null;
}
