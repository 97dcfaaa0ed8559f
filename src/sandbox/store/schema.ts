/**
 * The schema: numbered `.sql` files in `migrations/`, applied in order at start, each in its own transaction, the
 * file's `PRAGMA user_version` the number of the last it has had (a number is a file's own, not its place: branches
 * made at once take numbers ahead, so a gap is allowed and two files of one number are refused). A released migration
 * never changes (a test keeps their hashes): a change to the schema is a new file. No migration reads the live
 * TypeScript schema; the one function they may call is `crc32` (node:zlib's CRC-32 of a text's UTF-8 bytes), which the
 * store registers. A migration that changes records' JSON only writes `data` (`UPDATE va_payments SET data =
 * json_set(data, …)`): each row's `crc` follows it (`withChecksums`).
 */
import { readdirSync, readFileSync } from 'node:fs';
import type { DatabaseSync as Database } from 'node:sqlite';
import { checksum } from './records.js';

const FOLDER = new URL('./migrations/', import.meta.url);

/** The migrations' file names, in order (`0001_….sql`, …). */
export const MIGRATIONS = readdirSync(FOLDER)
  .filter((name) => /^\d{4}_.*\.sql$/.test(name))
  .sort();

/** A migration's number: the schema version of a file that has had it (`0005_….sql`: 5). */
export const numberOf = (name: string): number => Number(name.slice(0, 4));

/** The newest schema version: the highest migration's number. */
export const NEWEST = numberOf(MIGRATIONS.at(-1)!);

/** Two files of one number (branches merged without renumbering): refused when the store is loaded, never run. */
const twice = MIGRATIONS.find((name, i) => i > 0 && numberOf(name) === numberOf(MIGRATIONS[i - 1]!));
if (twice !== undefined)
  throw new Error(`two migrations are numbered ${twice.slice(0, 4)}: give one the next free number`);

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
      withChecksums(db, () => db.exec(migration(name)));
      db.exec(`PRAGMA user_version = ${numberOf(name)}`);
      db.exec('COMMIT');
    } catch (error) {
      if (db.isTransaction) db.exec('ROLLBACK');
      throw error;
    }
  }
  db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
}

/**
 * Runs `change` (a migration) with each record table's `crc` recomputed for the rows whose `data` it rewrites: a
 * temporary trigger per table that has both, dropped after. A row whose text already failed its checksum keeps failing.
 */
export function withChecksums(db: Database, change: () => void): void {
  const tables = recordTables(db);
  for (const [table, keys] of tables) {
    const row = keys.map((key) => `${key} = NEW.${key}`).join(' AND ');
    db.exec(
      `CREATE TEMP TRIGGER ${table}_crc AFTER UPDATE OF data ON ${table} WHEN crc32(OLD.data) = OLD.crc
       BEGIN UPDATE ${table} SET crc = crc32(NEW.data) WHERE ${row}; END`,
    );
  }
  try {
    change();
  } finally {
    for (const [table] of tables) db.exec(`DROP TRIGGER IF EXISTS temp.${table}_crc`);
  }
}

/** The tables with `data` and `crc`, each with the columns that find one of its rows (its primary key, or rowid). */
function recordTables(db: Database): [string, string[]][] {
  const tables = db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite%'").all();
  const columns = db.prepare('SELECT name, pk FROM pragma_table_info(?) ORDER BY pk, cid');
  return (tables as { name: string }[]).flatMap(({ name }) => {
    const table = columns.all(name) as { name: string; pk: number }[];
    const has = (column: string) => table.some((c) => c.name === column);
    if (!has('data') || !has('crc')) return [];
    const keys = table.filter((c) => c.pk > 0).map((c) => c.name);
    return [[name, keys.length > 0 ? keys : ['rowid']]];
  });
}
