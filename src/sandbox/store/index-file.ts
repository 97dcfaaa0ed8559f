import { closeSync, existsSync, fstatSync, openSync, statSync } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { keyedByCaller, TABLES, type AccountState, type SandboxState } from '../../core/index.js';
import { crc32 } from 'node:zlib';
import { checkedLine, readLine } from './checked-line.js';
import { STORED_INDEXES_VERSION, type IndexSource, type StoredIndexes } from './kept-indexes.js';
import { applyChanges, bucketOf, bucketsFor, bucketsKept, copied, hashOf, type MapChange, type WrittenMap } from './lazy-map.js';
import { KeyFilter } from './key-filter.js';
import { bucketed, bucketText, filterOf, parseBucket, Places, type PlacesBucket, type TablePlacement } from './record-places.js';
import { addMembers, define, fileChecksum, readBytes, TABLE_PARSE, WRITE_CUT, type CopiedLines, type Placement, type TableEntries } from './snapshot-file.js';

/**
 * The index file (`<data file>.index`), written beside the snapshot on a clean stop so the next start need not read
 * every record: where each record's JSON sits in the snapshot, and each account's derived indexes (see
 * `StoredIndexes`). It holds sections of JSON, each read only when needed, then a newline and a header line saying
 * where each is (last, so the sections are written as they are made): a map's entries are split in buckets by
 * `bucketOf(key)`, so asking one key reads one bucket, and so are each table's places (see `Places`). It describes one snapshot, with the indexes as they were when that snapshot was taken: the
 * journal's changes since are replayed over them on start (see `fileStore`).
 *
 * A record's id is written once, in its table's places: the indexes name a record by its position there (see
 * `refs`), a few characters where an id takes 36.
 *
 * The header line carries its own checksum and one of the sections (see `checkedLine`), so an index damaged in any way
 * is not used: the start reads everything instead. The snapshot it describes is known by its generation, size and
 * modification time, and by its CRC32: on the same file (same inode and change time, which no edit keeps) the times
 * are trusted; on a copy that kept the times, or a file edited with its time put back, the snapshot is read once to
 * check its CRC32 (a fraction of the cost of reading everything), and an edited one is read whole.
 */
interface Header {
  /** `STORED_INDEXES_VERSION` when written. */
  version: number;
  /** The bytes of sections before the header line (a file of other length was cut, and is not used), and their CRC32. */
  length: number;
  sections: number;
  generation: number;
  /** Its size and modification time (matched within a millisecond: what a copy that keeps times keeps), and more. */
  snapshot: { size: number; mtimeMs: number; ino: number; ctimeMs: number; crc: number };
  /** The delta file beside the snapshot, if records were written there since (see `appendDelta`). */
  delta: DeltaStat | null;
  accounts: [string, AccountIndex][];
}

/** The delta file as an index file names it: its length and CRC32 (a longer file has a batch cut short after them), and its times then. */
export interface DeltaStat {
  length: number;
  crc: number;
  mtimeMs: number;
  ino: number;
  ctimeMs: number;
}

/** A section's byte offset and length. */
type Section = [number, number];

interface AccountIndex {
  /** The account's fields other than its tables (clock offset, hub). */
  head: Record<string, unknown>;
  /** Each table's record lines in the snapshot (a byte range) and its records' places, a `bucketText` per bucket. */
  tables: Record<string, TableIndex>;
  /** Each map's buckets, each a base and its deltas (see `WrittenMap`), about how many entries it holds, and its keys' `KeyFilter`. */
  maps: Record<string, { buckets: number; entries: number; filter: Section[]; sections: Section[][] }>;
  values: Record<string, Section>;
}

/**
 * A table's record lines in the snapshot (a byte range) and their places, and the places of its records in each batch
 * of the delta file (`deltas`, oldest first: a record written again is in a later one too, where it is now); each
 * places with the `KeyFilter` of their ids.
 */
interface TableIndex {
  start: number;
  end: number;
  buckets: number;
  sections: Section[];
  filter: Section[];
  deltas: { buckets: number; sections: Section[]; filter: Section[] }[];
}

/** Places as the last index file wrote them, to be copied as they are: its sections read when asked. */
export interface WrittenPlaces {
  places: Places;
  sections(): Buffer[];
}

/**
 * A table's places as the last index file wrote them, for a fold that leaves the snapshot as it is (see `DeltaFold`):
 * the snapshot's and each batch's of the delta file, copied as they are.
 */
export interface WrittenTable extends WrittenPlaces {
  start: number;
  end: number;
  deltas: WrittenPlaces[];
}

/**
 * A fold that leaves the snapshot as it is, the records written since appended to the delta file: each account's tables
 * as the last index file wrote them (none for an account new since), and where the batch it appended put each record.
 */
export interface DeltaFold {
  tables: Map<string, WrittenTable[]>;
  placement: Placement;
}

/** Sections are written in pieces of about this many characters. */
const WRITE_CHUNK = 1024 * 1024;

/** Every account's head and indexes, taken in the same turn as the snapshot's records (later changes do not reach them). */
export type IndexesTaken = [string, Record<string, unknown>, StoredIndexes][];

// The walks below take every string of the indexes written (millions at 300,000 payments): they recurse only into
// arrays and objects, never for a string or a number.

/** `value` with each string in it (in arrays and objects, replaced in place) mapped by `map`. */
function eachString(value: unknown, map: (text: string) => string): unknown {
  if (typeof value === 'string') return map(value);
  if (value !== null && typeof value === 'object') for (const steps = mapStrings(value, map); !steps.next().done; );
  return value;
}

