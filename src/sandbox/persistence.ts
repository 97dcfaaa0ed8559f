import {
  closeSync,
  existsSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { dirname, resolve } from 'node:path';
import { Low, Memory } from 'lowdb';
import { readIndexFile, tableEntries, writeIndexFile, type LazyState } from './index-file.js';
import { SnapshotFile } from './snapshot-file.js';
import {
  accountHead,
  emptyState,
  INDEXES,
  normalizeAccount,
  normalizeState,
  TABLES,
  type AccountState,
  type SandboxState,
  type StateChange,
  type StoredIndexes,
} from '../core/index.js';

/** Where the server keeps its state: `load` once, hear of each change, then `save` before every acknowledgement. */
export interface Store {
  readonly path: string | null;
  load(): Promise<SandboxState>;
  /** A change to the state since the last save (the core reports every one). */
  changed(account: string, change: StateChange): void;
  /** Resolves once the state as it is now is on disk. Calls made in one turn of the event loop, or during a write, share one. */
  save(): Promise<void>;
  close(): Promise<void>;
  /** How many times the files were written: concurrent saves share writes. */
  readonly writes: number;
  /** Whether `load` read the state through the index file (records and indexes when first asked). */
  readonly quick: boolean;
  /** After a quick load: reads what is left of the index file a bucket at a time, a step each, for idle moments. */
  warming(): Iterable<void>;
}

export class StoreLockedError extends Error {}

/** One journal line: the changes of one save, as `[account, table | "header" | "all", id, value | null]`. */
type JournalChange = [string, string, string | null, unknown];

/** The journal is compacted into the snapshot once it outgrows the snapshot (and this floor). */
const COMPACT_FLOOR = 8 * 1024 * 1024;
/** A save of more records than this (a seed, an import) goes straight into a new snapshot, not the journal. */
const LARGE_SAVE = 10_000;

/**
 * The state as a snapshot (a JSON document read and written by lowdb through `SnapshotFile`) plus an append-only
 * journal beside it (`<file>.journal`): each save appends one line with just the records that changed, so a write
 * costs the size of the change, not of the whole state. A line cut short by a crash was never acknowledged and is
 * dropped. lowdb is safe with one writer only, so the server takes `<file>.lock` and a second server is refused.
 *
 * When the journal outgrows the snapshot it is folded into a new snapshot in the background: the snapshot of
 * generation g+1 is taken at once and written out while saves go on into a new journal (`<file>.journal.next`,
 * headed g+1), which then replaces the old one. On start, each journal is replayed if its generation is not older
 * than the snapshot's, so a crash at any step loses nothing that was acknowledged.
 *
 * A clean stop also writes the index file (`<file>.index`, see `writeIndexFile`): the next start, finding the
 * journal without changes, reads records and indexes from it when first asked instead of reading everything. Any
 * other start (after a crash, or without an index file that matches the snapshot) reads the whole state.
 */
export function fileStore(path: string): Store {
  const file = resolve(path);
  const lock = `${file}.lock`;
  const journalPath = `${file}.journal`;
  const nextJournalPath = `${file}.journal.next`;
  const indexPath = `${file}.index`;
  const snapshot = new SnapshotFile(file, undefined, tableEntries);
  const db = new Low<SandboxState>(snapshot, emptyState());
  const pending = new Map<string, { all: boolean; header: boolean; records: Map<string, [string, string]> }>();
  let pendingRecords = 0;
  let journal = -1;
  let journalBytes = 0;
  let snapshotBytes = 0;
  let compacting: Promise<void> | null = null;
  let writing: Promise<void> | null = null;
  let next: Promise<void> | null = null;
  let batch: Promise<void> | null = null;
  let writes = 0;
  /** Whether the journal holds changes after its header, and whether the index file describes the snapshot. */
  let journalChanges = false;
  let indexed = false;
  /** The state as read through the index file, until a compaction has read it all. */
  let lazy: LazyState | null = null;
  let quick = false;

  /** One line with every change since the last one, values read now (records are replaced whole, never edited). */
  function drain(): string | null {
    if (pending.size === 0) return null;
    const changes: JournalChange[] = [];
    for (const [key, change] of pending) {
      const account = db.data.accounts[key];
      if (change.all || !account) {
        changes.push([key, 'all', null, account ?? null]);
        continue;
      }
      if (change.header) changes.push([key, 'header', null, accountHead(account)]);
      for (const [table, id] of change.records.values()) {
        changes.push([key, table, id, (account[table as keyof AccountState] as Record<string, unknown>)[id] ?? null]);
      }
    }
    pending.clear();
    pendingRecords = 0;
    return `${JSON.stringify({ c: changes })}\n`;
  }

  async function write(): Promise<void> {
    if (pendingRecords > LARGE_SAVE) {
      // A compaction already under way took its snapshot before these changes: they need one of their own.
      if (compacting) await compacting;
      return compact();
    }
    const line = drain();
    if (line === null) return;
    writes++;
    const bytes = Buffer.from(line);
    writeAll(journal, bytes);
    journalBytes += bytes.length;
    journalChanges = true;
    if (journalBytes > Math.max(snapshotBytes, COMPACT_FLOOR)) void compact().catch(() => {});
  }

  /**
   * Folds everything into a new snapshot (the next generation), taken now and written out while later saves go
   * to the next journal. Resolves once the snapshot is on disk; one at a time. `withIndex`: the index file is
   * written for it too (on a clean stop, when no save can follow); otherwise the old one no longer applies.
   */
  function compact(withIndex = false): Promise<void> {
    compacting ??= (async () => {
      try {
        pending.clear(); // the snapshot taken below holds them; whoever saved them waits for it
        pendingRecords = 0;
        const generation = (db.data.generation ?? 0) + 1;
        db.data.generation = generation;
        const previous = journal;
        journal = openSync(nextJournalPath, 'w');
        journalBytes = 0;
        writeHeader();
        // The indexes are taken in the same turn as the snapshot's records (`db.write` lays them out at once).
        const indexes = withIndex ? storedIndexes() : null;
        snapshot.locate = indexes !== null;
        // Tables still read through the index file: a last compaction copies their records not written since from
        // the old snapshot; any other reads them whole first, as they are used after it.
        if (!withIndex) lazy?.readWhole();
        const written = db.write();
        lazy?.release();
        lazy = null;
        await written;
        snapshotBytes = statSync(file).size;
        renameSync(nextJournalPath, journalPath);
        closeSync(previous);
        journalChanges = false;
        if (indexes) writeIndexFile(indexPath, file, generation, indexes, snapshot.placement!);
        else rmSync(indexPath, { force: true });
        indexed = indexes !== null;
      } finally {
        compacting = null;
      }
    })();
    return compacting;
  }

  /** Every account's head and indexes as they are now, or null if an account has none (no Account was made for it). */
  function storedIndexes(): [string, Record<string, unknown>, StoredIndexes][] | null {
    const accounts: [string, Record<string, unknown>, StoredIndexes][] = [];
    for (const [key, account] of Object.entries(db.data.accounts)) {
      const indexes = account[INDEXES]?.();
      if (!indexes) return null;
      accounts.push([key, accountHead(account), indexes]);
    }
    return accounts;
  }

  /** The state through the index file, when the journal after the snapshot holds no change and the index file matches. */
  function readIndexed(): LazyState | null {
    if (existsSync(nextJournalPath) || !existsSync(journalPath) || statSync(journalPath).size > 1024) return null;
    const bytes = readFileSync(journalPath);
    const generation = journalGeneration(bytes);
    return bytes.indexOf(10) !== bytes.length - 1 || generation === undefined ? null : readIndexFile(indexPath, file, generation);
  }

  function writeHeader(): void {
    const header = Buffer.from(`${JSON.stringify({ generation: db.data.generation ?? 0 })}\n`);
    writeAll(journal, header);
    journalBytes += header.length;
  }

  /** Applies a journal if it is not older than the snapshot; returns whether it was applied. */
  function replay(at: string): boolean {
    if (!existsSync(at)) return false;
    const bytes = readFileSync(at);
    const generation = journalGeneration(bytes);
    if (generation === undefined || generation < (db.data.generation ?? 0)) return false;
    let end = bytes.indexOf(10);
    // A line cut short by a crash (no newline, or not JSON) was never acknowledged: it ends the journal.
    for (let start = end + 1; (end = bytes.indexOf(10, start)) >= 0; start = end + 1) {
      const line = parseLine(bytes.subarray(start, end)) as { c: JournalChange[] } | null;
      if (!line) break;
      for (const change of line.c) apply(db.data, change);
    }
    return true;
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
    next = writing.then(
      () => {
        next = null;
        return run();
      },
      () => {
        next = null;
        return run();
      },
    );
    return next;
  }

  return {
    path: file,
    get writes() {
      return writes;
    },
    get quick() {
      return quick;
    },
    warming: () => lazy?.warming() ?? [],
    async load() {
      mkdirSync(dirname(file), { recursive: true });
      takeLock(lock, file);
      try {
        lazy = readIndexed();
        if (lazy) {
          db.data = normalizeState(lazy.state);
          snapshotBytes = statSync(file).size;
          journal = openSync(journalPath, 'a');
          journalBytes = statSync(journalPath).size;
          indexed = quick = true;
          return db.data;
        }
        await db.read();
        normalizeState(db.data);
        snapshotBytes = existsSync(file) ? statSync(file).size : 0;
        const replayed = replay(journalPath);
        const interrupted = replay(nextJournalPath);
        // A new data file exists from the start, where the user was told it is; a compaction cut short by a crash
        // is done again. Otherwise the journal goes on where it ended, cut back to its last whole line.
        if (snapshotBytes === 0 || interrupted || !replayed) {
          journal = openSync(journalPath, 'a');
          await compact();
        } else {
          journal = openSync(journalPath, 'a');
          const bytes = readFileSync(journalPath);
          journalBytes = lastWholeLine(bytes);
          ftruncateSync(journal, journalBytes);
          journalChanges = bytes.indexOf(10) + 1 < journalBytes;
        }
      } catch (error) {
        lazy?.release();
        if (journal >= 0) closeSync(journal);
        releaseLock(lock);
        throw new Error(`cannot read ${file}: ${(error as Error).message}`);
      }
      return db.data;
    },
    changed(account, change) {
      let entry = pending.get(account);
      if (!entry) pending.set(account, (entry = { all: false, header: false, records: new Map() }));
      if ('all' in change) {
        entry.all = true;
        // A whole account (an import) counts by its records: a large one goes into a snapshot, not one journal line.
        const replaced = db.data.accounts[account];
        for (const table of TABLES) pendingRecords += replaced ? Object.keys(replaced[table]).length : 0;
      }
      else if ('header' in change) entry.header = true;
      else {
        entry.records.set(`${change.table}\u0000${change.id}`, [change.table, change.id]);
        pendingRecords++;
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
      while (batch || writing || next || compacting) await (batch ?? next ?? writing ?? compacting);
      // A clean stop leaves the whole state in the data file alone, with the index file for a quick start.
      if (journalChanges || pending.size > 0 || !indexed) await compact(true);
      closeSync(journal);
      lazy?.release();
      lazy = null;
      journal = -1;
      releaseLock(lock);
    },
  };
}

/** The length of a journal up to its last whole line (what a crash may have left after it was never acknowledged). */
function lastWholeLine(bytes: Buffer): number {
  let valid = 0;
  for (let end = bytes.indexOf(10); end >= 0 && parseLine(bytes.subarray(valid, end)) !== null; end = bytes.indexOf(10, valid)) {
    valid = end + 1;
  }
  return valid;
}

/** The generation a journal's header (its first line) names; undefined without a whole header. */
function journalGeneration(bytes: Buffer): number | undefined {
  const end = bytes.indexOf(10);
  return end < 0 ? undefined : (parseLine(bytes.subarray(0, end)) as { generation?: number } | null)?.generation;
}

function parseLine(bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    return null;
  }
}

function apply(state: SandboxState, [key, table, id, value]: JournalChange): void {
  if (table === 'all') {
    if (value === null) delete state.accounts[key];
    else state.accounts[key] = normalizeAccount(value as AccountState);
    return;
  }
  const account = state.accounts[key];
  if (!account) return;
  if (table === 'header') {
    Object.assign(account, value);
    return;
  }
  const records = account[table as keyof AccountState] as Record<string, unknown>;
  if (value === null) delete records[id!];
  else records[id!] = value;
}

/** Writes every byte (a single write may take only part of a large buffer). */
function writeAll(fd: number, bytes: Buffer): void {
  for (let offset = 0; offset < bytes.length; ) offset += writeSync(fd, bytes, offset);
}

export function memoryStore(): Store {
  const db = new Low<SandboxState>(new Memory(), emptyState());
  return {
    path: null,
    writes: 0,
    quick: false,
    warming: () => [],
    async load() {
      await db.read();
      return db.data;
    },
    changed: () => {},
    save: () => db.write(),
    close: async () => {},
  };
}

/** The locks this process holds, so a second server in the same process is refused too. */
const held = new Set<string>();

function takeLock(lock: string, file: string): void {
  try {
    writeFileSync(lock, String(process.pid), { flag: 'wx' });
    held.add(lock);
    return;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const owner = Number(readFileSync(lock, 'utf8'));
  if (held.has(lock) || (owner !== process.pid && isAlive(owner))) {
    throw new StoreLockedError(
      `${file} is in use by another va-sandbox server (pid ${owner}); stop it, or start with another --data or --memory`,
    );
  }
  // The owner died without cleaning up (a crash or SIGKILL): the lock is stale, take it over.
  writeFileSync(lock, String(process.pid));
  held.add(lock);
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

function releaseLock(lock: string): void {
  held.delete(lock);
  try {
    if (Number(readFileSync(lock, 'utf8')) === process.pid) unlinkSync(lock);
  } catch {
    // Already gone: nothing to release.
  }
}
