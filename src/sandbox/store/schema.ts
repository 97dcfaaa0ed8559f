/**
 * The schema: numbered `.sql` files in `migrations/`, applied in order at start, each in its own transaction, the
 * file's `PRAGMA user_version` the number of the last it has had (a number is a file's own, not its place: branches
 * made at once take numbers ahead, so a gap is allowed and two files of one number are refused). A released migration
 * never changes (a test keeps their hashes): a change to the schema is a new file. No migration reads the live TypeScript schema; the one function they
 * may call is `crc32` (node:zlib's CRC-32 of a text's UTF-8 bytes), which the store registers.
 */
import { readdirSync, readFileSync } from 'node:fs';
import type { DatabaseSync as Database } from 'node:sqlite';
import { checksum } from './records.js';

const FOLDER = new URL('./migrations/', import.meta.url);

/** The migrations' file names, in order (`0001_….sql`, …). */
export const MIGRATIONS = readdirSync(FOLDER).filter((name) => /^\d{4}_.*\.sql$/.test(name)).sort();

/** A migration's number: the schema version of a file that has had it (`0005_….sql`: 5). */
const numberOf = (name: string): number => Number(name.slice(0, 4));

/** The newest schema version: the highest migration's number. */
export const NEWEST = numberOf(MIGRATIONS.at(-1)!);

/** Two files of one number (branches merged without renumbering): refused when the store is loaded, never run. */
const twice = MIGRATIONS.find((name, i) => i > 0 && numberOf(name) === numberOf(MIGRATIONS[i - 1]!));
if (twice !== undefined) throw new Error(`two migrations are numbered ${twice.slice(0, 4)}: give one the next free number`);

/** The text of a migration. */
export const migration = (name: string): string => readFileSync(new URL(name, FOLDER), 'utf8');

/** Gives a connection the functions migrations call. */
export function withFunctions(db: Database): Database {
  db.function('crc32', { deterministic: true }, (text) => checksum(String(text)));
  return db;
}

/**
 * Applies the migrations a file has not had (those numbered above `version`), each in its own transaction; then copies
 * the log into the file, so a new database's writes do not share an automatic checkpoint with its schema's making.
 */
export function migrate(db: Database, version: number): void {
  if (version === NEWEST) return;
  for (const name of MIGRATIONS.filter((file) => numberOf(file) > version)) {
    db.exec('BEGIN');
    try {
      db.exec(migration(name));
      db.exec(`PRAGMA user_version = ${numberOf(name)}`);
      db.exec('COMMIT');
    } catch (error) {
      if (db.isTransaction) db.exec('ROLLBACK');
      throw error;
    }
  }
  db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
}