/** `eachString`, awaiting `step` every `SLICE` strings: a fold maps the indexes beside requests. */
async function eachStringPausing(value: unknown, map: (text: string) => string, step: Step): Promise<unknown> {
  if (value === null || typeof value !== 'object') return eachString(value, map);
  for (const steps = mapStrings(value, map); !steps.next().done; ) await step();
  return value;
}

/**
 * Maps each string in an array or object, and in those it holds, in place, a step every `SLICE` strings. One loop
 * over a stack, not a call (or a generator) per array: a map's entries are hundreds of thousands of pairs.
 */
function* mapStrings(value: object, map: (text: string) => string): Generator<void> {
  const stack: object[] = [value];
  let n = 0;
  while (stack.length > 0) {
    const next = stack.pop()!;
    if (Array.isArray(next)) {
      for (let i = 0; i < next.length; i++) {
        const item: unknown = next[i];
        if (typeof item === 'string') {
          next[i] = map(item);
          if (++n % SLICE === 0) yield;
        } else if (item !== null && typeof item === 'object') stack.push(item);
      }
    } else {
      for (const [key, item] of Object.entries(next)) {
        if (typeof item === 'string') define(next, key, map(item));
        else if (item !== null && typeof item === 'object') stack.push(item);
      }
    }
  }
}

/**
 * How the index file writes a string in the indexes: a record's id as `~` and its ref, `(position * TABLES.length +
 * table)` in base 36, alone or after the `name:` prefix of a key (`expiry:<id>`), when that is shorter; any other
 * string as it is, but one that starts with `~` gets another in front.
 */
function refs(ref: (id: string) => string | undefined): (text: string) => string {
  return (text) => {
    if (text.charCodeAt(0) === TILDE) return `~${text}`;
    const whole = ref(text);
    if (whole !== undefined) return whole.length + 1 < text.length ? `~${whole}` : text;
    const colon = text.lastIndexOf(':');
    const last = colon > 0 ? ref(text.slice(colon + 1)) : undefined;
    return last !== undefined && last.length + 1 < text.length - colon - 1 ? `~${text.slice(0, colon + 1)}${last}` : text;
  };
}

/**
 * The ref of a record among a snapshot's places. Looked for in each table's bucket of places, first to last, so
 * an id that two tables hold names the first's record (either reads back the same id). Each bucket keeps a map of its
 * ids once asked, which the tables that read from this snapshot use too (see `Places`): no map of every id (~1M at
 * 300,000 payments, 0.8 s to make).
 */
function placesRef(places: readonly Places[]): (id: string) => string | undefined {
  return (id) => {
    const hash = hashOf(id);
    for (let table = 0; table < places.length; table++) {
      const position = places[table]!.position(id, hash);
      if (position >= 0) return (position * TABLES.length + table).toString(36);
    }
    return undefined;
  };
}

/**
 * The ref among `split` of a record new since `before`, the places of the last index file, which each record there kept
 * (the ids after those each bucket held then): a map of the records written since, not of them all.
 */
function newRecordsRef(before: readonly Places[], split: PlacesBucket[][]): (id: string) => string | undefined {
  const known = new Map<string, string>();
  // The last table first, so an id two tables hold names the first's record, as `placesRef` does.
  for (let table = split.length - 1; table >= 0; table--) {
    const buckets = split[table]!;
    for (let bucket = 0; bucket < buckets.length; bucket++) {
      const { ids } = buckets[bucket]!;
      for (let i = before[table]!.size(bucket); i < ids.length; i++) known.set(ids[i]!, ((i * buckets.length + bucket) * TABLES.length + table).toString(36));
    }
  }
  return (id) => known.get(id);
}

/** Reads back what `refs` wrote: each `~` string is the id it names. */
function ids(places: readonly Places[]): (text: string) => string {
  return (text) => {
    if (text.charCodeAt(0) !== TILDE) return text;
    if (text.charCodeAt(1) === TILDE) return text.slice(1);
    const n = refOf(text);
    const id = places[n % TABLES.length]?.id(Math.floor(n / TABLES.length));
    if (id === undefined) throw new Error(`the index file names no record at ${text}`);
    const colon = text.lastIndexOf(':');
    return colon < 0 ? id : text.slice(1, colon + 1) + id;
  };
}

/** The number a ref (`~` and base 36 digits, alone or after a `name:` prefix) stands for. */
function refOf(text: string): number {
  // Its digits read in place (no slice, no parseInt: there may be a few hundred thousand).
  let n = 0;
  for (let i = Math.max(text.lastIndexOf(':'), 0) + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    n = n * 36 + (c <= 0x39 ? c - 0x30 : c - 0x57);
  }
  return n;
}
const TILDE = 0x7e;
/** A fold copies the records not written since from the last snapshot in reads of this many bytes. */
const COPY_PIECE = 4 * 1024 * 1024;
/** A string as the index file writes it where ids keep their text: one starting with `~` gets another in front. */
const escaped = (text: string): string => (text.charCodeAt(0) === TILDE ? `~${text}` : text);

/**
 * A bucket's deltas are merged into a new base once they hold more than this many times the base's bytes (their ids
 * are whole, where the base's are refs of a few characters), or once there are this many: a bucket is read as its
 * base and every delta after it.
 */
const DELTAS_PER_BASE = 3;
const MAX_DELTAS = 8;

const mergeDue = (segments: Buffer[], delta: string): boolean =>
  segments.length + (delta ? 1 : 0) > MAX_DELTAS + 1 ||
  segments.reduce((bytes, segment, i) => bytes + (i > 0 ? segment.length : 0), Buffer.byteLength(delta)) > DELTAS_PER_BASE * segments[0]!.length;

