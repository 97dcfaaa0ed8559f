/**
 * The state database: one SQLite file (`node:sqlite`, WAL mode), a table per kind of record, named with the
 * contract's words, each record a row of readable JSON (`docs/storage.md` has queries to read it by hand).
 *
 * Writes: the core tells the store of every change (`changed`); `save` writes every change since the last one in one
 * transaction, shared by all the saves asked for in one turn of the event loop (group commit), and resolves once it is
 * committed, so nothing is answered before it is stored. A transaction that fails (a full disk) is rolled back whole:
 * the accounts it touched are read back as the database holds them (`onUndo`), and every save that shared it rejects
 * with `INSUFFICIENT_STORAGE`. Writes succeed again as soon as there is room, with no restart.
 *
 * What each kind of damage does on start: SQLite's own recovery replays or drops the WAL's frames by their checksums
 * (a torn last transaction was never acknowledged); `PRAGMA quick_check` then checks the file's structure, and a file
 * that fails it, or is not a database at all, is refused with one line; a WAL without its database is refused rather
 * than taken for a new state. A byte changed inside a record's JSON, where the structure stays sound, is not detected
 * (SQLite keeps no checksum of page contents): `docs/storage.md` says so.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import type { DatabaseSync as Database, StatementSync } from 'node:sqlite';
import { accountHead, keyedByCaller, normalizeAccount, SandboxError, TABLES, type AccountState, type StateChange, type TableName } from '../../core/index.js';
import { takeLock, type Lock } from './lock.js';
import { migratePreviousRelease, previousDataFile } from './migrate.js';

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

/** Each table of records, by the core's name for it. */
const TABLE_NAMES: Record<TableName, string> = {
  hubs: 'hubs',
  pool: 'pool_cvus',
  vaPayments: 'va_payments',
  transfers: 'transfers',
  events: 'events',
  deliveries: 'deliveries',
  idempotency: 'idempotency_keys',
  clients: 'clients',
  entries: 'ledger_entries',
  invoices: 'invoices',
};

/**
 * The schema, a step per version (`PRAGMA user_version`): a start applies the steps the file has not had, in order; a
 * change to the schema is a new step, never an edited one. Records keep the order they were made in (`seq`).
 */
const SCHEMA: string[] = [
  [
    `CREATE TABLE accounts (
       key TEXT PRIMARY KEY,
       head TEXT NOT NULL,
       due_at INTEGER,
       sending INTEGER NOT NULL DEFAULT 0
     ) WITHOUT ROWID`,
    'CREATE INDEX accounts_by_due_at ON accounts (due_at) WHERE due_at IS NOT NULL',
    'CREATE INDEX accounts_sending ON accounts (sending) WHERE sending',
    ...Object.values(TABLE_NAMES).flatMap((table) => [
      `CREATE TABLE ${table} (seq INTEGER PRIMARY KEY, account TEXT NOT NULL, id TEXT NOT NULL, data TEXT NOT NULL)`,
      `CREATE UNIQUE INDEX ${table}_by_id ON ${table} (account, id)`,
    ]),
  ].join(';\n'),
];

/** When an account next has work: its due work (an expiry, a delayed CVU), by real time, and whether it has deliveries to send. */
export interface Wake {
  dueAt: number | null;
  sending: boolean;
}

/** Where the server keeps its state: accounts read when first used, changes heard of, then `save`d before every answer. */
export interface Store {
  readonly path: string | null;
  /** An account as the database holds it, or undefined. */
  account(key: string): AccountState | undefined;
  /** The accounts whose due work falls due by `now` (real time), or that have deliveries to send. */
  waking(now: number): string[];
  /** When the next due work of any account falls due (real time), or null. */
  nextDueAt(): number | null;
  /** A change to an account's state since the last save (the core reports every one). */
  changed(key: string, change: StateChange, state: AccountState): void;
  /** Resolves once every change so far is committed; rejects with `INSUFFICIENT_STORAGE` if it could not be (see above). */
  save(): Promise<void>;
  /**
   * Set by the owner of the state: how to put an account back as the database holds it (`null`: it holds none), called
   * muted after a failed transaction; and when an account next has work, written beside it at each save.
   */
  attach(owner: { undo: (key: string, state: AccountState | null) => void; wake: (key: string) => Wake }): void;
  close(): Promise<void>;
}

export interface StoreOptions {
  /** `synchronous=FULL`: each commit is synced, and survives a crash of the machine (NORMAL: of the process). */
  fsync?: boolean;
  log?: (line: string) => void;
}

