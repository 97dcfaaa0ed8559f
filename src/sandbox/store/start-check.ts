/**
 * What a start checks of an existing database before it serves from it, and the one line a file that fails is refused
 * with: its structure (`PRAGMA integrity_check`, which also finds an index that disagrees with its table; a larger file
 * gets the faster `quick_check` first and the whole check beside the running server), that its header's schema version
 * names the tables it holds, and that it can be written.
 */
import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readSync, statfsSync, statSync } from 'node:fs';
import type { Socket } from 'node:net';
import { dirname } from 'node:path';
import type { DatabaseSync as Database } from 'node:sqlite';
import { UnreadableRecord } from './records.js';
import { MIGRATIONS, migration, NEWEST, numberOf, withFunctions } from './schema.js';

/** A file that cannot be used as it is: the start is refused with this one line; `why`, what `check` says of it. */
export class StoreDamagedError extends Error {
  constructor(
    message: string,
    readonly why = message,
  ) {
    super(message);
  }
}

/** What to do, said in every line that refuses a damaged database. */
const WHAT_TO_DO =
  'restore it from a backup (a copy of the file, or an export to `va-sandbox import` into a fresh one), or move it away to start afresh (see docs/storage.md)';

export const damaged = (file: string, why: string) =>
  new StoreDamagedError(`${file} is damaged (${why}): ${WHAT_TO_DO}`, why);

/** The refusal of a path that is no database file at all (`notAFile`, or an empty file for `check`). */
export const notADatabase = (file: string, what: string) =>
  new StoreDamagedError(`${file} is not a database (${what})`, `not a database (${what})`);

/**
 * What a start refuses in a file's header, read only (so `check` reports it in the same words): a schema version newer
 * than this release knows, a write version (byte 18) that makes SQLite take the file read-only, a schema version the
 * tables do not have. Null: none.
 */
export function headerRefusal(db: Database, file: string): StoreDamagedError | null {
  const version = schemaVersion(db);
  const newer = newerRelease(file, version);
  if (newer !== null) return newer;
  const writeVersion = file === ':memory:' ? 1 : headerByte(file, 18);
  if (writeVersion > 2) {
    return damaged(file, `its header's write version (byte 18) is ${writeVersion}, which SQLite takes read-only`);
  }
  const layout = layoutVersion(db, version);
  if (layout !== version) {
    return damaged(
      file,
      `its header says schema ${version}, its tables are ${layout === null ? 'of no schema' : `schema ${layout}`}`,
    );
  }
  return null;
}

