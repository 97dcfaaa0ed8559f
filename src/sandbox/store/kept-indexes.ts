import type { Indexes, RecordChange } from '../../core/index.js';
import { LazyMap, type BucketSource, type TakenMap } from './lazy-map.js';

/** An account's indexes as the index file keeps them: maps as entries (their buckets not read yet, read when written), the rest as JSON. */
export interface StoredIndexes {
  maps: Record<string, TakenMap<string | number, unknown>>;
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
export const STORED_INDEXES_VERSION = 7;

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
    private readonly source?: IndexSource,
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
   * The indexes as they are now, for the index file (read back through an `IndexSource`): each map's entries held (its
   * keys and values, the lists among them still the live ones) and its buckets not read yet as they are now.
   */
  stored(): StoredIndexes {
    return {
      maps: Object.fromEntries([...this.maps].map(([name, map]) => [name, map.taken()])),
      values: Object.fromEntries([...this.values].map(([name, save]) => [name, save()])),
    };
  }

  /** Reads the buckets not read yet, one a step, so they can be read ahead of use when the server is idle. */
  *warming(): Generator<void> {
    for (const map of this.maps.values()) while (map.readNext()) yield;
  }
}
