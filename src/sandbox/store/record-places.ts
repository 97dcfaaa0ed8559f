import { KeyFilter } from './key-filter.js';
import { bucketOf, bucketsFor, hashOf } from './lazy-map.js';

/**
 * Where a snapshot write put a table's records, in its order: the byte range of its record lines, and each record's
 * value. In a batch of the delta file, a record gone has length -1 (see `appendDelta`).
 */
export interface TablePlacement {
  start: number;
  end: number;
  ids: string[];
  offsets: number[];
  lengths: number[];
}

/** The places of the records whose ids fall in one bucket, in their table's order. */
export interface PlacesBucket {
  ids: string[];
  offsets: number[];
  lengths: number[];
  /** Each id's index in `ids`, made when the bucket is first asked for an id (see `indexIn`). */
  byId?: Map<string, number>;
}

/**
 * Where an id is in a bucket (-1: not there). A bucket asked keeps a map of its ids: it is asked again and again (a
 * fold names records by their positions, `placesRef`), and searching its list each time was a fifth of a create's CPU
 * at 300,000 payments, when new ids were asked too (the filter answers for those now).
 */
function indexIn(bucket: PlacesBucket, id: string): number {
  bucket.byId ??= new Map(bucket.ids.map((known, i) => [known, i]));
  return bucket.byId.get(id) ?? -1;
}

const splits = new WeakMap<TablePlacement, PlacesBucket[]>();

/**
 * A table's records split in buckets by `bucketOf(id)`, each in file order: made once per placement (in `buckets`
 * buckets, the first time), so the tables a fold reads from next (`rebase`) and its index file share them.
 */
export function bucketed(placement: TablePlacement, buckets = bucketsFor(placement.ids.length)): PlacesBucket[] {
  let split = splits.get(placement);
  if (split) return split;
  const { ids, offsets, lengths } = placement;
  split = Array.from({ length: buckets }, (): PlacesBucket => ({ ids: [], offsets: [], lengths: [] }));
  for (let i = 0; i < ids.length; i++) {
    const bucket = split[bucketOf(ids[i]!, split.length)]!;
    bucket.ids.push(ids[i]!);
    bucket.offsets.push(offsets[i]!);
    bucket.lengths.push(lengths[i]!);
  }
  splits.set(placement, split);
  return split;
}

const filters = new WeakMap<TablePlacement, KeyFilter>();

/** The ids a placement may hold (see `KeyFilter`), made once per placement, as `bucketed`'s buckets are. */
export function filterOf(placement: TablePlacement): KeyFilter {
  let filter = filters.get(placement);
  if (!filter) filters.set(placement, (filter = KeyFilter.of(placement.ids)));
  return filter;
}

/**
 * A bucket as the index file keeps it: `[ids, offsets, lengths]`, each offset but the first as the step from the one
 * before (a few digits, not the ten of a place in a large snapshot).
 */
export const bucketText = ({ ids, offsets, lengths }: PlacesBucket): string =>
  JSON.stringify([ids, offsets.map((at, i) => (i === 0 ? at : at - offsets[i - 1]!)), lengths]);

export function parseBucket(text: string): PlacesBucket {
  const [ids, steps, lengths] = JSON.parse(text) as [string[], number[], number[]];
  for (let i = 1; i < steps.length; i++) steps[i]! += steps[i - 1]!;
  return { ids, offsets: steps, lengths };
}

/**
 * Where a table's records sit in the snapshot: asking for one reads its bucket, when first needed (a few hundred ids,
 * no map of them all), unless `filter` tells the id is not there (a new one). A record is also known by
 * its position, its bucket and its index there as one number, which the index file writes in place of its id (see
 * `position`).
 */
export class Places {
  private readonly split: (PlacesBucket | undefined)[];
  /** Buckets before this one have all been read. */
  private cursor = 0;

  constructor(
    readonly buckets: number,
    private source: (bucket: number) => PlacesBucket,
    readonly filter: KeyFilter,
  ) {
    this.split = new Array<PlacesBucket | undefined>(buckets);
  }

