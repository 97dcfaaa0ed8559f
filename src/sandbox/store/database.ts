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
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { DatabaseSync as Database, StatementSync } from 'node:sqlite';
import { accountHead, emptyAccountState, keyedByCaller, normalizeAccount, SandboxError, TABLES, type AccountState, type TableName } from '../../core/index.js';
import { COLUMNS, COUNTED, type AccountHead, type Key, type Query, type Range, type Repository, type Row, type Storage, type Where } from '../../core/repository.js';
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

/** The columns of a table beside `data`, `created_at` first (every list is ordered by it). */
const columnsOf = (table: TableName): string[] => ['created_at', ...Object.keys(COLUMNS[table]).filter((column) => column !== 'created_at')];

/** Each table with its columns, an index per column, and the counts of its lists (`COUNTED`) kept by triggers. */
const TABLES_V2 = TABLES.flatMap((table) => {
  const name = TABLE_NAMES[table];
  const columns = columnsOf(table);
  const counted = COUNTED[table] ?? [];
  const list = (column: string, row: 'NEW' | 'OLD') => `'${name}.${column}=' || ${row}.${column}`;
  const add = (list: string, row: string) =>
    `INSERT INTO counts SELECT ${row}.account, ${list}, 1 WHERE ${list} IS NOT NULL ON CONFLICT DO UPDATE SET n = n + 1;`;
  const take = (list: string, row: string) => `UPDATE counts SET n = n - 1 WHERE account = ${row}.account AND list = ${list};`;
  return [
    `CREATE TABLE ${name} (seq INTEGER PRIMARY KEY, account TEXT NOT NULL, id TEXT NOT NULL, data TEXT NOT NULL, ${columns.map((c) => `${c} ${c.endsWith('_at') ? 'INTEGER' : 'TEXT'}`).join(', ')})`,
    `CREATE UNIQUE INDEX ${name}_by_id ON ${name} (account, id)`,
    `CREATE INDEX ${name}_by_created_at ON ${name} (account, created_at)`,
    ...columns.slice(1).map((c) => `CREATE INDEX ${name}_by_${c} ON ${name} (account, ${c}, created_at) WHERE ${c} IS NOT NULL`),
    `CREATE TRIGGER ${name}_counted_insert AFTER INSERT ON ${name} BEGIN ${add(`'${name}'`, 'NEW')} ${counted.map((c) => add(list(c, 'NEW'), 'NEW')).join(' ')} END`,
    `CREATE TRIGGER ${name}_counted_delete AFTER DELETE ON ${name} BEGIN ${take(`'${name}'`, 'OLD')} ${counted.map((c) => take(list(c, 'OLD'), 'OLD')).join(' ')} END`,
    ...counted.map(
      (c) => `CREATE TRIGGER ${name}_counted_${c} AFTER UPDATE OF ${c} ON ${name} WHEN OLD.${c} IS NOT NEW.${c} BEGIN ${take(list(c, 'OLD'), 'OLD')} ${add(list(c, 'NEW'), 'NEW')} END`,
    ),
  ];
});

/**
 * The schema, a step per version (`PRAGMA user_version`): a start applies the steps the file has not had, in order; a
 * change to the schema is a new step, never an edited one. Records keep the order they were made in (`seq`).
 */
const SCHEMA: (string | ((db: Database) => void))[] = [
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
  // Version 2: each record's lookup columns beside it, indexed, and the counts of lists: every account is read whole
  // from the tables of version 1 and written again.
  (db) => {
    const sql = (text: string) => db.prepare(text);
    const keys = (sql('SELECT key FROM accounts').all() as { key: string }[]).map((row) => row.key);
    const accounts = keys.map((key) => [key, readAccount(sql, key)!] as const);
    for (const name of Object.values(TABLE_NAMES)) db.exec(`DROP TABLE ${name}`);
    db.exec(['CREATE TABLE counts (account TEXT NOT NULL, list TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (account, list)) WITHOUT ROWID', ...TABLES_V2].join(';\n'));
    for (const [key, state] of accounts) writeAccount(sql, key, state);
  },
];

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
   * Set by the owner of the state: what to do with an account whose writes were rolled back (read its head again), and
   * when an account next has work, written beside it at each commit.
   */
  attach(owner: { undo: (key: string) => void; wake: (key: string) => Wake }): void;
  close(): Promise<void>;
}

