/**
 * The state database: one SQLite file (`node:sqlite`, WAL mode), a table per kind of record, named with the
 * contract's words, each record a row of readable JSON (`records.ts`; `docs/storage.md` has queries to read it by hand),
 * its schema the numbered migrations (`schema.ts`). Writes go through group commit (`group.ts`): nothing is answered
 * before it is stored, and a write that cannot be stored (a full disk) is refused whole with 507. A reset or an import
 * gives the account a new id: the old one's rows are swept away a slice at a time after (`accounts.ts`).
 *
 * What each kind of damage does on start: SQLite's own recovery replays the WAL's frames up to the first whose checksum
 * fails (a torn last transaction was never acknowledged; a damaged or lost WAL loses what came after); the start's
 * checks (`start-check.ts`) then refuse a damaged file with one line; a WAL without its database is refused rather
 * than taken for a new state. A record whose text does not match its checksum (`crc`), or does not parse, is a named
 * 500 (`UnreadableRecord`) when it is read: `docs/reliability.md` says which damage is found when.
 */
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { DatabaseSync as Database } from 'node:sqlite';
import type { Storage } from '../../core/store/repository.js';
import { migratePreviousRelease, previousDataFile } from '../previous-release/migrate.js';
import { DEFAULT_JOURNAL } from '../runtime/defaults.js';
import type { ProgressBoard } from '../runtime/progress.js';
import { accountIds, importAll, NEW_HEAD, replaceAccount, STAGED, sweeper, writeHeadOf } from './accounts.js';
import { notAFile } from './file-kind.js';
import { groupCommit } from './group.js';
import { type JournalStore, journalRows } from './journal.js';
import { type Lock, takeLock } from './lock.js';
import { open } from './open.js';
import { checksum, headOf, readAccount, type Sql, statementCache } from './records.js';
import { repository } from './repository.js';
import {
  CHECK_AT_START_BYTES,
  type CheckAside,
  checkAside,
  INTEGRITY_AT_START_BYTES,
  notADatabase,
  StoreDamagedError,
  startRefusal,
} from './start-check.js';
import { storedRows } from './stored-rows.js';

/** When an account next has work: its due work (an expiry, a delayed CVU), by real time, and whether it has deliveries to send. */
interface Wake {
  dueAt: number | null;
  sending: boolean;
}

/**
 * Where the server keeps its state: each account's head and records (`Storage`, the core's port), written into the
 * group's transaction as the core writes them, and `save`d (committed) before any of the group's answers.
 */
export interface Store extends Storage {
  readonly path: string | null;
  /**
   * Resolves once the file's structure is checked (`PRAGMA quick_check`), or rejects with the line a damaged file is
   * refused with: a small file is checked before the store opens, a large one beside the running server.
   */
  readonly checked: Promise<void>;
  /** The accounts whose due work falls due by `now` (real time), or that have deliveries to send. */
  waking(now: number): string[];
  /** When the next due work of any account falls due (real time), or null. */
  nextDueAt(): number | null;
  /** Resolves once every write so far is committed; rejects with `INSUFFICIENT_STORAGE` if it could not be (see above). */
  save(): Promise<void>;
  /**
   * Runs a read where it sees only committed writes: at once when no group is open, else right after the open group
   * commits or is rolled back (before anything else runs), so no answer shows a write that may still be refused.
   */
  committed<T>(read: () => T): Promise<T>;
  /**
   * Set by the owner of the state: what to do with an account whose writes were rolled back (read its head again), and
   * when an account next has work, written beside it at each commit.
   */
  attach(owner: { undo: (key: string) => void; wake: (key: string) => Wake }): void;
  /** The request journal (contract part 9): its writes join the open group; read it through `committed`. */
  readonly journal: JournalStore;
  close(): Promise<void>;
}

export interface StoreOptions {
  /** `synchronous=FULL`: each commit is synced, and survives a crash of the machine (NORMAL: of the process). */
  fsync?: boolean;
  log?: (line: string) => void;
  /** Where a migration at start says how far it got. */
  progress?: ProgressBoard;
  /** `--journal`: the newest requests kept per account (`DEFAULT_JOURNAL` when absent; 0 keeps none). */
  journal?: number;
}

export class StoreLockedError extends Error {}

export { startRefusal };

/**
 * The database at `path` (a file), made if new; a data set of the previous release there or beside it is copied in
 * first (when `path` names the previous release's data file itself, the database is `<name>.db` beside it).
 */
export function fileStore(path: string, options: StoreOptions = {}): Store {
  const what = existsSync(path) ? notAFile(statSync(path)) : null;
  if (what !== null) throw notADatabase(path, what);
  const previous = previousDataFile(resolve(path));
  const file = previous === resolve(path) ? `${previous.replace(/\.json$/, '')}.db` : resolve(path);
  const log = options.log ?? (() => {});
  mkdirSync(dirname(file), { recursive: true });
  const lock = takeLock(`${file}.lock`, file, (message) => new StoreLockedError(message), log);
  try {
    if (!existsSync(file) && existsSync(`${file}-wal`)) {
      throw new StoreDamagedError(
        `${file}-wal is there without its database ${file}: restore the database beside it, or move the WAL away to start afresh`,
      );
    }
    // A larger file is checked whole beside the server rather than before it answers (see `checkAside`).
    const size = existsSync(file) ? statSync(file).size : 0;
    const check =
      size <= INTEGRITY_AT_START_BYTES ? 'integrity_check' : size <= CHECK_AT_START_BYTES ? 'quick_check' : null;
    const db = open(file, options.fsync ?? false, check);
    const isEmpty = () => db.prepare('SELECT count(*) AS n FROM accounts').get()!.n === 0;
    if (previous)
      migratePreviousRelease(
        previous,
        file,
        isEmpty,
        (accounts, report) => importAll(db, accounts, report),
        log,
        options.progress,
      );
    return sqliteStore(
      db,
      file,
      lock,
      check === 'integrity_check' ? null : checkAside(file),
      options.journal ?? DEFAULT_JOURNAL,
      log,
    );
  } catch (error) {
    lock.release();
    throw error;
  }
}