/** A map's entries split in buckets by their keys as the map holds them, as many as they need. */
function grouped<T extends [unknown, unknown]>(entries: T[], buckets = bucketsFor(entries.length)): T[][] {
  const groups: T[][] = Array.from({ length: buckets }, () => []);
  for (const entry of entries) groups[bucketOf(entry[0] as string | number, buckets)]!.push(entry);
  return groups;
}

/**
 * A map's buckets as JSON, a string each, each string in them as `short` writes it (see `refs`; none when they are
 * written so already): mapped in place and then turned to JSON natively, far quicker than through a replacer.
 */
async function mapTexts(groups: [string | number, unknown][][], short: ((text: string) => string) | null, step: Step): Promise<string[]> {
  if (short) await eachStringPausing(groups, short, step);
  const texts: string[] = [];
  for (let i = 0, n = 0; i < groups.length; i++) {
    const group = groups[i]!;
    texts.push(JSON.stringify(group));
    if ((n += group.length) >= SLICE) {
      n = 0;
      await step();
    }
  }
  return texts;
}

const NO_RECORDS: TablePlacement = { start: 0, end: 0, ids: [], offsets: [], lengths: [] };
const NO_PLACES: PlacesBucket = { ids: [], offsets: [], lengths: [] };

/** Lets other work run between the pieces of a large index: a fold writes it beside requests. */
const pause = () => new Promise<void>((resolve) => setImmediate(resolve));
/** What a fold's index work awaits between its pieces: a pause, and a cut short by a stop (see `writeIndexSections`). */
type Step = () => Promise<void>;
/**
 * A fold's index work pauses after about this many entries or strings (a few milliseconds): at 300,000 payments making
 * a map's buckets, or the refs of every record, in one go held the event loop for up to a second.
 */
const SLICE = 10_000;

/** An index file whose sections are written, waiting for its header (see `writeIndexSections`). */
export interface IndexSections {
  /**
   * Writes the header, naming the snapshot as it is now (in place) and the delta file, if any, and renames the index
   * file over the last.
   */
  finish(snapshot: string, generation: number, checksum: number, delta: DeltaStat | null): Promise<void>;
  /** Removes what was written. */
  abandon(): Promise<void>;
}

/**
 * Writes the sections of the index file of a snapshot just written (not yet in place) into a temp file, taking the
 * indexes out of `accounts` as it writes them (so each can be let go once written): a map, a table's places or a
 * value at a time, with a pause after each (at 300,000 payments making them all at once held the event loop for
 * seconds), written out a megabyte at a time as they are made (held until the end, they were ~90 MB of a fold's peak
 * memory at 300,000 payments). The header, which says where each section is and names the snapshot by its size and
 * times, comes last (`finish`), once the snapshot is in place. When `cut` says so, it stops at its next pause,
 * removes its part and rejects with `WRITE_CUT`. A fold that left the snapshot as it was (`delta`) copies its places
 * as the last index file wrote them and adds the delta file's; `placement` is then unused.
 */