/** A group of writes sharing one transaction (see `Store.save`). */
interface Group {
  promise: Promise<void>;
  failed: SandboxError | null;
}

export interface StoreOptions {
  /** `synchronous=FULL`: each commit is synced, and survives a crash of the machine (NORMAL: of the process). */
  fsync?: boolean;
  log?: (line: string) => void;
  /** Files larger than this are checked beside the running server (`Store.checked`); default 64 MiB. */
  checkAtStartBytes?: number;
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
    // A large file is checked beside the server rather than before it answers (see `checkAside`).
    const check = existsSync(file) && statSync(file).size > (options.checkAtStartBytes ?? CHECK_AT_START_BYTES) ? 'later' : 'now';
    const db = open(file, options.fsync ?? false, check);
    const isEmpty = () => db.prepare('SELECT count(*) AS n FROM accounts').get()!.n === 0;
    if (previous) migratePreviousRelease(previous, file, isEmpty, (accounts) => importAll(db, accounts), log);
    return sqliteStore(db, file, lock, check === 'later' ? checkAside(file) : Promise.resolve(), log);
  } catch (error) {
    lock.release();
    throw error;
  }
}

/** A database in memory (`--memory`, `startSandbox()`, the msw handlers): the same store, kept nowhere. */
export function memoryStore(): Store {
  return sqliteStore(open(':memory:', false, 'never'), null, null, Promise.resolve());
}

const WAL_LIMIT = 64 * 1024 * 1024;

