/**
 * The file engine: where the server keeps its state, behind the core's storage port (`Indexes`, `StateChange`).
 *
 * On disk, beside the data file `<file>`:
 * - `<file>`: the snapshot, a JSON document of every account, one record a line (`snapshot-file.ts`);
 * - `<file>.delta`: the records written since the snapshot, appended by the folds that leave it as it is, batch by
 *   batch (`delta-file.ts`);
 * - `<file>.journal` (and `<file>.journal.next` while a fold runs): the changes since the snapshot, one checked line
 *   per save (`checked-line.ts`: a CRC32 before the JSON);
 * - `<file>.index`: written with each fold, beside the snapshot it describes: where each record sits in it and each
 *   account's indexes in buckets (`index-file.ts`, `kept-indexes.ts`), read when first asked (`lazy-map.ts`);
 * - `<file>.lock`: held while a server owns the files.
 *
 * What each kind of damage does on start: a journal's torn last line (a crash mid-write, never acknowledged) is
 * dropped; a line failing its checksum with good lines after it stops the start with the byte to cut at, changing
 * nothing (`readJournal`); an index file that does not match its snapshot, or is damaged, is not used: the start
 * reads everything (`readIndexFile`); a fold cut short (the next journal beside the journal) is replayed like a
 * journal, and the fold is done again in the background once the server is idle. How writes, folds and a full disk
 * behave is told at `fileStore`.
 */
