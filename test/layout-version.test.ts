import { DatabaseSync } from 'node:sqlite';
import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { MIGRATIONS, migration, withChecksums, withFunctions } from '../src/sandbox/store/schema.js';
import { layoutVersion } from '../src/sandbox/store/start-check.js';

/** A database with the first `n` migrations applied. */
function migratedTo(n: number): DatabaseSync {
  const db = withFunctions(new DatabaseSync(':memory:'));
  for (const name of MIGRATIONS.slice(0, n)) db.exec(migration(name));
  return db;
}

describe('the schema version of a file told by its tables, from the migrations themselves', () => {
  it.each(MIGRATIONS.map((_, n) => n + 1).concat(0))(
    'the tables of schema %i are told that schema, whatever the header says',
    (n) => {
      const db = migratedTo(n);
      expect(layoutVersion(db, n)).toBe(n);
      // A header one behind or ahead that names another layout is told the tables' own.
      const other = n === 0 ? 1 : n - 1;
      expect(layoutVersion(db, other)).toBe(n);
      db.close();
    },
  );

  it('tables that no migration lays out are of no schema', () => {
    const db = migratedTo(MIGRATIONS.length);
    db.exec('ALTER TABLE accounts ADD COLUMN stray TEXT');
    expect(layoutVersion(db, MIGRATIONS.length)).toBeNull();
    db.close();
  });
});

describe('a migration that changes JSON', () => {
  it('rewrites only `data`: each row rewritten gets its crc, a damaged row stays damaged, the helper leaves nothing', () => {
    const db = migratedTo(MIGRATIONS.length);
    const insert = db.prepare('INSERT INTO va_payments (account, id, data, crc) VALUES (1, ?, ?, ?)');
    insert.run('a', '{"id":"a"}', crc32('{"id":"a"}'));
    insert.run('b', '{"id":"b"}', 7);
    const attempt = '{"n":1}';
    db.prepare('INSERT INTO delivery_attempts (account, delivery, n, data, crc) VALUES (1, ?, 1, ?, ?)').run(
      'd',
      attempt,
      crc32(attempt),
    );
    withChecksums(db, () => {
      db.exec(`UPDATE va_payments SET data = json_set(data, '$.purpose', NULL)`);
      db.exec(`UPDATE delivery_attempts SET data = json_set(data, '$.ok', 1)`);
    });
    const rows = db.prepare('SELECT id, data, crc FROM va_payments ORDER BY id').all() as {
      data: string;
      crc: number;
    }[];
    expect(rows.map((row) => row.data)).toEqual(['{"id":"a","purpose":null}', '{"id":"b","purpose":null}']);
    expect(rows[0]!.crc).toBe(crc32(rows[0]!.data));
    expect(rows[1]!.crc).toBe(7);
    const stored = db.prepare('SELECT data, crc FROM delivery_attempts').get() as { data: string; crc: number };
    expect(stored.crc).toBe(crc32(stored.data));
    expect(db.prepare("SELECT count(*) AS n FROM temp.sqlite_schema WHERE type = 'trigger'").get()).toEqual({ n: 0 });
    db.close();
  });
});