export async function writeIndexSections(
  path: string,
  accounts: IndexesTaken,
  placement: Placement,
  cut: () => boolean,
  delta: DeltaFold | null = null,
): Promise<IndexSections> {
  const temp = `${path}.tmp`;
  const handle = await open(temp, 'w');
  let offset = 0;
  let crc = 0;
  const indexed: [string, AccountIndex][] = [];
  try {
    let batch: Buffer[] = [];
    let batched = 0;
    /** A section: text made now, or bytes copied from the last index file. */
    const section = (piece: string | Buffer): Section => {
      const bytes = typeof piece === 'string' ? Buffer.from(piece) : piece; // encoded once, for its length, CRC and write
      batch.push(bytes);
      batched += bytes.length;
      crc = crc32(bytes, crc);
      offset += bytes.length;
      return [offset - bytes.length, bytes.length];
    };
    /** A filter's parts, a section each (see `KeyFilter`). */
    const filterSections = (filter: KeyFilter): Section[] => filter.text().map((part) => section(part));
    const step: Step = async () => {
      if (cut()) throw WRITE_CUT;
      await pause();
    };
    /** Writes the sections made so far once they make a megabyte (`all`: whatever they make); then lets other work run. */
    const flush = async (all = false): Promise<void> => {
      if (batched >= WRITE_CHUNK || (all && batched > 0)) {
        // Written as they are, not copied into one buffer first: most are bytes of the last index file.
        const pieces = batch;
        batch = [];
        batched = 0;
        await handle.writev(pieces);
      }
      await step();
    };
    /**
     * A map as the last index file wrote it, with what changed since: each bucket's base and deltas copied as they are
     * and a delta of its changes after them. A bucket whose deltas outgrew its base, or grew too many, is merged into a
     * new base, and so is every bucket when the refs no longer name the same records (`kept` false).
     */
    const addChanges = async (
      written: WrittenMap<string | number>,
      changes: MapChange<string | number>[],
      fresh: ((text: string) => string) | null,
      newRefs: boolean,
      entries: number,
      short: (text: string) => string,
    ): Promise<AccountIndex['maps'][string]> => {
      const byBucket: MapChange<string | number>[][] = Array.from({ length: written.buckets }, () => []);
      for (const change of changes) byBucket[bucketOf(change[0], written.buckets)]!.push(change);
      const filter = filterSections(written.filter.with(changes.filter((change) => change.length > 1).map(([key]) => key)));
      const sections: Section[][] = [];
      const every = written.segments();
      for (let bucket = 0; bucket < written.buckets; bucket++) {
        const segments = every[bucket]!;
        const changed = byBucket[bucket]!;
        // Its records named as a base names them, those new here by their refs (see `newRecordsRef`: none when the
        // snapshot was left as it was); the changes kept as they are, for a merge.
        const plain = fresh && changed.length > 0 && !newRefs ? JSON.stringify(changed) : null;
        const mapped = fresh && changed.length > 0 && (plain === null || plain.includes('"~')) ? (eachString(copied(changed), fresh) as unknown[][]) : null;
        const delta = mapped ? JSON.stringify(mapped) : (plain ?? '');
        if (fresh && !mergeDue(segments, delta)) sections.push([...segments.map((segment) => section(segment)), ...(delta ? [section(delta)] : [])]);
        else sections.push([section((await mapTexts([applyChanges(written.read(bucket), changed)], short, step))[0]!)]);
        if (bucket % 16 === 15) await flush();
      }
      return { buckets: written.buckets, entries, filter, sections };
    };
    /** A table's places, a section a bucket, a pause after every few thousand of them. */
    const placesSections = async (buckets: PlacesBucket[]): Promise<Section[]> => {
      const sections: Section[] = [];
      for (let i = 0, n = 0; i < buckets.length; i++) {
        sections.push(section(bucketText(buckets[i]!)));
        if ((n += buckets[i]!.ids.length) >= SLICE) {
          n = 0;
          await flush();
        }
      }
      return sections;
    };
    for (const [key, head, indexes] of accounts) {
      const places: Places[] = [];
      const tables: AccountIndex['tables'] = {};
      // The places the account's maps name records by (they were all read from one index file, see `KeptIndexes`).
      const before = Object.values(indexes.maps).find((map) => map.written)?.written!.places;
      let kept: boolean;
      let fresh: (id: string) => string | undefined = () => undefined;
      if (delta) {
        // The snapshot and the delta file's batches before as they were: their places copied, the new batch's added.
        const written = delta.tables.get(key);
        for (const [t, table] of TABLES.entries()) {
          const from = written?.[t];
          const batch = delta.placement.get(key)?.get(table);
          const snapshotPlaces = from?.places ?? Places.empty();
          const asWritten = (written: WrittenPlaces) => ({ buckets: written.places.buckets, sections: written.sections().map((bytes) => section(bytes)), filter: filterSections(written.places.filter) });
          const deltas = (from?.deltas ?? []).map(asWritten);
          if (batch) {
            const buckets = bucketed(batch);
            deltas.push({ buckets: buckets.length, sections: await placesSections(buckets), filter: filterSections(filterOf(batch)) });
          }
          tables[table] = {
            start: from?.start ?? 0,
            end: from?.end ?? 0,
            buckets: snapshotPlaces.buckets,
            sections: from ? from.sections().map((bytes) => section(bytes)) : [section(bucketText(NO_PLACES))],
            filter: filterSections(snapshotPlaces.filter),
            deltas,
          };
          places.push(snapshotPlaces);
          await flush();
        }
        kept = written !== undefined && written.every((table, t) => table.places === before?.[t]);
      } else {
        // Each table's records go in as many buckets as before, while that fits, so that the refs of the index file the
        // maps were read from may still name the same records (see `kept` below).
        const split: PlacesBucket[][] = [];
        for (const [t, table] of TABLES.entries()) {
          const placed = placement.get(key)?.get(table) ?? NO_RECORDS;
          const buckets = bucketed(placed, bucketsKept(placed.ids.length, before?.[t]!.buckets));
          split.push(buckets);
          places.push(new Places(buckets.length, (bucket) => buckets[bucket]!, filterOf(placed)));
          const sections = await placesSections(buckets);
          const filter = filterSections(filterOf(placed));
          tables[table] = { start: placed.start, end: placed.end, buckets: buckets.length, sections, filter, deltas: [] };
          await flush();
        }
        // The refs of the index file a map was read from still name the same records here when every record there kept
        // its position: its buckets can then be copied as written, what changed since added as a delta, not read back
        // to ids and made refs again.
        kept = before !== undefined;
        for (let table = 0; table < split.length && kept; table++) {
          kept = before![table]!.keptIn(split[table]!);
          await step();
        }
        if (kept) fresh = newRecordsRef(before!, split);
      }
      const short = refs(placesRef(places));
      const maps: AccountIndex['maps'] = {};
      for (const name of Object.keys(indexes.maps)) {
        // Each map is let go once written (what it holds may be all its entries).
        const taken = indexes.maps[name]!;
        delete indexes.maps[name];
        if (taken.whole) {
          const filter = filterSections(KeyFilter.of(taken.whole.map(([key]) => key)));
          const texts = await mapTexts(grouped(taken.whole), short, step);
          maps[name] = { buckets: texts.length, entries: taken.entries, filter, sections: texts.map((text) => [section(text)]) };
        } else maps[name] = await addChanges(taken.written!, taken.changes, kept && taken.written!.places === before ? refs(fresh) : null, !delta, taken.entries, short);
        await flush();
      }
      const values: AccountIndex['values'] = {};
      for (const [name, value] of Object.entries(indexes.values)) {
        delete indexes.values[name];
        // Values keep their ids: a start reads them whole (the due queue, a payment's expiry each), and putting refs
        // back there read every payment's places first (~100 ms at 100,000 payments, for ~26 bytes a payment).
        values[name] = section(JSON.stringify(await eachStringPausing(value, escaped, step)));
        await flush();
      }
      indexed.push([key, { head, tables, maps, values }]);
    }
    await flush(true);
  } catch (error) {
    await handle.close();
    await rm(temp, { force: true });
    throw error;
  }
  const abandon = async (): Promise<void> => {
    await handle.close().catch(() => {}); // closed already, if `finish` failed after closing it
    await rm(temp, { force: true });
  };
  return {
    abandon,
    async finish(snapshot, generation, checksum, delta) {
      try {
        const stat = statSync(snapshot);
        const header: Header = {
          version: STORED_INDEXES_VERSION,
          length: offset,
          sections: crc,
          generation,
          snapshot: { size: stat.size, mtimeMs: stat.mtimeMs, ino: stat.ino, ctimeMs: stat.ctimeMs, crc: checksum },
          delta,
          accounts: indexed,
        };
        await handle.write(Buffer.concat([Buffer.from('\n'), checkedLine(header)]));
        await handle.close();
        await rename(temp, path);
      } catch (error) {
        await abandon();
        throw error;
      }
    },
  };
}

