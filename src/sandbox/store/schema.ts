/**
 * The schema: numbered `.sql` files in `migrations/`, applied in order at start, each in its own transaction, the
 * file's `PRAGMA user_version` saying how many it has had. A released migration never changes (a test keeps their
 * hashes): a change to the schema is a new file. No migration reads the live TypeScript schema; the one function they
 * may call is `crc32` (node:zlib's CRC-32 of a text's UTF-8 bytes), which the store registers.
 */
import { readdirSync, readFileSync } from 'node:fs';
import type { DatabaseSync as Database } from 'node:sqlite';
import { checksum } from './records.js';

const FOLDER = new URL('./migrations/', import.meta.url);

/** The migrations' file names, in order (`0001_….sql`, …): the newest schema version is how many there are. */
export const MIGRATIONS = readdirSync(FOLDER).filter((name) => /^\d{4}_.*\.sql$/.test(name)).sort();

/** The text of a migration. */
export const migration = (name: string): string => readFileSync(new URL(name, FOLDER), 'utf8');

/** Gives a connection the functions migrations call. */
export function withFunctions(db: Database): Database {
  db.function('crc32', { deterministic: true }, (text) => checksum(String(text)));
  return db;
}

/**
 * Applies the migrations a file has not had, from `version` on, each in its own transaction; then copies the log into
 * the file, so a new database's writes do not share an automatic checkpoint with its schema's making.
 */
export function migrate(db: Database, version: number): void {
  if (version === MIGRATIONS.length) return;
  for (let step = version; step < MIGRATIONS.length; step++) {
    db.exec('BEGIN');
    try {
      db.exec(migration(MIGRATIONS[step]!));
      db.exec(`PRAGMA user_version = ${step + 1}`);
      db.exec('COMMIT');
    } catch (error) {
      if (db.isTransaction) db.exec('ROLLBACK');
      throw error;
    }
  }
  db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
}
