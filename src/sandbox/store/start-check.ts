/**
 * What a start checks of an existing database before it serves from it, and the one line a file that fails is refused
 * with: its structure (`PRAGMA integrity_check`, which also finds an index that disagrees with its table; a larger file
 * gets the faster `quick_check` first and the whole check beside the running server), that its header's schema version
 * names the tables it holds, and that it can be written.
 */
import { Worker } from 'node:worker_threads';
import type { DatabaseSync as Database } from 'node:sqlite';
import { UnreadableRecord } from './records.js';
import { migration, MIGRATIONS, withFunctions } from './schema.js';

/** A database file that cannot be used as it is: the start is refused with this one line. */
export class StoreDamagedError extends Error {}

/** What to do, said in every line that refuses a damaged database. */
const WHAT_TO_DO = 'restore it from a backup (a copy of the file, or an export to `va-sandbox import` into a fresh one), or move it away to start afresh (see docs/storage.md)';

export const damaged = (file: string, why: string) => new StoreDamagedError(`${file} is damaged (${why}): ${WHAT_TO_DO}`);

/**
 * An error at start as the line that refuses the file: SQLite's (a page it cannot read, a file it may not open, a step
 * of the schema that fails over what the file holds) or a record that cannot be read; any other error as it is.
 */
export function startRefusal(file: string, error: unknown): unknown {
  // A record what fell due at start needed (no server runs to export the rest from).
  if (error instanceof UnreadableRecord) return damaged(file, error.what);
  if ((error as { code?: string }).code !== 'ERR_SQLITE_ERROR') return error;
  const why = (error as Error).message;
  return /not a database|malformed|corrupt/i.test(why) ? damaged(file, why) : new StoreDamagedError(`${file} cannot be used (${why}): ${WHAT_TO_DO}`);
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
export function firstProblems(rows: string[]): string | null {
  if (rows[0] === 'ok') return null;
  const problems = rows.flatMap((row) => row.split('\n')).filter((line) => line.trim() !== '' && !line.startsWith('***'));
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
  if (layouts[version] === layout) return version;
  const found = layouts.lastIndexOf(layout);
  return found < 0 ? null : found;
}

let layouts: string[] | undefined;

/** The layout after each number of migrations, from 0 (no tables) to all of them. */
function migrationLayouts(empty: () => Database): string[] {
  const scratch = withFunctions(empty());
  try {
    const result = [layoutOf(scratch)];
    for (const name of MIGRATIONS) {
      scratch.exec(migration(name));
      result.push(layoutOf(scratch));
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
  const version = (db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version;
  try {
    db.exec(`BEGIN IMMEDIATE; PRAGMA user_version = ${version}`);
    return null;
  } catch (error) {
    return (error as Error).message;
  } finally {
    if (db.isTransaction) db.exec('ROLLBACK');
  }
}

/**
 * `PRAGMA integrity_check` of a large file on a thread of its own, over a read-only connection, while the server
 * answers: rejects with the same line a start would refuse the file with.
 */
export function checkAside(file: string): Promise<void> {
  const worker = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads');
     process.emitWarning = () => {}; // Node 22's "SQLite is experimental": the server already relies on it
     const db = new (require('node:sqlite').DatabaseSync)(workerData, { readOnly: true });
     parentPort.postMessage(db.prepare('PRAGMA integrity_check').all().map((row) => row.integrity_check));
     db.close();`,
    { eval: true, workerData: file },
  );
  worker.unref();
  return new Promise<void>((resolvePromise, reject) => {
    worker.once('message', (rows: string[]) => {
      const problems = firstProblems(rows);
      if (problems === null) resolvePromise();
      else reject(damaged(file, problems));
    });
    worker.once('error', (error) => reject(damaged(file, error.message)));
  });
}
