/**
 * The state database: one SQLite file (`node:sqlite`, WAL mode), a table per kind of record, named with the
 * contract's words, each record a row of readable JSON (`records.ts`; `docs/storage.md` has queries to read it by hand).
 *
 * Writes: each write of the core goes at once into the open transaction, which the writes of one turn of the event
 * loop share (group commit); `save` resolves once it is committed, so nothing is answered before it is stored. A
 * write or commit that fails (a full disk) rolls the group back whole: the accounts it touched read their heads again
 * (`attach`'s `undo`), and every write and save of the group is refused with `INSUFFICIENT_STORAGE`. Writes succeed
 * again as soon as there is room, with no restart. Reads wait for the open group to end (`committed`): they never see
 * its writes before they are stored. A reset or an import gives the account a new id: the old one's
 * rows are swept away a slice at a time after (`retired`).
 *
 * What each kind of damage does on start: SQLite's own recovery replays the WAL's frames up to the first whose checksum
 * fails (a torn last transaction was never acknowledged; a damaged or lost WAL loses what came after); the start's
 * checks (`start-check.ts`) then refuse a damaged file with one line; a WAL without its database is refused rather
 * than taken for a new state. A record whose JSON does not parse is a named 500 (`UnreadableRecord`); one changed but
 * still parsing is not detected (SQLite keeps no checksum of page contents): `docs/reliability.md` says so.
 */
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import type { DatabaseSync as Database, StatementSync } from 'node:sqlite';
import { accountHead, emptyAccountState, normalizeAccount, SandboxError, TABLES, type AccountState } from '../../core/index.js';
import type { AccountHead, Storage } from '../../core/repository.js';
import { takeLock, type Lock } from './lock.js';
import { CHECK_AT_START_BYTES, checkAside, damaged, INTEGRITY_AT_START_BYTES, layoutVersion, problemsOf, startRefusal, StoreDamagedError, writable } from './start-check.js';
import { SLICE_MS } from '../give-way.js';
import type { ProgressBoard } from '../progress.js';
import { migratePreviousRelease, previousDataFile } from './migrate.js';
import { checksum, headOf, putRecord, readAccount, repository, TABLE_NAMES, writeRecords, type Sql } from './records.js';
import { migrate, MIGRATIONS, withFunctions } from './schema.js';

/**
 * node:sqlite, loaded without Node 22's "SQLite is an experimental feature" warning (24 and later print none): the
 * sandbox relies on it on purpose, from the 22.13 floor on, in the CLI and in code that embeds it (startSandbox, msw).
 */
const DatabaseSync = ((): typeof Database => {
  const emitWarning = process.emitWarning;
  process.emitWarning = (warning: string | Error, ...rest: unknown[]) => {
    const message = warning instanceof Error ? warning.message : warning;
    if (!/\bSQLite\b/.test(message)) (emitWarning as (...args: unknown[]) => void).call(process, warning, ...rest);
  };
  try {
    return (createRequire(import.meta.url)('node:sqlite') as typeof import('node:sqlite')).DatabaseSync;
  } finally {
    process.emitWarning = emitWarning;
  }
})();

/** When an account next has work: its due work (an expiry, a delayed CVU), by real time, and whether it has deliveries to send. */
export interface Wake {
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
  close(): Promise<void>;
}

/** A group of writes sharing one transaction (see `Store.save`), and the reads waiting for it to end (`Store.committed`). */
interface Group {
  promise: Promise<void>;
  failed: SandboxError | null;
  reads: (() => void)[];
}

export interface StoreOptions {
  /** `synchronous=FULL`: each commit is synced, and survives a crash of the machine (NORMAL: of the process). */
  fsync?: boolean;
  log?: (line: string) => void;
  /** Where a migration at start says how far it got. */
  progress?: ProgressBoard;
}

export class StoreLockedError extends Error {}

export { startRefusal, StoreDamagedError };

/**
 * The database at `path` (a file), made if new; a data set of the previous release there or beside it is copied in
 * first (when `path` names the previous release's data file itself, the database is `<name>.db` beside it).
 */