  /** No places: a table the snapshot does not hold. */
  static empty(): Places {
    return new Places(1, () => ({ ids: [], offsets: [], lengths: [] }), KeyFilter.of([]));
  }

  /** Places kept in memory (a snapshot this process just wrote). */
  static of(placement: TablePlacement): Places {
    const split = bucketed(placement);
    return new Places(split.length, (bucket) => split[bucket]!, filterOf(placement));
  }

  private bucket(bucket: number): PlacesBucket {
    return (this.split[bucket] ??= this.source(bucket));
  }

  /**
   * Reads the buckets not read yet from `source` from now on: the same places, as a newer index file holds them, so
   * that the one they were read from can be let go (a fold that leaves the data file as it is copies its places).
   */
  readFrom(source: (bucket: number) => PlacesBucket): void {
    this.source = source;
  }

  /** A record's value as [byte offset, byte length], if the snapshot holds it. */
  get(id: string): [number, number] | undefined {
    const hash = hashOf(id);
    if (!this.filter.mayHave(id, hash)) return undefined;
    const bucket = this.bucket(hash % this.buckets);
    const at = indexIn(bucket, id);
    return at < 0 ? undefined : [bucket.offsets[at]!, bucket.lengths[at]!];
  }

  has(id: string): boolean {
    return this.position(id) >= 0;
  }

  /** How many records a bucket holds. */
  size(bucket: number): number {
    return this.bucket(bucket).ids.length;
  }

  /** A record's position: its index in its bucket times the buckets, plus its bucket (-1 if it is not here). */
  position(id: string, hash = hashOf(id)): number {
    if (!this.filter.mayHave(id, hash)) return -1;
    const bucket = hash % this.buckets;
    const at = indexIn(this.bucket(bucket), id);
    return at < 0 ? -1 : at * this.buckets + bucket;
  }

  /** The id at a position (see `position`). */
  id(position: number): string | undefined {
    return this.bucket(position % this.buckets).ids[Math.floor(position / this.buckets)];
  }

  /**
   * Every record's id and place, in file order. Each record is sorted as one number, its offset shifted left past its
   * place among them all (exact while both fit a double's 53 bits, as they do below billions of records), natively
   * and with no pair or map per record: at 300,000 payments a fold held ~80 MB of them.
   */
  *inOrder(): Generator<[string, number, number]> {
    const ids: string[] = [];
    const offsets: number[] = [];
    const lengths: number[] = [];
    for (let bucket = 0; bucket < this.buckets; bucket++) {
      const read = this.bucket(bucket);
      for (let i = 0; i < read.ids.length; i++) {
        ids.push(read.ids[i]!);
        offsets.push(read.offsets[i]!);
        lengths.push(read.lengths[i]!);
      }
    }
    const shift = 2 ** Math.ceil(Math.log2(ids.length + 1));
    const order = offsets.every((at) => at * shift < 2 ** 53)
      ? Float64Array.from(offsets, (at, i) => at * shift + i)
          .sort()
          .map((key) => key % shift)
      : Uint32Array.from(offsets, (_, i) => i).sort((a, b) => offsets[a]! - offsets[b]!);
    for (const i of order) yield [ids[i]!, offsets[i]!, lengths[i]!];
  }

  /**
   * Whether each record here keeps its position (see `position`) among `split`, a later snapshot's places: none
   * left or moved, as many buckets, the records since only after. A fold then keeps the index file's refs to them as
   * they are (see `writeIndexSections`). Reads every bucket.
   */
  keptIn(split: PlacesBucket[]): boolean {
    if (split.length !== this.buckets) return false;
    for (let bucket = 0; bucket < this.buckets; bucket++) {
      const before = this.bucket(bucket).ids;
      const after = split[bucket]!.ids;
      if (before.length > after.length) return false;
      for (let i = 0; i < before.length; i++) if (before[i] !== after[i]) return false;
    }
    return true;
  }

  /** Reads one bucket not read yet; false once all are. For reading them all ahead of use, a bucket at a time. */
  readNext(): boolean {
    while (this.cursor < this.buckets && this.split[this.cursor]) this.cursor++;
    if (this.cursor === this.buckets) return false;
    this.bucket(this.cursor);
    return true;
  }
}