/** The schema version a file's header says (`PRAGMA user_version`). */
export const schemaVersion = (db: Database): number =>
  (db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version;

/** A file of a schema version newer than this release knows (checked first: this release knows nothing else of it). */
export function newerRelease(file: string, version: number): StoreDamagedError | null {
  if (version <= NEWEST) return null;
  const why = `written by a newer va-sandbox (schema ${version}, this one knows up to ${NEWEST})`;
  return new StoreDamagedError(`${file} was ${why}: upgrade va-sandbox, or start with another --data`, why);
}

/**
 * How much free room a migration needs beside the file, as a multiple of its size: each step copies its tables whole
 * into the WAL before the checkpoint writes them back (the schema version 2 fixture, 332 KiB, took a 338 KiB WAL and
 * grew by 36 KiB: 1.13 times its size at the peak).
 */
const MIGRATION_ROOM = 1.5;

/** A size in words: KiB under a MiB, else MiB with one decimal. */
const sizeOf = (bytes: number) =>
  bytes < 1024 * 1024 ? `${Math.round(bytes / 1024)} KiB` : `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;

/**
 * An error of the schema's migration at start as the line that says what happened: a full disk says so and how much
 * room the migration needs (never to restore a backup: the file is sound, at the schema version it says); any other
 * error as it is.
 */
export function migrationRefusal(db: Database, file: string, error: unknown): unknown {
  const message = (error as Error).message ?? '';
  if (file === ':memory:') return error;
  const need = Math.ceil(statSync(file).size * MIGRATION_ROOM);
  const { bavail, bsize } = statfsSync(dirname(file));
  // The room the failed step took in the WAL is the migration's again (a clean stop leaves no WAL beside the file).
  const free = bavail * bsize + (existsSync(`${file}-wal`) ? statSync(`${file}-wal`).size : 0);
  if (!/disk is full|SQLITE_FULL/i.test(message) && !(/disk I\/O error/i.test(message) && free < need)) return error;
  let at = '';
  try {
    at = ` at schema ${schemaVersion(db)}`;
  } catch {
    // A connection that cannot even read its header: the file says its version to the next start.
  }
  const room = `needs about ${sizeOf(need)} free beside it, ${sizeOf(free)} are`;
  const why = `the disk is full: migrating it to schema ${NEWEST} ${room}`;
  const state = `the file is sound${at}: a step is kept whole or not at all`;
  return new StoreDamagedError(`${file} cannot be migrated (${why}): free some room and start again (${state})`, why);
}

/** A byte of a database file's 100-byte header. */
function headerByte(file: string, at: number): number {
  const fd = openSync(file, 'r');
  try {
    const byte = Buffer.alloc(1);
    return readSync(fd, byte, 0, 1, at) === 1 ? byte[0]! : 0;
  } finally {
    closeSync(fd);
  }
}

/**
 * An error at start as the line that refuses the file: SQLite's (a page it cannot read, a file it may not open, a step
 * of the schema that fails over what the file holds) or a record that cannot be read; any other error as it is.
 */
export function startRefusal(file: string, error: unknown): unknown {
  // A record what fell due at start needed (no server runs to export the rest from).
  if (error instanceof UnreadableRecord) return damaged(file, error.what);
  if ((error as { code?: string }).code !== 'ERR_SQLITE_ERROR') return error;
  const why = (error as Error).message;
  return /not a database|malformed|corrupt/i.test(why)
    ? damaged(file, why)
    : new StoreDamagedError(`${file} cannot be used (${why}): ${WHAT_TO_DO}`);
}

/**
 * Up to this size a start runs `PRAGMA integrity_check` before it answers (about 0.5 s at 16 MiB: it reads every
 * index against its table); past it `quick_check` (about 0.3-0.6 s at 64 MiB, structure only), and the integrity check
 * runs beside the server (`checkAside`).
 */
export const INTEGRITY_AT_START_BYTES = 16 * 1024 * 1024;

/** Past this size a start does not wait for any check (`quick_check` reads the whole file: ~2 s at 1.5 GB). */
export const CHECK_AT_START_BYTES = 64 * 1024 * 1024;

/** Runs `PRAGMA integrity_check` or `quick_check`; the first problems it finds, or null. */
export function problemsOf(db: Database, check: 'integrity_check' | 'quick_check'): string | null {
  return firstProblems((db.prepare(`PRAGMA ${check}`).all() as Record<string, string>[]).map((row) => row[check]!));
}

/** A check's answer as a line: null when `ok`, else its first three problems (a damaged page can list hundreds). */
function firstProblems(rows: string[]): string | null {
  if (rows[0] === 'ok') return null;
  const problems = rows
    .flatMap((row) => row.split('\n'))
    .filter((line) => line.trim() !== '' && !line.startsWith('***'));
  return problems.slice(0, 3).join('; ');
}

/**
 * The schema version the tables of a file are laid out in, to hold its header's `user_version` to: a damaged header
 * byte must not make a start apply a step again over tables that have had it (or drop them as an older layout). Each
 * version's layout comes from the migrations themselves, applied to an empty database once (`MIGRATION_LAYOUTS`): no
 * line here per migration. A migration that adds no table or column leaves the layout of the one before it, so the
 * header's version is taken when its layout matches; else the newest version that matches, or null for none.
 */
export function layoutVersion(db: Database, version: number): number | null {
  layouts ??= migrationLayouts(() => new (db.constructor as new (file: string) => Database)(':memory:'));
  const layout = layoutOf(db);
  if (layouts.get(version) === layout) return version;
  const found = [...layouts].filter(([, each]) => each === layout).map(([number]) => number);
  return found.length === 0 ? null : Math.max(...found);
}

let layouts: Map<number, string> | undefined;

/** The layout after each migration, by its number, and 0 (no tables). */
function migrationLayouts(empty: () => Database): Map<number, string> {
  const scratch = withFunctions(empty());
  try {
    const result = new Map([[0, layoutOf(scratch)]]);
    for (const name of MIGRATIONS) {
      scratch.exec(migration(name));
      result.set(numberOf(name), layoutOf(scratch));
    }
    return result;
  } finally {
    scratch.close();
  }
}

/** Not SQLite's own tables (`sqlite_sequence`, `sqlite_stat1`). */
const OWN = "name NOT LIKE 'sqlite\\_%' ESCAPE '\\'";

/** A file's tables and their columns, in order (its indexes and triggers are not its layout). */
function layoutOf(db: Database): string {
  const names = (rows: unknown[]) => (rows as { name: string }[]).map((row) => row.name);
  const tables = names(
    db.prepare(`SELECT name FROM sqlite_schema WHERE type = 'table' AND ${OWN} ORDER BY name`).all(),
  );
  const columns = db.prepare('SELECT name FROM pragma_table_info(?) ORDER BY cid');
  return tables.map((table) => `${table}(${names(columns.all(table)).join(',')})`).join(' ');
}

/**
 * Whether the file can be written: a write rolled back at once, so nothing of it reaches the file. SQLite opens a file
 * whose header asks for a newer writer (a damaged byte 18) read-only, and would otherwise refuse every write later as
 * if the disk were full.
 */
export function writable(db: Database): string | null {
  const version = schemaVersion(db);
  try {
    db.exec(`BEGIN IMMEDIATE; PRAGMA user_version = ${version}`);
    return null;
  } catch (error) {
    return (error as Error).message;
  } finally {
    if (db.isTransaction) db.exec('ROLLBACK');
  }
}

/** The integrity check beside the server, and how to end it. */
export interface CheckAside {
  /** Resolves once the file is found sound, or rejects with the line a start would refuse it with. */
  readonly done: Promise<void>;
  /** Ends the check where it is (a stop): resolves once its process is gone; `done` is then left as it was. */
  stop(): Promise<void>;
}

/**
 * The aside check's process: `PRAGMA integrity_check` over a read-only connection, its rows as one JSON line; then,
 * the file sound, a passive checkpoint, which copies the log the server wrote meanwhile into the file (the check's
 * read held every checkpoint back) without the server's thread doing it. Both run on a thread of the process, whose
 * main thread ends the process at once when the server's end of its stdin closes (a server killed, not stopped).
 */
const ASIDE = `
  process.emitWarning = () => {}; // Node 22's "SQLite is experimental": the server already relies on it
  const { Worker } = require('node:worker_threads');
  process.stdin.on('end', () => process.kill(process.pid, 'SIGKILL')).resume();
  const check = new Worker(\`
    process.emitWarning = () => {};
    const { parentPort, workerData: file } = require('node:worker_threads');
    const { DatabaseSync } = require('node:sqlite');
    const checking = new DatabaseSync(file, { readOnly: true });
    const rows = checking.prepare('PRAGMA integrity_check').all().map((row) => row.integrity_check);
    checking.close();
    parentPort.postMessage(rows);
    if (rows[0] === 'ok') new DatabaseSync(file).exec('PRAGMA wal_checkpoint(PASSIVE)');\`, { eval: true, workerData: process.argv[1] });
  check.on('message', (rows) => process.stdout.write(JSON.stringify(rows) + '\\n'));
  check.on('error', (error) => (process.stderr.write('Error: ' + error.message + '\\n'), process.exit(1)));
  check.on('exit', () => process.exit(0));`;

/**
 * `PRAGMA integrity_check` of a large file in a process of its own while the server answers: rejects with the same
 * line a start would refuse the file with. A process, not a thread: a stop ends it at once, where a thread would wait
 * for its check to finish (a minute at 1,000,000 payments); it ends itself when the server dies.
 */
export function checkAside(file: string): CheckAside {
  const child = spawn(process.execPath, ['-e', ASIDE, file], { stdio: ['pipe', 'pipe', 'pipe'] });
  child.unref();
  let output = '';
  let errors = '';
  child.once('error', (error) => (errors += `Error: its check could not run (${error.message})\n`));
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (errors += chunk));
  // Its pipes are sockets: unreferenced, they keep the server's process alive no more than the child does.
  for (const pipe of [child.stdin, child.stdout, child.stderr]) (pipe as unknown as Socket).unref();
  let gone = false;
  const exited = new Promise<void>((resolvePromise) => {
    const end = () => ((gone = true), resolvePromise());
    child.once('close', end).once('error', end);
  });
  let stopping = false;
  const done = new Promise<void>((resolvePromise, reject) => {
    child.once('close', () => {
      if (stopping) return;
      const rows = output === '' ? null : (JSON.parse(output.split('\n')[0]!) as string[]);
      if (rows === null)
        return reject(damaged(file, /^\w*Error: (.*)$/m.exec(errors)?.[1] ?? 'its check could not run'));
      const problems = firstProblems(rows);
      if (problems === null) resolvePromise();
      else reject(damaged(file, problems));
    });
  });
  return {
    done,
    stop() {
      stopping = true;
      if (gone || child.exitCode !== null || child.signalCode !== null) return exited;
      // Held by the process again until it is gone: what awaits `stop` is all that keeps a stopping server running.
      child.ref();
      for (const pipe of [child.stdin, child.stdout, child.stderr]) (pipe as unknown as Socket).ref();
      child.kill('SIGKILL');
      return exited;
    },
  };
}