import {
  closeSync,
  existsSync,
  fdatasyncSync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  truncateSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { dirname, resolve } from 'node:path';
import { crc32 } from 'node:zlib';
import { Low, Memory } from 'lowdb';
import { checkedLine, JSON_AT, readLine } from './checked-line.js';
import { appendDelta, FileRanges, readDelta, type DeltaRecord } from './delta-file.js';
import {
  foldedIndexes,
  newSinceSnapshot,
  partsOf,
  readIndexFile,
  rebase,
  splitPlaces,
  tableEntries,
  writeIndexSections,
  type IndexesTaken,
  type IndexSections,
  type LazyState,
  type TableParts,
} from './index-file.js';
import { Places } from './record-places.js';
import { SnapshotFile, WRITE_CUT } from './snapshot-file.js';
import {
  accountHead,
  emptyState,
  memoryIndexes,
  normalizeAccount,
  normalizeState,
  SandboxError,
  TABLES,
  type AccountState,
  type SandboxState,
  type IndexesOf,
  type RecordChange,
  type StateChange,
} from '../../core/index.js';
import { KeptIndexes, type StoredIndexes } from './kept-indexes.js';

/** Where the server keeps its state: `load` once, hear of each change, then `save` before every acknowledgement. */
export interface Store {
  readonly path: string | null;
  load(): Promise<SandboxState>;
  /** A change to the state since the last save (the core reports every one). */
  changed(account: string, change: StateChange): void;
  /**
   * Resolves once the state as it is now is on disk. Calls made in one turn of the event loop, or during a write, share
   * one. Rejects with `INSUFFICIENT_STORAGE` when the write could not be stored: its changes were undone (see `onUndo`).
   */
  save(): Promise<void>;
  /**
   * How to put an account back as the files hold it (`null`: they do not hold it) and rebuild what is derived from
   * it; the store calls it, muted, to undo the changes of a write that failed. Set by the owner of the state.
   */
  onUndo(restore: (account: string, state: AccountState | null) => void): void;
  close(): Promise<void>;
  /** How many times the files were written: concurrent saves share writes. */
  readonly writes: number;
  /** Whether `load` read the state through the index file (records and indexes when first asked). */
  readonly quick: boolean;
  /**
   * After a quick load: reads what is left of the index file a bucket at a time, a step each, for idle moments; at its
   * end, starts a fold that was due since the start (see `load`).
   */
  warming(): Iterable<void>;
  /** Each account's indexes: the store keeps them (the file store, in its index file), so it hands them out. */
  indexes: IndexesOf;
}

export interface FileStoreOptions {
  /** `fdatasync` the journal after each write, before it is acknowledged: the write then survives a crash of the machine. */
  fsync?: boolean;
  /** Told when writes start or stop being refused, and when a fold fails. */
  log?: (line: string) => void;
  /**
   * A clean stop folds the journal into the data file while they are smaller than this (bytes, default 32 MiB: a
   * fraction of a second), so a small state is one file after a stop; a larger one's stop leaves the journal beside it.
   */
  foldAtStopBelow?: number;
  /** Told when a fold begins (true) and when it ends (false), however it ends. */
  onFold?: (running: boolean) => void;
}

export class StoreLockedError extends Error {}

/**
 * A change in a journal line, as `[account, table | "header" | "all", id, value | null, new?]`. `all` puts an
 * account's head (its records follow as changes of their own) or, with null, removes it. `new` (1) marks a record the
 * snapshot does not hold, so a start replaying it need not look for it there.
 */
type JournalChange = [string, string, string | null, unknown, 1?];

/**
 * A record changed since the last fold (its table and id) and, once a journal holds it as it is now, where: that
 * journal's generation, and the byte offset, length and CRC32 of its JSON there (a fold copies it rather than making
 * it again, if its bytes there still have that CRC32).
 */
type ChangedRecord = [table: string, id: string, generation?: number, offset?: number, length?: number, crc?: number];

/** How many numbers say where a change's value is in a journal line (`p`): its byte offset, length and CRC32. */
const PLACE = 3;

/**
 * A journal line of `changes` (`more`: the save goes on in the next line), and where each change's value is in it
 * (`PLACE` numbers each), also written in the line (`p`) for a start that replays it. The JSON of the journal's
 * changes, put together a change at a time so as to know where each value is.
 */
function journalLine(changes: JournalChange[], more: boolean): { line: Buffer; places: number[] } {
  let text = '{"c":[';
  let bytes = text.length;
  const places: number[] = [];
  for (let i = 0; i < changes.length; i++) {
    const [key, table, id, value, created] = changes[i]!;
    const head = `${i > 0 ? ',' : ''}[${JSON.stringify(key)},${JSON.stringify(table)},${JSON.stringify(id)},`;
    const body = JSON.stringify(value);
    const tail = created === 1 ? ',1]' : ']';
    const headBytes = Buffer.byteLength(head);
    const bodyBytes = Buffer.byteLength(body);
    places.push(JSON_AT + bytes + headBytes, bodyBytes, crc32(body));
    text += head + body + tail;
    bytes += headBytes + bodyBytes + tail.length;
  }
  return { line: checkedLine(`${text}]${more ? ',"more":true' : ''},"p":[${places.join(',')}]}`), places };
}

/**
 * The journal is folded into a new snapshot once it outgrows a quarter of the snapshot (and this floor): a start
 * replays the journal, so it stays a fraction of the snapshot, and each fold's cost is spread over the writes since.
 * A fold rewrites the whole state, so the floor is as high as a start can replay quickly (20 MiB, about 18,000
 * creates: under a second): at 8 MiB a new sandbox taking creates folded four times in its first 40 MiB, half the
 * CPU of each create (from 100,000 payments on, a quarter of the snapshot is more than the floor).
 */
const COMPACT_FLOOR = 20 * 1024 * 1024;
/**
 * A fold appends what changed to the delta file while it is smaller than this share of the snapshot, else writes a new
 * snapshot holding it (see `fileStore`): a record is looked for among the places of each batch meanwhile (their filters
 * first), and read through one more file, but a fold at 300,000 payments writes tens of megabytes instead of hundreds.
 */
const DELTA_SHARE = 0.5;
/** A clean stop folds a state smaller than this (see `FileStoreOptions.foldAtStopBelow`). */
const FOLD_AT_STOP_BELOW = 32 * 1024 * 1024;
/** A save of more changes than this (an import, a seed) is written as several journal lines, read back as one. */
const LINE_CHANGES = 2_000;
/** A fold that failed (a full disk) is tried again at a write after this long, twice as long after each failure in a row. */
const FOLD_RETRY_MS = 10_000;
const FOLD_RETRY_MAX_MS = 5 * 60_000;

/**
 * The state as a snapshot (a JSON document read and written by lowdb through `SnapshotFile`) plus an append-only
 * journal beside it (`<file>.journal`): each save appends one line with just the records that changed, so a write
 * costs the size of the change, not of the whole state (a save of many changes, an import, takes several lines,
 * read back as one). lowdb is safe with one writer only, so the server takes `<file>.lock`, holds it open and checks
 * before each write and fold that the file there is still its own: a server that lost it (the lock removed, perhaps
 * for a second server) stops writing and refuses every write.
 *
 * Each journal line carries a CRC32 of its bytes (see `checkedLine`); what each kind of damage does on start is
 * told at `readJournal`.
 *
 * A write that fails (a full disk) is not acknowledged and leaves no trace: the journal is cut back to its last good
 * length, and the accounts the write changed are put back as the files hold them, read back from the snapshot and
 * journals (`undo`, through the owner's `onUndo`, which re-indexes them). Reading back from the files rather than
 * keeping each record's previous value costs a read of the state per failed write, but cannot miss a change however
 * the core made it, and needs nothing of the core but its `replace`. Until the disk has room again every write
 * fails the same way; reads go on. With `fsync`, each write is also synced before it is acknowledged.
 *
 * When the journal outgrows a quarter of the snapshot it is folded in the background: generation g+1 of the
 * records and every account's indexes are taken at once, and written out while saves go on into a new journal
 * (`<file>.journal.next`, headed g+1), which then replaces the old one. While the delta file is under half the
 * snapshot, the records changed since the last fold are appended to it (a batch closed by a line naming g+1), then the
 * index file is written naming both (`foldIntoDelta`); else a new snapshot is written, holding the delta file's
 * records too (the bytes of records not written since copied into a temp file, then the index file's sections, then
 * the snapshot renamed into place, the delta file removed and the index file's header written: `foldIntoSnapshot`).
 * The tables then read from what was written, so records nobody touches leave memory. On start, the delta file's
 * batches and each journal are applied if their generation is not older than the snapshot's, so a crash at any step
 * loses nothing that was acknowledged. A fold that fails leaves both journals
 * whole (the new one stays the one written to) and is tried again later, taking a snapshot of that same generation
 * g+1: the next journal replayed over it still gives the latest state, records being written whole and every change
 * since it began being in it.
 *
 * A start with an index file that matches the snapshot reads records and indexes from them when first asked, and
 * replays the journal over them: the records it names are read, and handed to their accounts to re-index
 * (`Indexes.since`). So a start after a crash is as quick as after a clean stop, and a clean stop writes nothing but
 * what the journal does not hold yet. Any other start reads the whole state. A fold a start finds due (a fold cut
 * short, a snapshot without its index file or journal) is not done while loading, before the accounts exist, since it
 * could write no index file then: it runs in the background once they do and the start's reading ahead is done
 * (`warming`), so the server answers first and a crash after it still finds an index file; else it is done at the stop.
 * A stop that cannot fold says so and fails; the journals keep everything for the next start.
 */
export function fileStore(path: string, options: FileStoreOptions = {}): Store {
  const file = resolve(path);
  const lockPath = `${file}.lock`;
  const journalPath = `${file}.journal`;
  const nextJournalPath = `${file}.journal.next`;
  const deltaPath = `${file}.delta`;
  const indexPath = `${file}.index`;
  const log = options.log ?? (() => {});
  const snapshot = new SnapshotFile(file, undefined, tableEntries);
  snapshot.locate = true;
  const db = new Low<SandboxState>(snapshot, emptyState());
  const pending = new Map<string, { all: boolean; header: boolean; records: Map<string, ChangedRecord> }>();
  let lock: Lock | null = null;
  let journal = -1;
  let journalBytes = 0;
  let snapshotBytes = 0;
  /** Whether the journal written to is the next one: a fold began and has not finished (it may have failed). */
  let folding = false;
  /** Whether the last fold was cut short by a stop (see `close`). */
  let foldCut = false;
  /** A fold that failed is not tried again before this time. */
  let foldAfter = 0;
  let foldDelay = FOLD_RETRY_MS;
  let compacting: Promise<void> | null = null;
  let writing: Promise<void> | null = null;
  let next: Promise<void> | null = null;
  let batch: Promise<void> | null = null;
  let writes = 0;
  /** Whether the journal holds changes after its header, and whether the index file describes the snapshot. */
  let journalChanges = false;
  let indexed = false;
  /** The snapshot the tables read from (through the index file, or after a fold), closed when a newer one takes over. */
  let lazy: LazyState | null = null;
  /**
   * The records changed since the last fold took them (`table\0id` by account), and the accounts replaced whole since:
   * what a fold that leaves the snapshot as it is appends to the delta file, and, while a fold writes, what it did not take.
   */
  let dirty = new Map<string, Map<string, ChangedRecord>>();
  let replaced = new Set<string>();
  /** What the start replayed from the journals over the index file, by account (null: replaced): changed too. */
  let replayedChanges: Map<string, RecordChange[] | null> | null = null;
  /**
   * Where the journals hold each of those changes' values, by account, flat: the journal's generation and the value's
   * `PLACE` numbers (all -1: its line does not say).
   */
  let replayedPlaces = new Map<string, number[]>();
  /** The delta file as the index file names it, the snapshot's size without it, and the snapshot's CRC32. */
  let delta = { length: 0, crc: 0 };
  let baseBytes = 0;
  let snapshotCrc = 0;
  /** The indexes handed to each account (`indexes`), written to the index file at each fold. */
  const accountIndexes = new Map<string, KeptIndexes>();
  /** What a start replayed over kept indexes, by account (null: the account was replaced whole, its indexes are built). */
  let replayed = new Map<string, RecordChange[] | null>();
  /** A fold due since the start, done once `warming` has read ahead (see `load`). */
  let foldWhenWarm = false;
  /**
   * Whether the start replayed over half a fold's worth of journal: the first write then folds it. The next fold was near
   * anyway, and carrying the replayed changes as well as the new ones it fell amid the requests after the start (at
   * 300,000 payments, ~2 s of CPU within the first ~10,000 creates); right away, it is done while the start's burst of
   * work lasts, a crash soon after replays little, and the next fold is a whole journal away.
   */
  let foldSoon = false;
  let quick = false;
  let restore: (account: string, state: AccountState | null) => void = () => {};
  /** While `undo` puts accounts back: their `replace` is no change to store. */
  let muted = false;
  /** Why every write is refused for good (the lock was lost, or memory could not be put back), if it is. */
  let broken: SandboxError | null = null;
  /** Whether the last write failed (so the next one that works says writes are stored again). */
  let refusing = false;

  /**
   * The lines of every change since the last ones, values read now (records are replaced whole, never edited), and
   * where each record changed is in them (noted on the record by `write` once they are in the journal).
   */
  function drain(): { lines: Buffer; records: [ChangedRecord, number, number, number][] } | null {
    if (pending.size === 0) return null;
    const changes: JournalChange[] = [];
    const changed: (ChangedRecord | null)[] = [];
    for (const [key, change] of pending) {
      const account = db.data.accounts[key];
      if (!account) {
        changes.push([key, 'all', null, null]);
        continue;
      }
      if (change.all) {
        changes.push([key, 'all', null, accountHead(account)]);
        for (const table of TABLES) for (const [id, record] of Object.entries(account[table])) changes.push([key, table, id, record]);
        continue;
      }
      if (change.header) changes.push([key, 'header', null, accountHead(account)]);
      for (const record of change.records.values()) {
        const [table, id] = record;
        const records = account[table as keyof AccountState] as Record<string, unknown>;
        changes.push(newSinceSnapshot(records, id) ? [key, table, id, records[id] ?? null, 1] : [key, table, id, records[id] ?? null]);
        changed[changes.length - 1] = record;
      }
    }
    pending.clear();
    const lines: Buffer[] = [];
    const records: [ChangedRecord, number, number, number][] = [];
    for (let at = 0, bytes = 0; at < changes.length; at += LINE_CHANGES) {
      const { line, places } = journalLine(changes.slice(at, at + LINE_CHANGES), at + LINE_CHANGES < changes.length);
      for (let i = 0; i < places.length / PLACE; i++) {
        const record = changed[at + i];
        if (record) records.push([record, bytes + places[PLACE * i]!, places[PLACE * i + 1]!, places[PLACE * i + 2]!]);
      }
      lines.push(line);
      bytes += line.length;
    }
    return { lines: Buffer.concat(lines), records };
  }

  async function write(): Promise<void> {
    const accounts = [...pending.keys()];
    const drained = drain();
    if (drained === null) return;
    const at = journalBytes;
    try {
      writes++;
      append(drained.lines);
    } catch (error) {
      undo(accounts, error);
    }
    // Where this journal holds each record as it is now, for the fold that takes it (a record changed again is noted anew).
    for (const [record, offset, length, crc] of drained.records) {
      record[2] = db.data.generation ?? 0;
      record[3] = at + offset;
      record[4] = length;
      record[5] = crc;
    }
    journalChanges = true;
    if (refusing) log(`writes to ${file} are stored again`);
    refusing = false;
    const threshold = foldThreshold();
    // A save that alone outgrows the journal (an import, a seed) is acknowledged once folded, so a crash after its
    // acknowledgement leaves it in the snapshot and index file, not in a journal the next start must replay whole. The
    // journal holds it meanwhile: a fold that fails loses nothing, and the save is acknowledged all the same.
    if (drained.lines.length > threshold && Date.now() >= foldAfter) {
      await compacting?.catch(() => {});
      await compact().catch(() => {});
      return;
    }
    const outgrown = journalBytes > threshold || foldSoon;
    if ((outgrown || folding) && !compacting && Date.now() >= foldAfter) {
      foldSoon = false;
      void compact().catch(() => {});
    }
    // A fold that fell behind (writes that give it few turns, as a seed does) holds the writes back until it is done,
    // so the journal a start replays stays a fraction of the snapshot.
    else if (compacting && journalBytes > Math.max(snapshotBytes, COMPACT_FLOOR)) await compacting.catch(() => {});
  }

  /** The journal's size past which it is folded (see `COMPACT_FLOOR`). */
  function foldThreshold(): number {
    return Math.max(snapshotBytes / 4, COMPACT_FLOOR);
  }

  /** Appends bytes to the journal written to, synced with `fsync`; if that fails, cuts it back to where it was. */
  function append(bytes: Buffer): void {
    if (broken) throw broken;
    checkLock();
    try {
      writeAll(journal, bytes, journalBytes);
      if (options.fsync) fdatasyncSync(journal);
    } catch (error) {
      try {
        ftruncateSync(journal, journalBytes);
      } catch (cause) {
        broken = storageError(cause, `${file}.journal could not be cut back after a failed write, so no more writes are taken`);
      }
      throw error;
    }
    journalBytes += bytes.length;
  }

  function checkLock(): void {
    if (lock?.held()) return;
    broken = new SandboxError(
      'INSUFFICIENT_STORAGE',
      `This server lost its lock on ${file} (${lockPath} was removed or replaced, perhaps for another server): it stopped ` +
        'writing to it, and nothing of this write was kept. Stop this server, make sure no other one uses the file, and start again.',
      ['(storage): lock lost'],
    );
    log(broken.message);
    throw broken;
  }

  /**
   * After a write that failed: the accounts it changed are put back as the files hold them (the last good state), so
   * memory matches the files again, and whoever waits for the write is told it was not stored. Unless the store is
   * broken: then it writes nothing more, and memory is left as it is.
   */
  function undo(accounts: Iterable<string>, error: unknown): never {
    const refused = storageError(error);
    if (!refusing && refused !== broken) log(refused.message); // a lost lock said so already
    refusing = true;
    if (broken) throw refused;
    try {
      const last = readState().state;
      muted = true;
      for (const key of accounts) {
        pending.delete(key);
        restore(key, last.accounts[key] ?? null);
        // An account the files do not hold yet is written whole by the next save.
        if (!last.accounts[key]) pending.set(key, { all: true, header: false, records: new Map() });
      }
    } catch (cause) {
      broken = storageError(cause, `the state in memory could not be put back as ${file} holds it; no more writes are taken`);
      log(broken.message);
    } finally {
      muted = false;
    }
    throw refused;
  }

  /**
   * Folds the journal (the next generation): into the delta file and a new index file while the delta file stays under
   * a share of the snapshot (`major` false), else into a new snapshot and its index file; taken now and written out
   * while later saves go to the next journal. Resolves once both are on disk; one at a time.
   */
  function compact(major = false): Promise<void> {
    compacting ??= fold(major).finally(() => {
      compacting = null;
    });
    return compacting;
  }

  async function fold(major: boolean): Promise<void> {
    if (broken) throw broken;
    checkLock();
    if (!folding) startFold((db.data.generation ?? 0) + 1);
    foldCut = false;
    const wasIndexed = indexed;
    indexed = false;
    // The indexes (what changed since the last index file) and the records, taken in the same turn (`db.write` lays them
    // out at once); each account's indexes then hear how the fold went.
    const indexes = storedIndexes();
    const took = indexes?.map(([key]) => accountIndexes.get(key)!) ?? [];
    const taken = { dirty: replayedDirty(), replaced };
    dirty = new Map();
    replaced = new Set();
    const tables = lazy?.tables;
    const toDelta =
      !major && wasIndexed && indexes !== null && tables !== undefined && tables.size > 0 && taken.replaced.size === 0 && delta.length < baseBytes * DELTA_SHARE;
    options.onFold?.(true);
    try {
      if (toDelta) await foldIntoDelta(taken.dirty, indexes, tables);
      else await foldIntoSnapshot(indexes);
    } catch (error) {
      // What it took is still to be written, before what changed since.
      dirty = mergeDirty(taken.dirty, dirty);
      for (const key of taken.replaced) replaced.add(key);
      for (const kept of took) kept.unfolded(true);
      // The snapshot, delta file (cut back to what the index file names) and index file are the ones before it, whole;
      // the journals hold the rest.
      indexed = wasIndexed;
      if (error !== WRITE_CUT) throw foldFailed(error);
      foldCut = true; // by a stop
      throw error;
    } finally {
      options.onFold?.(false);
    }
    // The maps read their unread buckets from the index file written, and the next fold adds what changes to it.
    if (indexed) {
      const written = foldedIndexes(indexPath, lazyParts!);
      lazy!.tables = written.tables;
      took.forEach((kept, i) => kept.folded(written.indexes.get(indexes![i]![0])));
    } else for (const kept of took) kept.unfolded(false);
    lazyParts = null;
    try {
      renameSync(nextJournalPath, journalPath);
      if (options.fsync) syncFolder(file);
    } catch (error) {
      throw foldFailed(error);
    }
    folding = false;
    foldDelay = FOLD_RETRY_MS;
  }

  /** The tables' parts the last fold laid out, until its index file is read back (see `fold`). */
  let lazyParts: Map<string, TableParts[]> | null = null;

  /**
   * A fold that leaves the snapshot as it is: the records changed since the last fold appended to the delta file, then
   * an index file naming both (a fold that cannot write it fails: the journal it would replace is all that holds those
   * records' changes besides the delta file the index file before it does not name).
   */
  async function foldIntoDelta(records: typeof dirty, indexes: IndexesTaken, tables: LazyState['tables']): Promise<void> {
    const generation = db.data.generation!;
    const batch: DeltaRecord[] = [];
    const changedRecords: ChangedRecord[] = [];
    for (const [key, changed] of records) {
      const account = db.data.accounts[key];
      if (!account) continue;
      for (const record of changed.values()) {
        const [table, id] = record;
        batch.push([key, table, id, (account[table as keyof AccountState] as Record<string, unknown>)[id] ?? null]);
        changedRecords.push(record);
      }
    }
    const heads = Object.fromEntries(Object.entries(db.data.accounts).map(([key, account]) => [key, accountHead(account)]));
    // A record as the journal it was last written to holds it: the one this fold folds, or (after a fold that failed)
    // the next one. Its JSON is copied from there, not made again (a fold at 300,000 payments spent a third of its CPU so).
    const journals = new Map<string, FileRanges>();
    const written = (i: number): Buffer | null => {
      const [, , from, offset, length, crc] = changedRecords[i]!;
      const path = from === generation ? nextJournalPath : from === generation - 1 ? journalPath : null;
      if (path === null) return null;
      try {
        let ranges = journals.get(path);
        if (!ranges) journals.set(path, (ranges = new FileRanges(path)));
        const bytes = ranges.read(offset!, length!);
        // As the journal line had it, or made again (damaged since, or not read whole).
        return bytes.length === length && crc32(bytes) === crc ? bytes : null;
      } catch {
        return null; // made again, as the journal cannot be read
      }
    };
    const appended = await appendDelta(deltaPath, batch, { generation, heads }, delta, () => snapshot.cut, written).finally(() => {
      for (const ranges of journals.values()) ranges.close();
    });
    const { placement } = appended;
    const sections = await writeIndexSections(indexPath, indexes, new Map(), () => snapshot.cut, { tables, placement });
    const stat = statSync(deltaPath);
    await sections.finish(file, generation, snapshotCrc, { length: appended.length, crc: appended.crc, mtimeMs: stat.mtimeMs, ino: stat.ino, ctimeMs: stat.ctimeMs });
    delta = { length: appended.length, crc: appended.crc };
    snapshotBytes = baseBytes + delta.length;
    const parts = new Map(
      Object.keys(db.data.accounts).map((key) => [
        key,
        TABLES.map((table, t): TableParts => {
          const written = tables.get(key)?.[t];
          const batch = placement.get(key)?.get(table);
          const deltas = (written?.deltas ?? []).map((before) => before.places);
          if (batch) deltas.push(Places.of(batch));
          return { start: written?.start ?? 0, end: written?.end ?? 0, places: written?.places ?? Places.empty(), deltas };
        }),
      ]),
    );
    swapTables(parts);
    indexed = true;
  }

  /** A fold into a new snapshot, which holds the delta file's records too, and its index file. */
  async function foldIntoSnapshot(indexes: IndexesTaken | null): Promise<void> {
    // The index file's sections are written before the snapshot is put in place, so a stop can cut the fold short until
    // then (past it, the stop would wait for them: seconds at 300,000 payments); its header once it is in place.
    const index: { sections: IndexSections | null } = { sections: null };
    snapshot.beforeRename = indexes && (async () => void (index.sections = await indexSections(indexes)));
    const written = db.write();
    snapshot.beforeRename = null;
    try {
      await written;
      if (options.fsync) syncFolder(file);
    } catch (error) {
      await index.sections?.abandon();
      throw error;
    }
    // The snapshot holds what the delta file did: a delta file left by a crash now is older than it, and not read.
    rmSync(deltaPath, { force: true });
    delta = { length: 0, crc: 0 };
    snapshotBytes = baseBytes = statSync(file).size;
    snapshotCrc = snapshot.checksum!;
    await splitPlaces(snapshot.placement!);
    swapTables(partsOf(snapshot.placement!));
    // The index file before the journals' swap, so a crash once the fold is seen done (no next journal) finds it; a crash
    // before the swap finds a fold cut short, done again.
    indexed = index.sections !== null && (await finishIndex(index.sections));
    snapshot.placement = null; // read into the tables' places and the index file: no longer needed
  }

  /** The tables read from what a fold wrote (`parts`), but for the records changed since it took them. */
  function swapTables(parts: Map<string, TableParts[]>): void {
    const release = rebase(db.data, file, deltaPath, parts, dirty, replaced);
    lazy?.release();
    lazy = { state: db.data, indexes: new Map(), tables: new Map(), warming: function* () {}, release };
    lazyParts = parts;
  }

  /**
   * The records changed since the last fold, the start's replayed ones first (`replayedChanges`, once): a new record's
   * place among the delta file's is where it was first written.
   */
  function replayedDirty(): typeof dirty {
    if (!replayedChanges) return dirty;
    const replayed: typeof dirty = new Map();
    for (const [key, changes] of replayedChanges) {
      if (changes === null) {
        replaced.add(key);
        continue;
      }
      const places = replayedPlaces.get(key)!;
      const records = new Map<string, ChangedRecord>();
      for (const [i, { table, id }] of changes.entries()) {
        const at = (PLACE + 1) * i;
        const generation = places[at]!;
        records.set(`${table}\u0000${id}`, generation < 0 ? [table, id] : [table, id, generation, places[at + 1], places[at + 2], places[at + 3]]);
      }
      replayed.set(key, records);
    }
    replayedChanges = null;
    replayedPlaces = new Map();
    return mergeDirty(replayed, dirty);
  }

  /** `first` with `then`'s records after its own (a record in both keeps its place in `first`). */
  function mergeDirty(first: typeof dirty, then: typeof dirty): typeof dirty {
    for (const [key, records] of then) {
      const into = first.get(key);
      if (!into) first.set(key, records);
      else for (const [id, record] of records) into.set(id, record);
    }
    return first;
  }

  /** Notes a record changed since the last fold took them (`key`: `table\0id`). */
  function changedRecord(account: string, key: string, record: ChangedRecord): void {
    let records = dirty.get(account);
    if (!records) dirty.set(account, (records = new Map()));
    records.set(key, record);
  }

  /**
   * Writes the sections of the index file of the snapshot being written (cut short with it by a stop); if they cannot
   * be (a full disk), there is no index file: a start reads everything.
   */
  async function indexSections(indexes: IndexesTaken): Promise<IndexSections | null> {
    try {
      return await writeIndexSections(indexPath, indexes, snapshot.placement!, () => snapshot.cut);
    } catch (error) {
      if (error === WRITE_CUT) throw error;
      // The index file there still describes the snapshot in place: it stops matching once the new one takes its place.
      indexFailed(error);
      return null;
    }
  }

  /** Puts the index file of the snapshot just put in place beside it (see `indexSections`). */
  async function finishIndex(sections: IndexSections): Promise<boolean> {
    try {
      await sections.finish(file, db.data.generation!, snapshot.checksum!, null);
      return true;
    } catch (error) {
      rmSync(indexPath, { force: true });
      indexFailed(error);
      return false;
    }
  }

  function indexFailed(error: unknown): void {
    log(`${storageError(error, `writing ${indexPath} failed`).message}; the next start reads the whole state`);
  }

  /** A fold that failed: said, and tried again later (twice as late after each failure in a row). */
  function foldFailed(error: unknown): SandboxError {
    foldAfter = Date.now() + foldDelay;
    const failed = storageError(error, `folding the journal into ${file} failed`);
    log(`${failed.message}; both journals are kept whole, and the fold is tried again in ${foldDelay / 1000} s`);
    foldDelay = Math.min(foldDelay * 2, FOLD_RETRY_MAX_MS);
    return failed;
  }

  /** Opens the next journal, headed with `generation`, and writes to it from now on (the journal before it is whole). */
  function startFold(generation: number): void {
    const opened = openSync(nextJournalPath, 'w');
    const header = checkedLine({ generation });
    try {
      writeAll(opened, header);
      if (options.fsync) {
        fdatasyncSync(opened);
        syncFolder(file);
      }
    } catch (error) {
      closeSync(opened);
      rmSync(nextJournalPath, { force: true });
      throw storageError(error, `folding the journal into ${file} failed`);
    }
    db.data.generation = generation;
    if (journal >= 0) closeSync(journal);
    journal = opened;
    journalBytes = header.length;
    journalChanges = false;
    folding = true;
  }

  /** Every account's head and indexes as they are now, or null if an account has none (no Account was made for it). */
  function storedIndexes(): [string, Record<string, unknown>, StoredIndexes][] | null {
    const accounts: [string, Record<string, unknown>, StoredIndexes][] = [];
    for (const [key, account] of Object.entries(db.data.accounts)) {
      const indexes = accountIndexes.get(key);
      if (!indexes) return null;
      accounts.push([key, accountHead(account), indexes.stored()]);
    }
    return accounts;
  }

  /**
   * The state through the index file, if it matches the snapshot, with each journal not older than it replayed over
   * it (what each replay changed kept in `replayed`, for the accounts to re-index).
   */
  function readIndexed() {
    const kept = readIndexFile(indexPath, file, deltaPath);
    if (!kept) return null;
    // A delta file longer than the index file names holds a batch a fold cut short (the journals hold its records); one
    // the index file does not name is older than the snapshot.
    // (Cut only when longer: a cut changes the file's times even to its own length, and the next start would check its
    // CRC32 rather than trust them.)
    if (kept.delta) {
      if (statSync(deltaPath).size > kept.delta.length) truncateSync(deltaPath, kept.delta.length);
    } else rmSync(deltaPath, { force: true });
    delta = { length: kept.delta?.length ?? 0, crc: kept.delta?.crc ?? 0 };
    snapshotCrc = kept.snapshotCrc;
    const since = new Map<string, RecordChange[] | null>();
    const read = replayJournals(kept.state, since);
    // What the journals hold is not in the delta file yet: the next fold appends it (noted then, not on start).
    replayedChanges = new Map(since);
    return { ...read, lazy: kept, since };
  }

  /**
   * The state as the files hold it: the snapshot, then the delta file's batches newer than it, then each journal not
   * older than them (`current`, `upcoming`: the journals replayed, if they were).
   */
  function readState() {
    const state = normalizeState(snapshot.readSync() ?? emptyState());
    // A batch applied as journal changes are: each account's head (an account new since, made from it), its records.
    for (const batch of readDelta(deltaPath, state.generation ?? 0)?.batches ?? []) {
      for (const [key, head] of Object.entries(batch.heads)) apply(state, [key, state.accounts[key] ? 'header' : 'all', null, head]);
      for (const record of batch.records) apply(state, record);
      state.generation = batch.generation;
    }
    return replayJournals(state);
  }

  function replayJournals(state: SandboxState, since?: Map<string, RecordChange[] | null>) {
    const replayed = new Set<string>();
    const replay = (journal: Journal | null, path: string, ahead = 0) => {
      if (journal === null || journal.generation < (state.generation ?? 0)) return null;
      // A journal goes on from the fold that wrote the files it follows (the next one from the fold under way): one
      // newer than them follows files that are not here (a delta file left out of a copy).
      if (journal.generation > (state.generation ?? 0) + ahead) {
        throw new Error(
          `${path} follows changes that ${file} and its delta file do not hold (generation ${journal.generation}, they ` +
            `${state.generation ?? 0}): a file of the state is missing. Nothing was changed; copy the files together (cp -p '${file}'*)`,
        );
      }
      for (const [s, save] of journal.saves.entries()) {
        const places = journal.places[s]!;
        for (const [i, change] of save.entries()) {
          if (!apply(state, change, since, replayed)) continue;
          let noted = replayedPlaces.get(change[0]);
          if (!noted) replayedPlaces.set(change[0], (noted = []));
          const at = PLACE * i;
          noted.push(places[at]! < 0 ? -1 : journal.generation, places[at]!, places[at + 1]!, places[at + 2]!);
        }
      }
      return journal;
    };
    // Both are read (and checked) before either is applied.
    const [current, upcoming] = [readJournal(journalPath), readJournal(nextJournalPath)];
    return { state, current: replay(current, journalPath), upcoming: replay(upcoming, nextJournalPath, 1) };
  }


  const run = (): Promise<void> => {
    writing = write().finally(() => {
      writing = null;
    });
    return writing;
  };

  /** Writes what changed now, or right after the write already on its way (everything changed since shares it). */
  function saveNow(): Promise<void> {
    if (next) return next;
    if (!writing) return run();
    const after = () => {
      next = null;
      return run();
    };
    next = writing.then(after, after);
    return next;
  }

  /** Lets the files go. The tables may still be read (they close the snapshot once nothing can read them). */
  function release(): void {
    if (journal >= 0) closeSync(journal);
    journal = -1;
    lock?.release();
    lock = null;
  }


  return {
    path: file,
    get writes() {
      return writes;
    },
    get quick() {
      return quick;
    },
    *warming() {
      for (const indexes of accountIndexes.values()) yield* indexes.warming();
      if (lazy) yield* lazy.warming();
      if (foldWhenWarm && lock && folding) void compact().catch(() => {});
      foldWhenWarm = false;
    },
    indexes(account, fresh) {
      const since = replayed.get(account);
      replayed.delete(account);
      const source = fresh || since === null ? undefined : lazy?.indexes.get(account);
      const indexes = new KeptIndexes(source, since ?? []);
      accountIndexes.set(account, indexes);
      return indexes;
    },
    onUndo(fn) {
      restore = fn;
    },
    async load() {
      mkdirSync(dirname(file), { recursive: true });
      lock = takeLock(lockPath, file);
      try {
        const kept = readIndexed();
        const { state, current, upcoming } = kept ?? readState();
        if (kept) {
          lazy = kept.lazy;
          replayed = kept.since;
          indexed = quick = true;
        }
        db.data = normalizeState(state);
        baseBytes = existsSync(file) ? statSync(file).size : 0;
        snapshotBytes = baseBytes + delta.length;
        if (upcoming) {
          // A fold cut short (by a crash, or for want of room) goes on: the next journal is written to, after its last
          // whole line, and the fold is done again now.
          db.data.generation = upcoming.generation;
          journal = openSync(nextJournalPath, 'a');
          ftruncateSync(journal, (journalBytes = upcoming.length));
          folding = true;
        } else if (snapshotBytes > 0 && current) {
          // The journal goes on where it ended, cut back to its last whole save.
          journal = openSync(journalPath, 'a');
          ftruncateSync(journal, (journalBytes = current.length));
          journalChanges = current.saves.length > 0;
          foldSoon = journalBytes > foldThreshold() / 2;
        }
        if (baseBytes === 0) {
          // A new data file exists from the start, where the user was told it is. A fold that fails once its next
          // journal is written to (a full disk) is tried again later: the journals hold everything.
          await compact().catch((error: unknown) => {
            if (!folding) throw error;
          });
        } else if (journal < 0 || folding || !indexed) {
          // Any other fold that is due (no journal to go on with, a fold cut short, a snapshot without its index file)
          // is done once the accounts are made, so that it writes their indexes too (a fold here, before them, wrote no
          // index file: every later start read everything), and once the start's reading ahead is done (`warming`), so
          // the server answers first. Writes go to the next journal meanwhile.
          if (!folding) startFold((db.data.generation ?? 0) + 1);
          foldWhenWarm = true;
        }
      } catch (error) {
        release();
        throw new Error(`cannot read ${file}: ${(error as Error).message}`);
      }
      return db.data;
    },
    changed(account, change) {
      if (muted) return;
      let entry = pending.get(account);
      if (!entry) pending.set(account, (entry = { all: false, header: false, records: new Map() }));
      if ('all' in change) {
        entry.all = true;
        replaced.add(account);
      } else if ('header' in change) entry.header = true;
      else {
        // For the journal's next line and the next fold, under one key.
        const key = `${change.table}\u0000${change.id}`;
        const record: ChangedRecord = [change.table, change.id];
        entry.records.set(key, record);
        changedRecord(account, key, record);
      }
    },
    save() {
      // Group commit: every save asked for in this turn of the event loop (the requests read together) shares one
      // journal write at its end, instead of a write and a syscall each.
      batch ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
        batch = null;
        return saveNow();
      });
      return batch;
    },
    async close() {
      try {
        const small = () => snapshotBytes + journalBytes < (options.foldAtStopBelow ?? FOLD_AT_STOP_BELOW);
        // A stop takes time in proportion to what changed, not to the state: a fold of a large state, under way or set
        // off by the stop's last saves, is cut short (the next start replays both journals over the snapshot and index
        // file it would have replaced, and folds again once the server is idle), unless it put the new snapshot in place.
        snapshot.cut = !small();
        const settled = async () => {
          while (batch || writing || next || compacting) await (batch ?? next ?? writing ?? compacting)!.catch(() => {});
        };
        await settled();
        // What changed and was never saved goes into the journal first, so a fold that fails loses nothing.
        if (pending.size > 0) await saveNow();
        await settled();
        snapshot.cut = false;
        // The journal holds every change since the snapshot: a stop folds it only if the next start could not replay
        // it over an index file (none matches the snapshot), a fold was cut short before (not by this stop), or it is
        // quick (a small state: then into one document, with what the delta file holds).
        if ((folding && !foldCut) || !indexed || ((journalChanges || delta.length > 0) && small())) {
          await compact(small()).catch((error: Error) => {
            throw new Error(`${error.message} at the stop: nothing is lost, the journals beside it keep every change for the next start`);
          });
        }
      } finally {
        release();
      }
    },
  };
}