function open(file: string, fsync: boolean, check: 'now' | 'later' | 'never'): Database {
  let db: Database | undefined;
  try {
    db = new DatabaseSync(file);
    // The WAL is cut back to this after a checkpoint: a large write (an import, a seed) would leave it its size.
    db.exec(`PRAGMA journal_mode = WAL; PRAGMA synchronous = ${fsync ? 'FULL' : 'NORMAL'}; PRAGMA journal_size_limit = ${WAL_LIMIT}`);
    const version = (db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version;
    if (version > SCHEMA.length) {
      throw new StoreDamagedError(`${file} was written by a newer va-sandbox (schema ${version}, this one knows up to ${SCHEMA.length}): upgrade va-sandbox, or start with another --data`);
    }
    if (check === 'now' && version > 0) {
      const problems = (db.prepare('PRAGMA quick_check').all() as { quick_check: string }[]).map((row) => row.quick_check);
      if (problems[0] !== 'ok') throw damaged(file, problems.slice(0, 3).join('; '));
    }
    for (let step = version; step < SCHEMA.length; step++) {
      const change = SCHEMA[step]!;
      db.exec('BEGIN');
      if (typeof change === 'string') db.exec(change);
      else change(db);
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

/** Past this size a start does not wait for `PRAGMA quick_check` (it reads the whole file: ~2 s at 1.5 GB). */
const CHECK_AT_START_BYTES = 64 * 1024 * 1024;

/**
 * `PRAGMA quick_check` of a large file on a thread of its own, over a read-only connection, while the server answers:
 * rejects with the same line a start would refuse the file with.
 */
function checkAside(file: string): Promise<void> {
  const worker = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads');
     process.emitWarning = () => {}; // Node 22's "SQLite is experimental": the server already relies on it
     const db = new (require('node:sqlite').DatabaseSync)(workerData, { readOnly: true });
     const problems = db.prepare('PRAGMA quick_check').all().map((row) => row.quick_check);
     db.close();
     parentPort.postMessage(problems[0] === 'ok' ? null : problems.slice(0, 3).join('; '));`,
    { eval: true, workerData: file },
  );
  worker.unref();
  return new Promise<void>((resolvePromise, reject) => {
    worker.once('message', (problems: string | null) => (problems === null ? resolvePromise() : reject(damaged(file, problems))));
    worker.once('error', (error) => reject(damaged(file, error.message)));
  });
}

const damaged = (file: string, why: string) =>
  new StoreDamagedError(`${file} is damaged (${why}): restore it from a copy, or move it away to start afresh (see docs/storage.md)`);

function sqliteStore(db: Database, path: string | null, lock: Lock | null, checked: Promise<void>, log: (line: string) => void = () => {}): Store {
  checked.catch(() => {}); // whoever runs the server reads it (`Store.checked`)
  const statements = new Map<string, StatementSync>();
  const sql = (text: string): StatementSync => {
    let statement = statements.get(text);
    if (!statement) statements.set(text, (statement = db.prepare(text)));
    return statement;
  };
  /** The accounts written in the open transaction: their wake is written beside them when it commits. */
  const touched = new Set<string>();
  /** The group of writes whose transaction is open: settled when it commits, or with why it could not. */
  let group: Group | null = null;
  let owner: Parameters<Store['attach']>[0] | null = null;
  /** Whether the last transaction failed (the log says when writes are refused, and when they are stored again). */
  let refusing = false;

  /**
   * Runs a write in the group's transaction, opened at the group's first write and committed once the turn of the event
   * loop is over. A write that fails (a full disk) fails the group: it is rolled back at once, and that write and every
   * later one of the group are refused with `INSUFFICIENT_STORAGE`.
   */
  function write<T>(key: string, run: () => T): T {
    const current = group ?? begin();
    if (current.failed) throw current.failed;
    try {
      if (!touched.has(key)) {
        touched.add(key);
        sql('INSERT INTO accounts (key, head) VALUES (?, ?) ON CONFLICT (key) DO NOTHING').run(key, NEW_HEAD);
      }
      return run();
    } catch (error) {
      throw fail(current, error);
    }
  }

  function begin(): Group {
    db.exec('BEGIN');
    let settle!: (error: Error | null) => void;
    const promise = new Promise<void>((resolvePromise, reject) => (settle = (error) => (error ? reject(error) : resolvePromise())));
    promise.catch(() => {}); // a group nobody waits on (due work) still logs why it failed
    const current: Group = { promise, failed: null };
    group = current;
    setImmediate(() => settle(commit(current)));
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
      for (const key of keys) owner?.undo(key);
      return current.failed;
    }
    if (refusing) log(`writes to ${path ?? 'memory'} are stored again`);
    refusing = false;
    return null;
  }

  const records = (key: string): Repository => repository(sql, key, (run) => write(key, run));
  return {
    path,
    checked,
    head: (key) => {
      const row = sql('SELECT head FROM accounts WHERE key = ?').get(key) as { head: string } | undefined;
      return row && (JSON.parse(row.head) as AccountHead);
    },
    writeHead: (key, head) => write(key, () => sql(UPSERT_ACCOUNT).run(key, JSON.stringify(head))),
    records,
    read: (key) => readAccount(sql, key),
    replace: (key, state) =>
      write(key, () => {
        sql(UPSERT_ACCOUNT).run(key, JSON.stringify(accountHead(state)));
        writeAccount(sql, key, state);
      }),
    waking: (now) =>
      (sql('SELECT key FROM accounts WHERE sending UNION SELECT key FROM accounts WHERE due_at <= ?').all(now) as { key: string }[]).map((row) => row.key),
    nextDueAt: () => (sql('SELECT min(due_at) AS at FROM accounts').get() as { at: number | null }).at,
    save: () => group?.promise ?? Promise.resolve(),
    attach(next) {
      owner = next;
    },
    /** Commits what is left and lets the file go; a second close does nothing. */
    async close() {
      if (!db.isOpen) return;
      if (group) await group.promise.catch(() => {});
      db.close();
      lock?.release();
    },
  };
}

/** The head of an account first written by a record. */
const NEW_HEAD = JSON.stringify(accountHead(emptyAccountState()));
const UPSERT_ACCOUNT = 'INSERT INTO accounts (key, head) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET head = excluded.head';

/** Writes a record with its columns (`COLUMNS`), in place if it is there (it keeps its place in the order made). */
function putRecord(sql: (text: string) => StatementSync, key: string, table: TableName, id: string, record: unknown): void {
  const columns = columnsOf(table);
  const values = columns.map((column) => COLUMNS[table][column]?.(record as never) ?? (column === 'created_at' ? 0 : null));
  sql(
    `INSERT INTO ${TABLE_NAMES[table]} (account, id, data, ${columns.join(', ')}) VALUES (?, ?, ?, ${columns.map(() => '?').join(', ')}) ` +
      `ON CONFLICT (account, id) DO UPDATE SET data = excluded.data, ${columns.map((c) => `${c} = excluded.${c}`).join(', ')}`,
  ).run(key, id, JSON.stringify(record), ...values);
}

/** Replaces every record of an account (a reset, an import, a migration). */
function writeAccount(sql: (text: string) => StatementSync, key: string, state: AccountState): void {
  for (const table of TABLES) {
    sql(`DELETE FROM ${TABLE_NAMES[table]} WHERE account = ?`).run(key);
    for (const [id, record] of Object.entries(state[table])) putRecord(sql, key, table, id, record);
  }
}

/** Copies whole accounts into the database in one transaction (a migration). */
function importAll(db: Database, accounts: Record<string, AccountState>): void {
  const sql = (text: string) => db.prepare(text);
  db.exec('BEGIN');
  try {
    for (const [key, state] of Object.entries(accounts)) {
      writeAccount(sql, key, normalizeAccount(state));
      sql('INSERT INTO accounts (key, head, sending) VALUES (?, ?, 1)').run(key, JSON.stringify(accountHead(state)));
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

/** How many rows a lookup reads at a time. */
const BATCH = 256;

/** An account's records through the core's port (`Repository`), each query served by its column's index. */
function repository(sql: (text: string) => StatementSync, key: string, write: (run: () => void) => void): Repository {
  const check = (table: TableName, column: string) => {
    if (column !== 'created_at' && !(column in COLUMNS[table])) throw new Error(`${TABLE_NAMES[table]} has no column ${column}`);
    return column;
  };
  /** A query's conditions as SQL and their values. */
  const conditions = (table: TableName, where: Where = {}): [string, Key[]] => {
    const parts = ['account = ?'];
    const values: Key[] = [key];
    for (const [column, value] of Object.entries(where)) {
      check(table, column);
      if (value === null) parts.push(`${column} IS NULL`);
      else if (Array.isArray(value)) {
        parts.push(`${column} IN (${value.map(() => '?').join(', ')})`);
        values.push(...(value as Key[]));
      } else if (typeof value === 'object') {
        const range = value as Range;
        parts.push(`${column} IS NOT NULL`);
        if (range.from != null) parts.push(`${column} >= ?`) && values.push(range.from);
        if (range.to != null) parts.push(`${column} <= ?`) && values.push(range.to);
      } else {
        parts.push(`${column} = ?`);
        values.push(value as Key);
      }
    }
    return [parts.join(' AND '), values];
  };

  /**
   * A query's records. A column asked for any of several values (`status=expired,cancelled`) is read a value at a time,
   * each in order in its index, and merged: one query over all of them would sort every record they hold.
   */
  function* scan<T extends TableName>(table: T, query: Query): Generator<[string, Row<T>]> {
    const split = query.by === undefined ? Object.entries(query.where ?? {}).find(([, value]) => Array.isArray(value) && new Set(value).size > 1) : undefined;
    let rows: Iterator<Record<string, Key>>;
    let skip = 0;
    if (split) {
      const [column, values] = split as [string, Key[]];
      const parts = [...new Set(values)].map((value) => ordered(table, { ...query, where: { ...query.where, [column]: value }, skip: 0, limit: undefined }));
      rows = merged(parts, query.descending ? -1 : 1);
      skip = query.skip ?? 0;
    } else rows = ordered(table, query);
    let left = query.limit ?? Infinity;
    for (let row = rows.next(); !row.done && left > 0; row = rows.next()) {
      if (skip > 0) skip--;
      else {
        left--;
        yield [row.value.id as string, JSON.parse(row.value.data as string) as Row<T>];
      }
    }
  }

  /** A query's rows in its order, read in batches, each after the last one read (by its order), never by offset. */
  function* ordered(table: TableName, query: Query): Generator<Record<string, Key>> {
    const by = query.by === undefined ? [] : [check(table, query.by)];
    const order = [...by, 'created_at', 'seq'];
    const direction = query.descending ? 'DESC' : 'ASC';
    const where = { ...(query.by === undefined ? {} : { [query.by]: {} }), ...query.where };
    const [conditionsText, values] = conditions(table, where);
    const select = `SELECT ${order.join(', ')}, id, data FROM ${TABLE_NAMES[table]} WHERE ${conditionsText}`;
    const orderBy = `ORDER BY ${order.map((c) => `${c} ${direction}`).join(', ')}`;
    let left = query.limit ?? Infinity;
    let rows = sql(`${select} ${orderBy} LIMIT ? OFFSET ?`).all(...values, Math.min(left, BATCH), query.skip ?? 0) as Record<string, Key>[];
    const after = `${select} AND (${order.join(', ')}) ${query.descending ? '<' : '>'} (${order.map(() => '?').join(', ')}) ${orderBy} LIMIT ${BATCH}`;
    for (;;) {
      yield* rows.slice(0, left);
      left -= rows.length;
      if (rows.length < BATCH || left <= 0) return;
      const last = rows.at(-1)!;
      rows = sql(after).all(...values, ...order.map((c) => last[c]!)) as Record<string, Key>[];
    }
  }

  return {
    get: <T extends TableName>(table: T, id: string) => {
      const row = sql(`SELECT data FROM ${TABLE_NAMES[table]} WHERE account = ? AND id = ?`).get(key, id) as { data: string } | undefined;
      return row && (JSON.parse(row.data) as Row<T>);
    },
    put: (table, id, record) => write(() => putRecord(sql, key, table, id, record)),
    drop: (table, id) => write(() => sql(`DELETE FROM ${TABLE_NAMES[table]} WHERE account = ? AND id = ?`).run(key, id)),
    find: (table, query) => scan(table, { ...query, limit: 1 }).next().value?.[1],
    findEntry: (table, query) => scan(table, { ...query, limit: 1 }).next().value ?? undefined,
    *each(table, query = {}) {
      for (const [, record] of scan(table, query)) yield record;
    },
    count(table, where = {}) {
      const name = TABLE_NAMES[table];
      const entries = Object.entries(where);
      const [column, value] = entries[0] ?? [];
      // A table's count, or one counted column's: kept by the triggers, so a total costs no scan.
      if (entries.length === 0) return countOf(sql, key, name);
      if (entries.length === 1 && COUNTED[table]?.includes(column!) && (typeof value !== 'object' || Array.isArray(value))) {
        return [...new Set([value].flat())].reduce((n: number, one) => n + countOf(sql, key, `${name}.${column}=${one}`), 0);
      }
      const [text, values] = conditions(table, where);
      return (sql(`SELECT count(*) AS n FROM ${name} WHERE ${text}`).get(...values) as { n: number }).n;
    },
    min: (table, column, where) => extreme(table, 'min', column, where),
    max: (table, column, where) => extreme(table, 'max', column, where),
  };

  function extreme(table: TableName, which: 'min' | 'max', column: string, where: Where = {}): Key {
    const [text, values] = conditions(table, { [check(table, column)]: {}, ...where });
    return (sql(`SELECT ${which}(${column}) AS value FROM ${TABLE_NAMES[table]} WHERE ${text}`).get(...values) as { value: Key }).value;
  }
}

/** Rows of several queries, each in order (by `created_at`, then `seq`; `sign` -1: newest first), as one. */
function* merged(parts: Iterator<Record<string, Key>>[], sign: 1 | -1): Generator<Record<string, Key>> {
  const heads = parts.map((part) => part.next());
  const before = (a: Record<string, Key>, b: Record<string, Key>) =>
    sign * ((a.created_at as number) - (b.created_at as number) || (a.seq as number) - (b.seq as number)) < 0;
  for (;;) {
    let next = -1;
    for (let i = 0; i < heads.length; i++) if (!heads[i]!.done && (next < 0 || before(heads[i]!.value, heads[next]!.value))) next = i;
    if (next < 0) return;
    yield heads[next]!.value as Record<string, Key>;
    heads[next] = parts[next]!.next();
  }
}

const countOf = (sql: (text: string) => StatementSync, key: string, list: string): number =>
  (sql('SELECT n FROM counts WHERE account = ? AND list = ?').get(key, list) as { n: number } | undefined)?.n ?? 0;

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