/** An index file's header (its last line) and where it starts, if it is whole. */
function headerOf(file: IndexFile): { header: Header; end: number } | null {
  // The header is the last line; the sections come before it, then a newline. It is read from the end, more at a
  // time until its start is found (it names every section: ~140 KB at 300,000 payments after a fold, more with many
  // accounts or deltas).
  for (let tail = Math.min(HEADER_TAIL, file.size); ; tail = Math.min(tail * 4, file.size)) {
    const bytes = file.bytes([file.size - tail, tail]);
    const end = bytes.lastIndexOf(10, bytes.length - 2);
    if (end < 0 && tail < file.size) continue;
    if (end < 0 || bytes[bytes.length - 1] !== 10) return null;
    const line = readLine(bytes.subarray(end + 1, bytes.length - 1));
    return line.kind === 'checked' ? { header: line.value as Header, end: file.size - tail + end } : null;
  }
}

/** How much of an index file's end is read first for its header. */
const HEADER_TAIL = 1024 * 1024;

/** An account's indexes in an index file, its records' places being `places`: each section read when first asked. */
function indexSource(file: IndexFile, index: AccountIndex, places: readonly Places[]): IndexSource {
  const named = ids(places);
  const read = (bytes: Buffer): unknown => eachString(JSON.parse(bytes.toString('utf8')), named);
  return {
    map: (name) => {
      const map = index.maps[name];
      if (!map) return undefined;
      const filter = file.filter(map.filter);
      const entries = (bucket: number): [string | number, never][] => {
        const [base, ...deltas] = file.run(map.sections[bucket]!);
        return applyChanges(read(base!) as [string | number, unknown][], deltas.flatMap((delta) => read(delta) as MapChange<string | number>[])) as [string | number, never][];
      };
      return {
        buckets: map.buckets,
        read: entries,
        mayHold: (key) => filter.mayHave(key),
        written: {
          buckets: map.buckets,
          entries: map.entries,
          filter,
          places,
          segments: () => {
            // Every bucket's sections follow each other: read at once, and split.
            const all = file.run(map.sections.flat());
            let at = 0;
            return map.sections.map((bucket) => all.slice(at, (at += bucket.length)));
          },
          read: entries,
        },
      };
    },
    value: (name) => read(file.bytes(index.values[name]!)),
  };
}

/** Where a table's records are: a byte range of the snapshot and their places there, and their places in the delta file. */
export interface TableParts {
  start: number;
  end: number;
  places: Places;
  /** The places of each batch of the delta file, oldest first. */
  deltas: Places[];
}

/**
 * The index file a fold just wrote, its records' places being those of `parts` (as that fold laid them out): each
 * account's indexes, for its maps to read from and add to next (see `KeptIndexes.folded`), and its tables' places as
 * written, for the next fold that leaves the snapshot as it is.
 */
export function foldedIndexes(path: string, parts: Map<string, TableParts[]>): Pick<LazyState, 'indexes' | 'tables'> {
  const file = new IndexFile(path);
  const { header } = headerOf(file)!;
  const indexes = new Map<string, IndexSource>();
  const tables = new Map<string, WrittenTable[]>();
  for (const [key, index] of header.accounts) {
    const made = parts.get(key) ?? TABLES.map(() => ({ start: 0, end: 0, places: Places.empty(), deltas: [] }));
    indexes.set(key, indexSource(file, index, made.map((table) => table.places)));
    tables.set(key, TABLES.map((table, t) => writtenTable(file, index.tables[table]!, made[t]!)));
    // The places, read from this file from now on: the index file they were read from is let go.
    for (const [t, table] of TABLES.entries()) {
      const { buckets, sections, deltas } = index.tables[table]!;
      if (made[t]!.places.buckets === buckets) made[t]!.places.readFrom(placesSource(file, sections));
      made[t]!.deltas.forEach((places, i) => {
        if (places.buckets === deltas[i]?.buckets) places.readFrom(placesSource(file, deltas[i].sections));
      });
    }
  }
  return { indexes, tables };
}

/** A table's places as an index file holds them, a bucket at a time. */
const placesSource =
  (file: IndexFile, sections: Section[]) =>
  (bucket: number): PlacesBucket =>
    parseBucket(file.text(sections[bucket]!));

/** A table as the index file wrote it (see `WrittenTable`), its places being `parts`'. */
const writtenTable = (file: IndexFile, table: TableIndex, parts: TableParts): WrittenTable => ({
  start: table.start,
  end: table.end,
  sections: () => file.run(table.sections),
  places: parts.places,
  deltas: parts.deltas.map((places, i) => ({ places, sections: () => file.run(table.deltas[i]!.sections) })),
});

/**
 * The state described by the index file, if it describes the snapshot at `snapshot` and the delta file at `delta`
 * (else null): each account's tables read a record from them when first asked, its indexes a bucket when first used.
 * A delta file longer than the index file names holds a batch a crash cut short: `delta` says how long it is to be.
 */