/**
 * A journal as read on start: the generation its header names, its changes save by save with where each one's value is
 * (`PLACE` numbers each, flat, the offset from the file's start; -1 when its line does not say), and the length of its
 * whole saves.
 */
interface Journal {
  generation: number;
  saves: JournalChange[][];
  places: number[][];
  length: number;
}

/**
 * Reads a journal; null when there is none, or not even a whole header (a journal being opened when a crash came).
 * What each kind of damage does on start:
 * - the last line cut short (no newline, or failing its checksum with no good line after it): a write a crash
 *   interrupted, never acknowledged. It is dropped, and the journal is cut back to its last whole line when written to.
 *   So are the lines of a save of several lines (marked `more` but the last) whose last line is missing.
 * - a line failing its checksum with a good line after it: the file was damaged after it was written. The start is
 *   refused, naming the file, the byte offset and how to recover, and nothing is changed.
 * - lines without a checksum (the release before checksums wrote them) are read as JSON, but only before any checked line.
 */
function readJournal(path: string): Journal | null {
  if (!existsSync(path)) return null;
  const bytes = readFileSync(path);
  const values: Record<string, unknown>[] = [];
  const starts: number[] = [];
  let length = 0;
  let checked = false;
  let damage: { at: number; line: number } | null = null;
  let n = 0;
  for (let start = 0, end = bytes.indexOf(10); end >= 0; start = end + 1, end = bytes.indexOf(10, start)) {
    n++;
    const line = readLine(bytes.subarray(start, end));
    if (line.kind === 'damaged' || (line.kind === 'legacy' && checked)) {
      damage ??= { at: start, line: n };
      continue;
    }
    if (damage) {
      throw new Error(
        `${path} is damaged at byte ${damage.at} (line ${damage.line}): that line does not match its checksum, and good lines ` +
          `follow it. Nothing was changed. Keep a copy of the file; to start with what comes before the damage (losing ` +
          `the changes from that line on), cut it there: truncate -s ${damage.at} '${path}'`,
      );
    }
    checked ||= line.kind === 'checked';
    const value = line.value as Record<string, unknown>;
    if (values.length > 0 && !Array.isArray(value.c)) {
      throw new Error(`${path} is not a journal va-sandbox wrote (its lines are JSON, but not the journal's); nothing was changed`);
    }
    values.push(value);
    starts.push(start);
    // A save ends with a line not marked `more`: the journal is whole up to there.
    if (value.more !== true) length = end + 1;
  }
  const [header, ...lines] = values;
  if (header === undefined) return null;
  if (typeof header.generation !== 'number') {
    throw new Error(`${path} is not a journal va-sandbox wrote (its lines are JSON, but not the journal's); nothing was changed`);
  }
  const saves: JournalChange[][] = [];
  const places: number[][] = [];
  let save: JournalChange[] = [];
  let placed: number[] = [];
  for (const [n, line] of lines.entries()) {
    const changes = line.c as JournalChange[];
    save.push(...changes);
    // Lines written before they said where their values are (`p`) leave them to be made again.
    const p = Array.isArray(line.p) && line.p.length === PLACE * changes.length ? (line.p as number[]) : null;
    for (let i = 0; i < PLACE * changes.length; i += PLACE) placed.push(p ? starts[n + 1]! + p[i]! : -1, p ? p[i + 1]! : -1, p ? p[i + 2]! : -1);
    if (line.more === true) continue;
    saves.push(save);
    places.push(placed);
    save = [];
    placed = [];
  }
  return { generation: header.generation, saves, places, length };
}