export function fileStore(path: string, options: StoreOptions = {}): Store {
  const previous = previousDataFile(resolve(path));
  const file = previous === resolve(path) ? previous.replace(/\.json$/, '') + '.db' : resolve(path);
  const log = options.log ?? (() => {});
  mkdirSync(dirname(file), { recursive: true });
  const lock = takeLock(`${file}.lock`, file, (message) => new StoreLockedError(message), log);
  try {
    if (!existsSync(file) && existsSync(`${file}-wal`)) {
      throw new StoreDamagedError(`${file}-wal is there without its database ${file}: restore the database beside it, or move the WAL away to start afresh`);
    }
    // A larger file is checked whole beside the server rather than before it answers (see `checkAside`).
    const size = existsSync(file) ? statSync(file).size : 0;
    const check = size <= INTEGRITY_AT_START_BYTES ? 'integrity_check' : size <= CHECK_AT_START_BYTES ? 'quick_check' : null;
    const db = open(file, options.fsync ?? false, check);
    const isEmpty = () => db.prepare('SELECT count(*) AS n FROM accounts').get()!.n === 0;
    if (previous) migratePreviousRelease(previous, file, isEmpty, (accounts, report) => importAll(db, accounts, report), log, options.progress);
    return sqliteStore(db, file, lock, check === 'integrity_check' ? Promise.resolve() : checkAside(file), log);
  } catch (error) {
    lock.release();
    throw error;
  }
}

/** A database in memory (`--memory`, `startSandbox()`, the msw handlers): the same store, kept nowhere. */
export function memoryStore(): Store {
  return sqliteStore(open(':memory:', false, null), null, null, Promise.resolve());
}

const WAL_LIMIT = 64 * 1024 * 1024;

/**
 * The page cache, in KiB (SQLite's default is 2 MiB): a write touches a record's table and each of its indexes, and a
 * cache that holds their upper pages (and the newest end of each) reads none of them from the file again.
 */
const CACHE_KIB = 32 * 1024;

/**
 * Opens the database, checked (`check`, before any step of the schema is applied; see `start-check.ts`), and brings it
 * to the newest schema. Whatever makes an existing file unusable refuses the start with one line naming it.
 */