export function readIndexFile(
  path: string,
  snapshot: string,
  deltaPath: string,
  pieceBytes = TABLE_PARSE,
): (LazyState & { delta: DeltaStat | null; snapshotCrc: number }) | null {
  if (!existsSync(path) || !existsSync(snapshot)) return null;
  const file = new IndexFile(path);
  const read = headerOf(file);
  if (!read) {
    file.close();
    return null;
  }
  const { header, end } = read;
  const stat = statSync(snapshot);
  // Its version, exact length and checksum say the rest is as written; the snapshot's size, times and checksum, that
  // it is this one's; the same for the delta file, up to the length it names.
  const matches =
    header.version === STORED_INDEXES_VERSION &&
    end === header.length &&
    header.snapshot?.size === stat.size &&
    Math.abs(header.snapshot.mtimeMs - stat.mtimeMs) < 1 &&
    fileChecksum(path, end) === header.sections &&
    ((header.snapshot.ino === stat.ino && header.snapshot.ctimeMs === stat.ctimeMs) || fileChecksum(snapshot) === header.snapshot.crc) &&
    deltaMatches(deltaPath, header.delta);
  if (!matches) {
    file.close();
    return null;
  }
  const fd = new SnapshotReader(snapshot);
  const deltaFd = header.delta && new SnapshotReader(deltaPath);
  const lazyTables: LazyTable[] = [];
  const accounts = keyedByCaller<AccountState>();
  const indexes = new Map<string, IndexSource>();
  const tables = new Map<string, WrittenTable[]>();
  for (const [key, index] of header.accounts) {
    const account: Record<string, unknown> = { ...index.head };
    const parts = TABLES.map((table): TableParts => {
      const { start, end: stop, buckets, sections, filter, deltas } = index.tables[table]!;
      const places = new Places(buckets, placesSource(file, sections), file.filter(filter));
      const inDelta = deltas.map((batch) => new Places(batch.buckets, placesSource(file, batch.sections), file.filter(batch.filter)));
      const parts = { start, end: stop, places, deltas: inDelta };
      const lazy = new LazyTable(parts, fd, deltaFd, pieceBytes);
      lazy.placeIn(account, table);
      lazyTables.push(lazy);
      return parts;
    });
    indexes.set(key, indexSource(file, index, parts.map((table) => table.places)));
    tables.set(key, TABLES.map((table, t) => writtenTable(file, index.tables[table]!, parts[t]!)));
    accounts[key] = account as unknown as AccountState;
  }
  return {
    state: { version: 1, generation: header.generation, accounts },
    indexes,
    tables,
    delta: header.delta,
    snapshotCrc: header.snapshot.crc,
    *warming() {
      for (const table of lazyTables) for (const places of table.placesRead()) while (places.readNext()) yield;
    },
    release: () => {
      fd.close();
      deltaFd?.close();
    },
  };
}

/**
 * Whether the delta file is the one an index file names (none: whatever is there is older than the snapshot): the same
 * file, or its first `length` bytes have the CRC32 named. It may be longer: a fold appended to it and was cut short.
 */
function deltaMatches(path: string, named: DeltaStat | null): boolean {
  if (named === null) return true;
  const stat = statSync(path, { throwIfNoEntry: false });
  if (!stat || stat.size < named.length) return false;
  if (stat.size === named.length && stat.ino === named.ino && stat.ctimeMs === named.ctimeMs && Math.abs(stat.mtimeMs - named.mtimeMs) < 1) return true;
  return fileChecksum(path, named.length) === named.crc;
}

/**
 * A snapshot held open for the tables that read from it: closed by `release` once a newer snapshot took over, or
 * else once no table can read from it any more (the state of a stopped store may still be read).
 */
class SnapshotReader {
  private static readonly unused = new FinalizationRegistry<number>((fd) => closeSync(fd));
  readonly fd: number;

  constructor(readonly path: string) {
    this.fd = openSync(path, 'r');
    SnapshotReader.unused.register(this, this.fd, this);
  }

  close(): void {
    SnapshotReader.unused.unregister(this);
    closeSync(this.fd);
  }
}

/**
 * An index file held open, its sections read when asked: held whole in memory it was ~100 MB at 300,000 payments,
 * and reading it whole again after each fold a tenth of the fold. A fold renames the next one over it: the sections
 * are still read from this one, which is closed once nothing can read it any more.
 */
class IndexFile extends SnapshotReader {
  readonly size: number;

  constructor(path: string) {
    super(path);
    this.size = fstatSync(this.fd).size;
  }

  bytes([at, length]: Section): Buffer {
    const bytes = readBytes(this.fd, at, length);
    if (bytes.length < length) throw new Error(`${this.path} ends early`);
    return bytes;
  }

  text(section: Section): string {
    return this.bytes(section).toString('utf8');
  }

  filter(sections: Section[]): KeyFilter {
    return KeyFilter.parse(this.run(sections).map((part) => part.toString('latin1')));
  }

  /** Sections written one after the other (a bucket's base and deltas, a table's places), read at once. */
  run(sections: Section[]): Buffer[] {
    if (sections.length === 0) return [];
    const [start] = sections[0]!;
    const [at, length] = sections.at(-1)!;
    const bytes = this.bytes([start, at + length - start]);
    return sections.map(([at, length]) => bytes.subarray(at - start, at - start + length));
  }
}


export interface LazyState {
  state: SandboxState;
  /** Each account's indexes, read when first used. */
  indexes: Map<string, IndexSource>;
  /** Each account's tables' places as the index file wrote them (none: it wrote none), for a fold that keeps the snapshot. */
  tables: Map<string, WrittenTable[]>;
  /** Reads where each record sits a bucket at a time, a step each (see `Store.warming`). */
  warming(): Generator<void>;
  /** Closes the snapshot the tables read from, once nothing will ask them again (a newer snapshot took over). */
  release(): void;
}