/**
 * Applies a journal change to a state; with `since`, notes each record's change there, by account (null: replaced
 * whole), and in `replayed` the records it put (a new record's first change replaced nothing). True when it noted one.
 */
function apply(
  state: SandboxState,
  [key, table, id, value, created]: JournalChange,
  since?: Map<string, RecordChange[] | null>,
  replayed?: Set<string>,
): boolean {
  if (table === 'all') {
    if (value === null) delete state.accounts[key];
    else state.accounts[key] = normalizeAccount(value as AccountState);
    since?.set(key, null);
    return false;
  }
  const account = state.accounts[key];
  if (!account) return false;
  if (table === 'header') {
    Object.assign(account, value);
    return false;
  }
  const records = account[table as keyof AccountState] as Record<string, unknown>;
  const noted = since !== undefined && since.get(key) !== null;
  if (noted) {
    let changes = since.get(key);
    if (!changes) since.set(key, (changes = []));
    const replayedKey = `${key}\u0000${table}\u0000${id}`;
    const before = created === 1 && !replayed!.has(replayedKey) ? undefined : records[id!];
    replayed!.add(replayedKey);
    changes.push({ table, id, before, after: value ?? undefined } as RecordChange);
  }
  if (value === null) delete records[id!];
  else records[id!] = value;
  return noted;
}