function open(file: string, fsync: boolean, check: 'integrity_check' | 'quick_check' | null): Database {
  let db: Database | undefined;
  try {
    db = withFunctions(new DatabaseSync(file));
    // The WAL is cut back to this after a checkpoint: a large write (an import, a seed) would leave it its size.
    db.exec(`PRAGMA journal_mode = WAL; PRAGMA synchronous = ${fsync ? 'FULL' : 'NORMAL'}; PRAGMA journal_size_limit = ${WAL_LIMIT}`);
    db.exec(`PRAGMA cache_size = ${-CACHE_KIB}`);
    const version = (db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version;
    if (version > MIGRATIONS.length) {
      throw new StoreDamagedError(`${file} was written by a newer va-sandbox (schema ${version}, this one knows up to ${MIGRATIONS.length}): upgrade va-sandbox, or start with another --data`);
    }
    if (check !== null && version > 0) {
      const problems = problemsOf(db, check);
      if (problems !== null) throw damaged(file, problems);
    }
    const layout = layoutVersion(db);
    if (layout !== version) throw damaged(file, `its header says schema ${version}, its tables are schema ${layout}`);
    const readOnly = file === ':memory:' ? null : writable(db);
    if (readOnly !== null) throw damaged(file, `it cannot be written: ${readOnly}; its header may be damaged, or the file is read-only`);
    migrate(db, version);
    return db;
  } catch (error) {
    db?.close();
    throw startRefusal(file, error);
  }
}

function sqliteStore(db: Database, path: string | null, lock: Lock | null, checked: Promise<void>, log: (line: string) => void = () => {}): Store {
  checked.catch(() => {}); // whoever runs the server reads it (`Store.checked`)
  const statements = new Map<string, StatementSync>();
  const sql: Sql = (text) => {
    let statement = statements.get(text);
    if (!statement) statements.set(text, (statement = db.prepare(text)));
    return statement;
  };
  /** Each account's id, once read or made (a key that only read has none). */
  const ids = new Map<string, number>();
  const idOf = (key: string): number | null => {
    const known = ids.get(key);
    if (known !== undefined) return known;
    const row = sql('SELECT id FROM accounts WHERE key = ?').get(key) as { id: number } | undefined;
    if (row) ids.set(key, row.id);
    return row?.id ?? null;
  };
  /** The accounts written in the open transaction: their wake is written beside them when it commits. */
  const touched = new Set<string>();
  /** The group of writes whose transaction is open: settled when it commits, or with why it could not. */
  let group: Group | null = null;
  let owner: Parameters<Store['attach']>[0] | null = null;
  /** Whether the last transaction failed (the log says when writes are refused, and when they are stored again). */
  let refusing = false;
  let sweeping = false;
  /** Whether retired ids may be left to sweep (known after a start only by looking): commits do not look otherwise. */
  let retiredLeft = true;
  let closed = false;

  /**
   * Runs a write of an account in the group's transaction, opened at the group's first write and committed once the
   * turn of the event loop is over, with the account's id (its row made at its first write). A write that fails (a
   * full disk) fails the group: it is rolled back at once, and that write and every later one of the group are refused
   * with `INSUFFICIENT_STORAGE`.
   */
  function write<T>(key: string | null, run: (account: number) => T): T {
    const current = group ?? begin();
    if (current.failed) throw current.failed;
    try {
      if (key === null) return run(0);
      if (!touched.has(key)) {
        touched.add(key);
        sql('INSERT INTO accounts (key, head, crc) VALUES (?, ?, ?) ON CONFLICT (key) DO NOTHING').run(key, NEW_HEAD, checksum(NEW_HEAD));
      }
      return run(idOf(key)!);
    } catch (error) {
      throw fail(current, error);
    }
  }

  function begin(): Group {
    db.exec('BEGIN');
    let settle!: (error: Error | null) => void;
    const promise = new Promise<void>((resolvePromise, reject) => (settle = (error) => (error ? reject(error) : resolvePromise())));
    promise.catch(() => {}); // a group nobody waits on (due work) still logs why it failed
    const current: Group = { promise, failed: null, reads: [] };
    group = current;
    setImmediate(() => {
      settle(commit(current));
      // A read may write (a hub made on first use): the reads after it then wait for that write's group.
      for (const read of current.reads) {
        if (group) group.reads.push(read);
        else read();
      }
    });
    return current;
  }

  function fail(current: Group, error: unknown): SandboxError {
    if (db.isTransaction) db.exec('ROLLBACK');
    // The WAL may be what filled the disk: copied into the database and cut to nothing, it gives its room back.
    try {
      db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    } catch {
      // no room for that either: the next write tries again
    }
    current.failed ??= storageError(error);
    if (!refusing) log(`writes to ${path ?? 'memory'} are refused with 507: ${current.failed.message}`);
    refusing = true;
    return current.failed;
  }

  function commit(current: Group): Error | null {
    const keys = [...touched];
    touched.clear();
    group = null;
    if (!current.failed) {
      try {
        for (const key of keys) {
          const wake = owner?.wake(key) ?? { dueAt: null, sending: false };
          sql('UPDATE accounts SET due_at = ?, sending = ? WHERE key = ?').run(wake.dueAt, wake.sending ? 1 : 0, key);
        }
        db.exec('COMMIT');
      } catch (error) {
        fail(current, error);
      }
    }
    if (current.failed) {
      for (const key of keys) {
        ids.delete(key); // a row made or replaced in the group is gone with it
        owner?.undo(key);
      }
      return current.failed;
    }
    if (refusing) log(`writes to ${path ?? 'memory'} are stored again`);
    refusing = false;
    sweep();
    return null;
  }

  /** An account id given up (replaced, or staged by a replace that failed): its row goes now, its records after (`sweep`). */
  function retire(account: number): void {
    sql('INSERT INTO retired (account) VALUES (?)').run(account);
    sql('DELETE FROM accounts WHERE id = ?').run(account);
    retiredLeft = true;
  }

  /** Deletes the rows of retired account ids (a reset's, an import's), a slice per turn of the event loop. */
  function sweep(): void {
    if (sweeping || closed || !retiredLeft) return;
    const retired = sql('SELECT account FROM retired LIMIT 1').get() as { account: number } | undefined;
    retiredLeft = retired !== undefined;
    if (!retired) return;
    sweeping = true;
    setImmediate(() => {
      sweeping = false;
      if (closed) return;
      write(null, () => {
        let left = SWEEP_SLICE;
        for (const name of Object.values(TABLE_NAMES)) {
          if (left > 0) left -= Number(sql(`DELETE FROM ${name} WHERE seq IN (SELECT seq FROM ${name} WHERE account = ? LIMIT ?)`).run(retired.account, left).changes);
        }
        if (left > 0) {
          sql('DELETE FROM counts WHERE account = ?').run(retired.account);
          sql('DELETE FROM retired WHERE account = ?').run(retired.account);
        }
      });
    });
  }

  return {
    path,
    checked,
    head: (key) => {
      const row = sql('SELECT head, crc FROM accounts WHERE key = ?').get(key) as { head: string; crc: number } | undefined;
      return row && headOf(path ?? 'memory', key, row);
    },
    writeHead: (key, head) => write(key, (account) => writeHeadOf(sql, account, head)),
    records: (key) => repository(sql, path ?? 'memory', () => idOf(key), (run) => write(key, run)),
    read: (key, unreadable) => readAccount(sql, key, path ?? 'memory', unreadable),
    /**
     * Writes the new state under a staged id of its own, a slice per group commit (other requests in between), then
     * swaps it in for the key's in one write; the old id is retired. A slice that cannot be stored retires the staged id.
     * (A staged account's row has no wake: nothing of it is due or sent before the swap.)
     */
    async replace(key, state) {
      const staged = write(null, () => newAccount(sql, `${key}${STAGED}`, accountHead(state), 0));
      const rows = TABLES.flatMap((table) => Object.entries(state[table]).map(([id, record]) => [table, id, record] as const));
      try {
        for (let at = 0; at < rows.length; ) {
          write(null, () => {
            const until = performance.now() + SLICE_MS;
            for (; at < rows.length && performance.now() < until; at++) putRecord(sql, staged, ...rows[at]!);
          });
          await group!.promise;
        }
        write(key, (old) => {
          retire(old);
          sql('UPDATE accounts SET key = ? WHERE id = ?').run(key, staged);
          ids.set(key, staged);
        });
        await group!.promise;
      } catch (error) {
        write(null, () => retire(staged));
        throw error;
      }
    },
    waking: (now) =>
      (sql('SELECT key FROM accounts WHERE sending UNION SELECT key FROM accounts WHERE due_at <= ?').all(now) as { key: string }[]).map((row) => row.key),
    nextDueAt: () => (sql('SELECT min(due_at) AS at FROM accounts').get() as { at: number | null }).at,
    save: () => group?.promise ?? Promise.resolve(),
    committed: <T>(read: () => T) =>
      new Promise<T>((resolvePromise, reject) => {
        const run = () => {
          try {
            resolvePromise(read());
          } catch (error) {
            reject(error);
          }
        };
        if (group) group.reads.push(run);
        else run();
      }),
    attach(next) {
      owner = next;
      // What a replace left before a stop: a staged account it did not finish, rows of retired ids.
      const staged = sql(`SELECT id FROM accounts WHERE instr(key, ?) > 0`).all(STAGED) as { id: number }[];
      if (staged.length > 0) write(null, () => staged.forEach(({ id }) => retire(id)));
      else sweep();
    },
    /** Commits what is left and lets the file go; a second close does nothing. */
    async close() {
      closed = true;
      if (!db.isOpen) return;
      if (group) await group.promise.catch(() => {});
      db.close();
      lock?.release();
    },
  };
}

/** How many rows of a retired account a sweep deletes at a time. */
const SWEEP_SLICE = 2000;

/** Marks the key of a staged account: a newline, which no API key (an HTTP header's value) can hold. */
const STAGED = '\nstaged';

/** The head of an account first written by a record. */
const NEW_HEAD = JSON.stringify(accountHead(emptyAccountState()));

/** Writes an account whole under a new id (a reset, an import, a migration); its id. */
function writeAccount(sql: Sql, key: string, state: AccountState, sending: 0 | 1): number {
  const normalized = normalizeAccount(state);
  const account = newAccount(sql, key, accountHead(normalized), sending);
  writeRecords(sql, account, normalized);
  return account;
}

/** A new account's row, with its head; its id. */
function newAccount(sql: Sql, key: string, head: AccountHead, sending: 0 | 1): number {
  const text = JSON.stringify(head);
  return Number(sql('INSERT INTO accounts (key, head, crc, sending) VALUES (?, ?, ?, ?)').run(key, text, checksum(text), sending).lastInsertRowid);
}

/** Replaces an account's head. */
function writeHeadOf(sql: Sql, account: number, head: AccountHead): void {
  const text = JSON.stringify(head);
  sql('UPDATE accounts SET head = ?, crc = ? WHERE id = ?').run(text, checksum(text), account);
}

/** Copies whole accounts into the database in one transaction (a migration). */
function importAll(db: Database, accounts: Record<string, AccountState>, report: (copied: number) => void): void {
  const sql = (text: string) => db.prepare(text);
  db.exec('BEGIN');
  try {
    for (const [i, [key, state]] of Object.entries(accounts).entries()) {
      writeAccount(sql, key, state, 1);
      report(i + 1);
    }
    db.exec('COMMIT');
  } catch (error) {
    if (db.isTransaction) db.exec('ROLLBACK');
    throw error;
  }
}

export { readAccount };

/** A failed write as the client is told it: `INSUFFICIENT_STORAGE` (507), naming why. */
function storageError(error: unknown): SandboxError {
  const message = (error as Error).message;
  const why = /full|SQLITE_FULL/i.test(message) ? 'no space left on the disk' : message;
  return new SandboxError(
    'INSUFFICIENT_STORAGE',
    `The write could not be stored (${why}): nothing of it was kept. Writes are taken again once they can be stored.`,
    [`(storage): ${message}`],
  );
}