/**
 * Splits the places of a snapshot just written in buckets (`bucketed`) and makes their filters (`filterOf`), a table at
 * a time between pauses, so that `rebase`, which must swap every table at once, finds them made (at 300,000 payments,
 * making them there held the event loop for a quarter of a second).
 */
export async function splitPlaces(placement: Placement): Promise<void> {
  for (const tables of placement.values()) {
    for (const placed of tables.values()) {
      bucketed(placed);
      await pause();
      filterOf(placed);
      await pause();
    }
  }
}

/** Each table's parts in a snapshot just written, laid out as `placement`. */
export function partsOf(placement: Placement): Map<string, TableParts[]> {
  return new Map(
    [...placement].map(([key, tables]) => [
      key,
      TABLES.map((table) => {
        const at = tables.get(table) ?? NO_RECORDS;
        return { start: at.start, end: at.end, places: Places.of(at), deltas: [] };
      }),
    ]),
  );
}

/**
 * After a fold wrote what the tables of `state` held (the snapshot, or the delta file beside it): every table of the
 * accounts it holds reads from there from now on (`parts`), so the records it holds leave memory, but for the records
 * changed since the fold took them (`since`: by account, `table\0id`), kept as they are now. An account replaced whole
 * since (`replaced`) keeps its plain tables. Returns how to close the files they read.
 */
export function rebase(
  state: SandboxState,
  snapshot: string,
  deltaPath: string,
  parts: Map<string, TableParts[]>,
  since: Map<string, Map<string, readonly [string, string, ...unknown[]]>>,
  replaced: Set<string>,
): () => void {
  const fd = new SnapshotReader(snapshot);
  const deltaFd = [...parts.values()].some((tables) => tables.some((table) => table.deltas.length > 0)) ? new SnapshotReader(deltaPath) : null;
  for (const [key, tables] of parts) {
    const account = state.accounts[key] as unknown as Record<string, Record<string, unknown>> | undefined;
    if (!account || replaced.has(key)) continue;
    const changed = [...(since.get(key)?.values() ?? [])];
    for (const [t, table] of TABLES.entries()) {
      const lazy = new LazyTable(tables[t]!, fd, deltaFd, TABLE_PARSE);
      const before = account[table]!;
      for (const [name, id] of changed) {
        if (name !== table) continue;
        const record = before[id];
        if (record === undefined) lazy.delete(id);
        else lazy.set(id, record);
      }
      lazy.placeIn(account, table);
    }
  }
  return () => {
    fd.close();
    deltaFd?.close();
  };
}

/** The byte range [start, end) of a file as text. */
function readText(fd: number, start: number, end: number): string {
  const bytes = readBytes(fd, start, end - start);
  if (bytes.length < end - start) throw new Error('the data file ends early');
  return bytes.toString('utf8');
}

const lazyTables = new WeakMap<object, LazyTable>();

/**
 * A table's records for a new snapshot, taken now, if it is a table read through the index file and not yet read
 * whole (else null: it is a plain object): the records not written since as the last snapshot holds their lines.
 */
export function tableEntries(table: object): TableEntries | null {
  return lazyTables.get(table)?.entries() ?? null;
}

/** Whether a record is new since the files a table reads from: false when it may be there (a plain table). */
export function newSinceSnapshot(table: object, id: string): boolean {
  const lazy = lazyTables.get(table);
  return lazy !== undefined && lazy.placesRead().every((places) => !places.has(id));
}

/**
 * A table whose records stay in the snapshot (or the delta file beside it) until asked: a record is read and parsed on
 * first use; asking for every id (`Object.keys`, `Object.values`) reads the whole table once, in its order, and from
 * then on it is a plain object. Records written since hold their place like in an object: a replaced one keeps its
 * position, a new one comes last.
 */
class LazyTable {
  private readonly records = new Map<string, unknown>();
  /** Ids written since the snapshot (in the order first written), and ids deleted. */
  private readonly written = new Set<string>();
  private readonly gone = new Set<string>();
  private whole: Record<string, unknown> | null = null;
  /** Where the table sits, so it can leave a plain object there once read whole. */
  private place: { account: Record<string, unknown>; table: string; proxy: Record<string, unknown> } | null = null;

  /** Its records in the snapshot (`parts`' range and places) and, newer, in the delta file (its places there). */
  constructor(
    private readonly parts: TableParts,
    private readonly snapshot: SnapshotReader,
    private readonly deltaFile: SnapshotReader | null,
    private readonly pieceBytes: number,
  ) {}

  /** The places it reads records by: the snapshot's, and each batch's of the delta file. */
  placesRead(): Places[] {
    return [this.parts.places, ...this.parts.deltas];
  }

  get(id: string): unknown {
    if (this.whole) return Object.hasOwn(this.whole, id) ? this.whole[id] : undefined;
    const record = this.records.get(id);
    if (record !== undefined || this.gone.has(id)) return record;
    let place: [number, number] | undefined;
    // The latest batch that holds it; the snapshot if none does.
    for (let batch = this.parts.deltas.length - 1; batch >= 0 && !place; batch--) place = this.parts.deltas[batch]!.get(id);
    const inDelta = place !== undefined;
    place ??= this.parts.places.get(id);
    if (!place || place[1] < 0) return undefined;
    const value: unknown = JSON.parse(readText((inDelta ? this.deltaFile! : this.snapshot).fd, place[0], place[0] + place[1]));
    this.records.set(id, value);
    return value;
  }

