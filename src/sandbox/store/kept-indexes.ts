import type { Indexes, RecordChange } from '../../core/index.js';
import { LazyMap, type BucketSource, type TakenMap } from './lazy-map.js';

/** An account's indexes for the index file: each map's changes since the last one (or all its entries), the rest as JSON. */
export interface StoredIndexes {
  maps: Record<string, TakenMap<string | number>>;
  values: Record<string, unknown>;
}

/** An account's indexes read back from the index file: each map's buckets are read when first used. */
export interface IndexSource {
  map(name: string): BucketSource<string | number, unknown> | undefined;
  value(name: string): unknown;
}

/**
 * The shape of `StoredIndexes` and of the index file that keeps them, bumped whenever either changes (the core's indexes,
 * how the file writes them): an index file of another version is not used, the start reads everything.
 */
export const STORED_INDEXES_VERSION = 11;

/**
 * The file engine's `Indexes`: LazyMaps over the index file's buckets (or empty, for an account the core indexes from
 * its records), remembered by name with their values so a fold can write them all to the next index file.
 */
export class KeptIndexes implements Indexes {
  readonly kept: boolean;
  private readonly maps = new Map<string, LazyMap<string | number, unknown>>();
  private readonly values = new Map<string, () => unknown>();

  /** `since`: the records changed after `source` was taken, replayed from the journal (see `Indexes.since`). */
  constructor(
    private source?: IndexSource,
    readonly since: readonly RecordChange[] = [],
  ) {
    this.kept = source !== undefined;
  }

  index<K extends string | number, V>(name: string): LazyMap<K, V> {
    const map = new LazyMap(this.source?.map(name) as BucketSource<K, V> | undefined);
    this.maps.set(name, map as LazyMap<string | number, unknown>);
    return map;
  }

  value<T>(name: string, revive: (kept: unknown) => T, save: (value: T) => unknown): T {
    const value = revive(this.source?.value(name));
    this.values.set(name, () => save(value));
    return value;
  }

  /**
   * The indexes as they are now, for the index file (read back through an `IndexSource`): what each map changed since the
   * last index file (see `LazyMap.taken`), and each value. Then `folded` or `unfolded` says how the fold went.
   */
  stored(): StoredIndexes {
    return {
      maps: Object.fromEntries([...this.maps].map(([name, map]) => [name, map.taken()])),
      values: Object.fromEntries([...this.values].map(([name, save]) => [name, save()])),
    };
  }

  /**
   * The fold that took them wrote the index file `source` reads: the maps read from it, and the next fold adds to it
   * (and the index file they were read from before can be let go).
   */
  folded(source: IndexSource | undefined): void {
    for (const [name, map] of this.maps) map.folded(source?.map(name));
    this.source = source;
  }

  /** The fold that took them failed (`indexed`: the last index file is still the one), or wrote no index file. */
  unfolded(indexed: boolean): void {
    for (const map of this.maps.values()) map.unfolded(indexed);
  }

  /** Reads the buckets not read yet, one a step, so they can be read ahead of use when the server is idle. */
  *warming(): Generator<void> {
    for (const map of this.maps.values()) while (map.readNext()) yield;
  }
}