/**
 * Writes every byte at `position` (a single write may take only part of a large buffer). At a position, not at the
 * descriptor's: after a failed write cut the file back, the next one goes where it now ends, leaving no gap.
 */
function writeAll(fd: number, bytes: Buffer, position = 0): void {
  for (let offset = 0; offset < bytes.length; ) offset += writeSync(fd, bytes, offset, bytes.length - offset, position + offset);
}

/** Syncs the folder of a file, so a file created or renamed there survives a crash of the machine. */
function syncFolder(file: string): void {
  const fd = openSync(dirname(file), 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** A failed write as the client is told it: `INSUFFICIENT_STORAGE` (507), naming why; `what` failed, if not a write. */
function storageError(error: unknown, what?: string): SandboxError {
  if (error instanceof SandboxError) return error;
  const { code, message } = error as NodeJS.ErrnoException;
  const why = code === 'ENOSPC' || code === 'EDQUOT' ? 'no space left on the disk' : message;
  const text = what
    ? `${what} (${why})`
    : `The write could not be stored (${why}): nothing of it was kept. Writes are taken again once they can be stored.`;
  return new SandboxError('INSUFFICIENT_STORAGE', text, [`(storage): ${code ?? message}`]);
}

export function memoryStore(): Store {
  const db = new Low<SandboxState>(new Memory(), emptyState());
  return {
    path: null,
    writes: 0,
    quick: false,
    warming: () => [],
    indexes: memoryIndexes,
    async load() {
      await db.read();
      return db.data;
    },
    changed: () => {},
    save: () => db.write(),
    onUndo: () => {},
    close: async () => {},
  };
}

/** The lock file, held open: `held` checks that the file at its path is still the one this server made. */
interface Lock {
  held(): boolean;
  release(): void;
}

/** The locks this process holds, so a second server in the same process is refused too. */
const held = new Set<string>();

function takeLock(lock: string, file: string): Lock {
  let fd = create(lock);
  if (fd < 0) {
    const owner = Number(readFileSync(lock, 'utf8'));
    if (held.has(lock) || (owner !== process.pid && isAlive(owner))) {
      throw new StoreLockedError(
        `${file} is in use by another va-sandbox server (pid ${owner}); stop it, or start with another --data or --memory`,
      );
    }
    // The owner died without cleaning up (a crash or SIGKILL): the lock is stale, take it over (a file of our own).
    rmSync(lock, { force: true });
    fd = create(lock);
    if (fd < 0) throw new StoreLockedError(`${file} was just taken by another va-sandbox server; stop it, or start with another --data`);
  }
  held.add(lock);
  const { ino, dev } = fstatSync(fd);
  const ours = () => {
    const now = statSync(lock, { throwIfNoEntry: false });
    return now?.ino === ino && now.dev === dev;
  };
  return {
    held: ours,
    release() {
      held.delete(lock);
      if (ours()) unlinkSync(lock);
      closeSync(fd);
    },
  };
}

/** Creates the lock file with this process's id, held open; -1 if it exists. */
function create(lock: string): number {
  let fd: number;
  try {
    fd = openSync(lock, 'wx');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return -1;
    throw error;
  }
  writeAll(fd, Buffer.from(String(process.pid)));
  return fd;
}

function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
