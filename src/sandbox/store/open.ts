/** Opening the state database's file: node:sqlite loaded quietly, the file's pragmas, its start checks and migrations. */
import { createRequire } from 'node:module';
import type { DatabaseSync as Database } from 'node:sqlite';
import { migrate, withFunctions } from './schema.js';
import {
  damaged,
  headerRefusal,
  migrationRefusal,
  newerRelease,
  problemsOf,
  schemaVersion,
  startRefusal,
  writable,
} from './start-check.js';

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
export function open(file: string, fsync: boolean, check: 'integrity_check' | 'quick_check' | null): Database {
  let db: Database | undefined;
  try {
    db = withFunctions(new DatabaseSync(file));
    // The WAL is cut back to this after a checkpoint: a large write (an import, a seed) would leave it its size.
    db.exec(
      `PRAGMA journal_mode = WAL; PRAGMA synchronous = ${fsync ? 'FULL' : 'NORMAL'}; PRAGMA journal_size_limit = ${WAL_LIMIT}`,
    );
    db.exec(`PRAGMA cache_size = ${-CACHE_KIB}`);
    const version = schemaVersion(db);
    const newer = newerRelease(file, version);
    if (newer !== null) throw newer;
    if (check !== null && version > 0) {
      const problems = problemsOf(db, check);
      if (problems !== null) throw damaged(file, problems);
    }
    const header = headerRefusal(db, file);
    if (header !== null) throw header;
    const readOnly = file === ':memory:' ? null : writable(db);
    if (readOnly !== null)
      throw damaged(file, `it cannot be written: ${readOnly}; its header may be damaged, or the file is read-only`);
    try {
      migrate(db, version);
    } catch (error) {
      throw migrationRefusal(db, file, error);
    }
    return db;
  } catch (error) {
    db?.close();
    throw startRefusal(file, error);
  }
}