export class StoreLockedError extends Error {}

/** A database file that cannot be used as it is: the start is refused with this one line. */
export class StoreDamagedError extends Error {}

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
    const db = open(file, options.fsync ?? false);
    const isEmpty = () => db.prepare('SELECT count(*) AS n FROM accounts').get()!.n === 0;
    if (previous) migratePreviousRelease(previous, file, isEmpty, (accounts) => importAll(db, accounts), log);
    return sqliteStore(db, file, lock, log);
  } catch (error) {
    lock.release();
    throw error;
  }
}

/** A database in memory (`--memory`, `startSandbox()`, the msw handlers): the same store, kept nowhere. */
export function memoryStore(): Store {
  return sqliteStore(open(':memory:', false), null, null);
}

const WAL_LIMIT = 64 * 1024 * 1024;

function open(file: string, fsync: boolean): Database {
  let db: Database | undefined;
  try {
    db = new DatabaseSync(file);
    // The WAL is cut back to this after a checkpoint: a large write (an import, a seed) would leave it its size.
    db.exec(`PRAGMA journal_mode = WAL; PRAGMA synchronous = ${fsync ? 'FULL' : 'NORMAL'}; PRAGMA journal_size_limit = ${WAL_LIMIT}`);
    const version = (db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version;
    if (version > SCHEMA.length) {
      throw new StoreDamagedError(`${file} was written by a newer va-sandbox (schema ${version}, this one knows up to ${SCHEMA.length}): upgrade va-sandbox, or start with another --data`);
    }
    if (file !== ':memory:' && version > 0) {
      const problems = (db.prepare('PRAGMA quick_check').all() as { quick_check: string }[]).map((row) => row.quick_check);
      if (problems[0] !== 'ok') throw damaged(file, problems.slice(0, 3).join('; '));
    }
    for (let step = version; step < SCHEMA.length; step++) {
      db.exec('BEGIN');
      db.exec(SCHEMA[step]!);
      db.exec(`PRAGMA user_version = ${step + 1}`);
      db.exec('COMMIT');
    }
    return db;
  } catch (error) {
    db?.close();
    if (error instanceof StoreDamagedError) throw error;
    if (/not a database|malformed|corrupt/i.test((error as Error).message)) throw damaged(file, (error as Error).message);
    throw error;
  }
}

const damaged = (file: string, why: string) =>
  new StoreDamagedError(`${file} is damaged (${why}): restore it from a copy, or move it away to start afresh (see docs/storage.md)`);

function sqliteStore(db: Database, path: string | null, lock: Lock | null, log: (line: string) => void = () => {}): Store {
  const statements = new Map<string, StatementSync>();
  const sql = (text: string): StatementSync => {
    let statement = statements.get(text);
    if (!statement) statements.set(text, (statement = db.prepare(text)));
    return statement;
  };
  /** What changed since the last save, by account: its head, records by table and id, or all of it. */
  const pending = new Map<string, { state: AccountState; all: boolean; records: Map<TableName, Set<string>> }>();
  let group: Promise<void> | null = null;
  let owner: Parameters<Store['attach']>[0] | null = null;
  let muted = false;
  /** Whether the last transaction failed (the log says when writes are refused, and when they are stored again). */
  let refusing = false;

  function flush(): void {
    if (pending.size === 0) return;
    const batch = [...pending];
    pending.clear();
    db.exec('BEGIN');
    try {
      for (const [key, { state, all, records }] of batch) {
        if (all) writeAccount(sql, key, state);
        else {
          for (const [table, ids] of records) {
            const name = TABLE_NAMES[table];
            for (const id of ids) {
              const record = (state[table] as Record<string, unknown>)[id];
              if (record === undefined) sql(`DELETE FROM ${name} WHERE account = ? AND id = ?`).run(key, id);
              else sql(UPSERT(name)).run(key, id, JSON.stringify(record));
            }
          }
        }
        const wake = owner?.wake(key) ?? { dueAt: null, sending: false };
        sql(UPSERT_ACCOUNT).run(key, JSON.stringify(accountHead(state)), wake.dueAt, wake.sending ? 1 : 0);
      }
      db.exec('COMMIT');
    } catch (error) {
      if (db.isTransaction) db.exec('ROLLBACK');
      undo(batch.map(([key]) => key));
      // The WAL may be what filled the disk: copied into the database and cut to nothing, it gives its room back.
      try {
        db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
      } catch {
        // no room for that either: the next write tries again
      }
      const refused = storageError(error);
      if (!refusing) log(`writes to ${path ?? 'memory'} are refused with 507: ${refused.message}`);
      refusing = true;
      throw refused;
    }
    if (refusing) log(`writes to ${path ?? 'memory'} are stored again`);
    refusing = false;
  }

  function undo(keys: string[]): void {
    muted = true;
    try {
      for (const key of keys) owner?.undo(key, readAccount(sql, key) ?? null);
    } finally {
      muted = false;
    }
  }

  return {
    path,
    account: (key) => readAccount(sql, key),
    waking: (now) =>
      (sql('SELECT key FROM accounts WHERE sending UNION SELECT key FROM accounts WHERE due_at <= ?').all(now) as { key: string }[]).map((row) => row.key),
    nextDueAt: () => (sql('SELECT min(due_at) AS at FROM accounts').get() as { at: number | null }).at,
    changed(key, change, state) {
      if (muted) return;
      let entry = pending.get(key);
      if (!entry) pending.set(key, (entry = { state, all: false, records: new Map() }));
      entry.state = state;
      if ('all' in change) entry.all = true;
      else if ('table' in change) {
        let ids = entry.records.get(change.table);
        if (!ids) entry.records.set(change.table, (ids = new Set()));
        ids.add(change.id);
      }
    },
    save() {
      group ??= new Promise<void>((resolvePromise, reject) =>
        setImmediate(() => {
          group = null;
          try {
            flush();
            resolvePromise();
          } catch (error) {
            reject(error as Error);
          }
        }),
      );
      return group;
    },
    attach(next) {
      owner = next;
    },
    /** Writes what is left and lets the file go; a second close does nothing. */
    async close() {
      if (!db.isOpen) return;
      if (pending.size > 0) flush();
      db.close();
      lock?.release();
    },
  };
}

const UPSERT = (table: string) => `INSERT INTO ${table} (account, id, data) VALUES (?, ?, ?) ON CONFLICT (account, id) DO UPDATE SET data = excluded.data`;
const UPSERT_ACCOUNT =
  'INSERT INTO accounts (key, head, due_at, sending) VALUES (?, ?, ?, ?) ON CONFLICT (key) DO UPDATE SET head = excluded.head, due_at = excluded.due_at, sending = excluded.sending';

/** Replaces every record of an account (a reset, an import, a migration). */
function writeAccount(sql: (text: string) => StatementSync, key: string, state: AccountState): void {
  for (const table of TABLES) {
    const name = TABLE_NAMES[table];
    sql(`DELETE FROM ${name} WHERE account = ?`).run(key);
    const insert = sql(UPSERT(name));
    for (const [id, record] of Object.entries(state[table])) insert.run(key, id, JSON.stringify(record));
  }
}

/** Copies whole accounts into the database in one transaction (a migration). */
function importAll(db: Database, accounts: Record<string, AccountState>): void {
  const sql = (text: string) => db.prepare(text);
  db.exec('BEGIN');
  try {
    for (const [key, state] of Object.entries(accounts)) {
      writeAccount(sql, key, state);
      sql(UPSERT_ACCOUNT).run(key, JSON.stringify(accountHead(state)), null, 1);
    }
    db.exec('COMMIT');
  } catch (error) {
    if (db.isTransaction) db.exec('ROLLBACK');
    throw error;
  }
}

/**
 * An account as the database holds it: its head and each table's records, in the order they were made. `sql` prepares
 * a statement: the store's cache, or a connection of its own (a test reads the file as support staff would).
 */
export function readAccount(sql: (text: string) => StatementSync, key: string): AccountState | undefined {
  const row = sql('SELECT head FROM accounts WHERE key = ?').get(key) as { head: string } | undefined;
  if (!row) return undefined;
  const state = JSON.parse(row.head) as AccountState;
  for (const table of TABLES) {
    const records: Record<string, unknown> = table === 'idempotency' ? keyedByCaller() : {};
    for (const { id, data } of sql(`SELECT id, data FROM ${TABLE_NAMES[table]} WHERE account = ? ORDER BY seq`).iterate(key) as Iterable<{
      id: string;
      data: string;
    }>) {
      records[id] = JSON.parse(data);
    }
    (state as unknown as Record<string, unknown>)[table] = records;
  }
  return normalizeAccount(state);
}

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
