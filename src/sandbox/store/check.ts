/**
 * `va-sandbox check`: a database file read through, read-only (safe beside a running server, whose writes go on):
 * what a start refuses (`start-check.ts`), in its words, then every record row's CRC-32 against its stored bytes, which
 * no structural check can see (one letter changed inside a record's JSON).
 */
import { existsSync, statSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { crc32 } from 'node:zlib';
import { notAFile } from './file-kind.js';
import { RECORD_TABLES } from './records.js';
import {
  damaged as damagedFile,
  headerRefusal,
  INTEGRITY_AT_START_BYTES,
  newerRelease,
  notADatabase,
  StoreDamagedError,
  schemaVersion,
  startRefusal,
} from './start-check.js';

/** What a check found: how many records it read, and one line per damaged thing (none: the file is sound). */
export interface CheckResult {
  records: number;
  damaged: string[];
  /** A file of an older schema version, whose records keep no CRC-32 yet: what was not checked. */
  note?: string;
}

/** The file is not there, or is no SQLite database: nothing could be checked. */
class CheckRefused extends Error {}

/**
 * The record tables (`RECORD_TABLES`) that keep a `crc` column in this file: a file of an older schema version, not yet
 * migrated by a start, has none, and gets its structure checked only.
 */
function checkedTables(db: DatabaseSync): typeof RECORD_TABLES {
  const withCrc = db.prepare("SELECT 1 FROM pragma_table_info(?) WHERE name = 'crc'");
  const withState = db.prepare("SELECT 1 FROM pragma_table_info(?) WHERE name = 'state'");
  return RECORD_TABLES.filter(({ table }) => withCrc.get(table) !== undefined).map((checked) => ({
    ...checked,
    state: checked.state === true && withState.get(checked.table) !== undefined,
  }));
}

/** Rows a pass of the CRC reads per statement: node:sqlite keeps a function's arguments until its statement ends. */
const CHUNK = 5_000;

/**
 * A table's rows, and the ids of those whose CRC-32 does not match their text: in SQLite's own loop, a chunk of rowids
 * at a time (about 7 s and 200 MiB for 1,000,000 payments, where one statement held 1 GB); a table without rowids row
 * by row in JavaScript (twice as slow, but its memory stays flat).
 */
function mismatches(
  db: DatabaseSync,
  { table, id, text, state }: (typeof RECORD_TABLES)[number],
): { rows: number; ids: string[] } {
  const ids: string[] = [];
  let rows = 0;
  if (
    db.prepare("SELECT 1 FROM sqlite_schema WHERE name = ? AND sql LIKE '%WITHOUT ROWID%'").get(table) !== undefined
  ) {
    for (const row of db.prepare(`SELECT ${id} AS id, ${text} AS text, crc FROM ${table}`).iterate() as Iterable<{
      id: string;
      text: string;
      crc: number;
    }>) {
      rows++;
      if (crc32(row.text) !== row.crc) ids.push(row.id);
    }
    return { rows, ids };
  }
  // A delivery's state is checked with its row: the CRC-32 of nothing is 0, so a state lost (NULL) is found too.
  const read = state ? `${text}, crc, state, state_crc` : `${text}, crc`;
  const mismatch = `crc IS NOT crc32(${text})${state ? " OR coalesce(state_crc, 0) IS NOT crc32(coalesce(state, ''))" : ''}`;
  const chunk = db.prepare(
    `SELECT count(*) AS n, count(*) FILTER (WHERE ${mismatch}) AS bad, max(rowid) AS last FROM (SELECT rowid, ${read} FROM ${table} WHERE rowid > ? ORDER BY rowid LIMIT ${CHUNK})`,
  );
  const bad = db.prepare(`SELECT ${id} AS id FROM ${table} WHERE rowid > ? AND rowid <= ? AND (${mismatch})`);
  for (let after = 0; ; ) {
    const found = chunk.get(after) as { n: number; bad: number; last: number | null };
    if (found.n === 0) return { rows, ids };
    rows += found.n;
    if (found.bad > 0) ids.push(...(bad.all(after, found.last) as { id: string }[]).map((row) => row.id));
    after = found.last!;
  }
}

/**
 * Checks `file` read-only: refused (`CheckRefused`) when it is missing or no database file (a directory, a device, an
 * empty file). What a start would refuse (`start-check.ts`) is found in the words the start uses: a newer release's
 * schema, the header's write version and schema version, SQLite's own refusal, and the structure with the start's own
 * pragma (`integrity_check` up to `INTEGRITY_AT_START_BYTES`, else `quick_check`; `full`: `integrity_check` always).
 */
export function checkDatabase(file: string, full = false): CheckResult {
  if (!existsSync(file))
    throw new CheckRefused(`no database at ${file} (give the one a server uses with --data, or VA_SANDBOX_DATA)`);
  const stat = statSync(file);
  const size = stat.size;
  const what = notAFile(stat) ?? (size === 0 ? 'an empty file' : null);
  if (what !== null) throw new CheckRefused(notADatabase(file, what).message);
  const pragma = full || size <= INTEGRITY_AT_START_BYTES ? 'integrity_check' : 'quick_check';
  let db: DatabaseSync | undefined;
  try {
    db = new DatabaseSync(file, { readOnly: true });
    // One snapshot for the whole check: the count and the rows checked agree while a server writes beside it.
    db.exec('BEGIN');
    const newer = newerRelease(file, schemaVersion(db));
    if (newer !== null) return { records: 0, damaged: [`${file}: ${newer.why}`] };
    const structure = (db.prepare(`PRAGMA ${pragma}`).all() as Record<string, string>[]).map((row) => row[pragma]!);
    const line = (problem: string) => `${file}: ${pragma}: ${problem.replace(/\s*\n\s*/g, ' ')}`;
    const damaged = structure[0] === 'ok' ? [] : structure.map(line);
    const header = headerRefusal(db, file);
    if (header !== null) damaged.push(`${file}: ${header.why}`);
    return recordsChecked(db, file, damaged);
  } catch (error) {
    const refusal = startRefusal(file, error);
    if (refusal instanceof StoreDamagedError) return { records: 0, damaged: [`${file}: ${refusal.why}`] };
    throw new CheckRefused(`${file} cannot be checked: ${(error as Error).message}`);
  } finally {
    db?.close();
  }
}

/** Every record row's CRC-32 checked, after the structure's `damaged` lines; a file of an older schema says so. */
function recordsChecked(db: DatabaseSync, file: string, damaged: string[]): CheckResult {
  db.function('crc32', { deterministic: true }, (text) => crc32(text as string));
  let records = 0;
  const tables = checkedTables(db);
  for (const checked of tables) {
    try {
      const found = mismatches(db, checked);
      records += found.rows;
      for (const id of found.ids) {
        damaged.push(`${file}: ${checked.table} record ${id}: its CRC-32 does not match its stored bytes`);
      }
    } catch (error) {
      damaged.push(`${file}: ${checked.table} cannot be read: ${(error as Error).message}`);
    }
  }
  if (tables.length > 0) return { records, damaged };
  const note = `schema version ${schemaVersion(db)}: its records keep no CRC-32 until a start migrates it`;
  return { records, damaged, note };
}

/** The one line a check that found damage ends with: how much, and what to do. */
export const damagedLine = (file: string, result: CheckResult): string =>
  damagedFile(file, `${result.damaged.length} found damaged, ${result.records} records read`).message;