/** A database in memory (`--memory`, `startSandbox()`, the msw handlers): the same store, kept nowhere. */
export function memoryStore(journal = DEFAULT_JOURNAL): Store {
  return sqliteStore(open(':memory:', false, null), null, null, null, journal);
}

/** The owner of the state, as `Store.attach` sets it. */
type Owner = Parameters<Store['attach']>[0];

function sqliteStore(
  db: Database,
  path: string | null,
  lock: Lock | null,
  aside: CheckAside | null,
  keep: number,
  log: (line: string) => void = () => {},
): Store {
  const checked = aside?.done ?? Promise.resolve();
  checked.catch(() => {}); // whoever runs the server reads it (`Store.checked`)
  const sql = statementCache(db);
  const file = path ?? 'memory';
  const ids = accountIds(sql);
  let owner: Owner | null = null;
  const { groups, write, retired } = accountWrites(db, path, sql, ids, () => owner, log);
  const journal = journalRows(sql, groups.write, keep);

  return {
    path,
    checked,
    head: (key) => {
      const row = sql('SELECT head, crc FROM accounts WHERE key = ?').get(key) as
        | { head: string; crc: number }
        | undefined;
      return row && headOf(file, key, row);
    },
    writeHead: (key, head) => write(key, (account) => writeHeadOf(sql, account, head)),
    records: (key) =>
      repository(
        sql,
        file,
        () => ids.of(key),
        (run) => write(key, run),
        ids.epoch,
      ),
    read: (key, unreadable) => readAccount(sql, key, file, unreadable),
    rows: (key, table, where, unreadable) => storedRows(sql, file, () => ids.of(key), table, where, unreadable),
    replace: (key, state) =>
      replaceAccount(sql, write, groups.save, retired.retire, key, state, (id) => ids.set(key, id)),
    waking: (now) =>
      (
        sql('SELECT key FROM accounts WHERE sending UNION SELECT key FROM accounts WHERE due_at <= ?').all(now) as {
          key: string;
        }[]
      ).map((row) => row.key),
    nextDueAt: () => (sql('SELECT min(due_at) AS at FROM accounts').get() as { at: number | null }).at,
    save: groups.save,
    committed: groups.committed,
    journal,
    attach(next) {
      owner = next;
      // What a replace left before a stop: a staged account it did not finish, rows of retired ids.
      const staged = sql(`SELECT id FROM accounts WHERE instr(key, ?) > 0`).all(STAGED) as { id: number }[];
      if (staged.length > 0) write(null, () => staged.forEach(({ id }) => void retired.retire(id)));
      else retired.sweep();
    },
    /**
     * Commits what is left and lets the file go; a second close does nothing. A check still running beside the server
     * is ended after the file is closed: its read then keeps the close from copying the log the check held back into
     * the file (the next start reads it as a crash's), so a stop never waits on work the size of the run.
     */
    async close() {
      retired.close();
      if (!db.isOpen) return;
      await groups.save().catch(() => {});
      db.close();
      await aside?.stop();
      lock?.release();
    },
  };
}

/**
 * The store's writes: the group commit, each account's row made at its first write (its wake written beside it when
 * the group commits), and the sweep of retired ids after a group is stored.
 */
function accountWrites(
  db: Database,
  path: string | null,
  sql: Sql,
  ids: ReturnType<typeof accountIds>,
  owner: () => Owner | null,
  log: (line: string) => void,
) {
  /** The accounts written in the open transaction: their wake is written beside them when it commits. */
  const touched = new Set<string>();
  const groups = groupCommit(db, path, log, {
    committing() {
      for (const key of touched) {
        const wake = owner()?.wake(key) ?? { dueAt: null, sending: false };
        sql('UPDATE accounts SET due_at = ?, sending = ? WHERE key = ?').run(wake.dueAt, wake.sending ? 1 : 0, key);
      }
    },
    ended(stored) {
      const keys = [...touched];
      touched.clear();
      if (stored) return retired.sweep();
      for (const key of keys) {
        ids.forget(key); // a row made or replaced in the group is gone with it, and what was known empty
        owner()?.undo(key);
      }
    },
  });
  /** Runs a write of an account in the group's transaction with the account's id (its row made at its first write). */
  function write<T>(key: string | null, run: (account: number) => T): T {
    return groups.write(() => {
      if (key === null) return run(0);
      if (!touched.has(key)) {
        touched.add(key);
        sql('INSERT INTO accounts (key, head, crc) VALUES (?, ?, ?) ON CONFLICT (key) DO NOTHING').run(
          key,
          NEW_HEAD,
          checksum(NEW_HEAD),
        );
      }
      return run(ids.of(key)!);
    });
  }
  const retired = sweeper(sql, write);
  return { groups, write, retired };
}

export { readAccount };