  /**
   * The records of the delta file as its last batch to write each left it (gone ones undefined), in the order they
   * were first written there: each batch's in file order, those of a batch before first.
   */
  private *inDelta(): Generator<[string, unknown]> {
    const latest = new Map<string, [number, number]>(); // a key set again keeps its first place in the order
    for (const batch of this.parts.deltas) for (const [id, at, length] of batch.inOrder()) latest.set(id, [at, length]);
    for (const [id, [at, length]] of latest) yield [id, length < 0 ? undefined : JSON.parse(readText(this.deltaFile!.fd, at, at + length))];
  }

  set(id: string, value: unknown): void {
    if (this.whole) define(this.whole, id, value);
    else {
      this.records.set(id, value);
      this.written.add(id);
      this.gone.delete(id);
    }
  }

  delete(id: string): void {
    if (this.whole) delete this.whole[id];
    else {
      this.records.delete(id);
      this.written.delete(id);
      this.gone.add(id);
    }
  }

  all(): Record<string, unknown> {
    if (this.whole) return this.whole;
    let whole: Record<string, unknown> | null = null;
    const { start, end } = this.parts;
    for (let at = start; at < end; ) {
      let stop = Math.min(at + this.pieceBytes, end);
      let text = readText(this.snapshot.fd, at, stop);
      if (stop < end) {
        // Cut after the last whole line; the rest is read with the next piece.
        const cut = text.lastIndexOf('\n');
        if (cut < 0) throw new Error(`a record of the data file is over ${this.pieceBytes} bytes`);
        text = text.slice(0, cut + 1);
        stop = at + Buffer.byteLength(text);
      }
      whole = addMembers(whole, text.startsWith(',') ? text.slice(1) : text);
      at = stop;
    }
    whole ??= {};
    for (const [id, record] of this.inDelta()) {
      if (record === undefined) delete whole[id];
      else define(whole, id, record);
    }
    for (const [id, record] of this.records) define(whole, id, record);
    for (const id of this.gone) delete whole[id];
    this.records.clear();
    this.written.clear();
    this.gone.clear();
    this.whole = whole;
    // From now on it is a plain object (a proxy costs every read of a list); unless the account got a new table.
    if (this.place && this.place.account[this.place.table] === this.place.proxy) this.place.account[this.place.table] = whole;
    return whole;
  }

  /**
   * The table's records for a new snapshot, taken now, in its order: records not written since are their lines in the
   * snapshot, as many as follow each other up to `COPY_PIECE` bytes, read through a descriptor of its own (closed once
   * done); any other record is its value.
   */
  entries(): TableEntries {
    if (this.whole) return Object.entries(this.whole);
    // The records of the delta file count as written since: a new snapshot holds them in their place.
    const written = new Map<string, unknown>();
    const gone = new Set<string>();
    const changes: Iterable<[string, unknown]> = [...this.inDelta(), ...[...this.written].map((id): [string, unknown] => [id, this.records.get(id)])];
    for (const [id, record] of changes) {
      if (record === undefined) {
        written.delete(id);
        gone.add(id);
      } else written.set(id, record);
    }
    for (const id of this.gone) {
      written.delete(id);
      gone.add(id);
    }
    const onDisk = this.parts.places.inOrder();
    const { start } = this.parts;
    const file = this.snapshot.path;
    return (function* (): Generator<[string, unknown] | CopiedLines> {
      const fd = openSync(file, 'r');
      try {
        const from = (at: number): Omit<CopiedLines, 'bytes'> & { end: number } => ({ at, end: at, ids: [], offsets: [], lengths: [] });
        let run = from(start);
        const copied = (next: number): CopiedLines => {
          const lines = { ...run, bytes: readBytes(fd, run.at, run.end - run.at) };
          run = from(next);
          return lines;
        };
        // Each record's line runs from the end of the one before (the table's start, for its first) past its value.
        for (const [id, at, length] of onDisk) {
          const next = at + length + 1;
          if (gone.has(id) || written.has(id)) {
            if (run.ids.length > 0) yield copied(next);
            else run = from(next);
            if (written.has(id)) {
              yield [id, written.get(id)];
              written.delete(id);
            }
            continue;
          }
          if (run.ids.length > 0 && at + length - run.at > COPY_PIECE) yield copied(run.end + 1);
          run.ids.push(id);
          run.offsets.push(at);
          run.lengths.push(length);
          run.end = at + length;
        }
        if (run.ids.length > 0) yield copied(0);
        yield* written;
      } finally {
        closeSync(fd);
      }
    })();
  }

  /** Puts the table in an account as the core sees it: an object keyed by id (no prototype: any id is just a key). */
  placeIn(account: Record<string, unknown>, table: string): void {
    const proxy = this.proxy();
    this.place = { account, table, proxy };
    account[table] = proxy;
    lazyTables.set(proxy, this);
  }

  private proxy(): Record<string, unknown> {
    const descriptor = (value: unknown) => (value === undefined ? undefined : { value, writable: true, enumerable: true, configurable: true });
    return new Proxy(Object.create(null) as Record<string, unknown>, {
      get: (_, id) => (typeof id === 'string' ? this.get(id) : undefined),
      has: (_, id) => typeof id === 'string' && this.get(id) !== undefined,
      set: (_, id, value) => {
        this.set(String(id), value);
        return true;
      },
      defineProperty: (_, id, property) => {
        this.set(String(id), property.value);
        return true;
      },
      deleteProperty: (_, id) => {
        this.delete(String(id));
        return true;
      },
      ownKeys: () => Object.keys(this.all()),
      getOwnPropertyDescriptor: (_, id) => descriptor(typeof id === 'string' ? this.get(id) : undefined),
      getPrototypeOf: () => null,
    });
  }
}
