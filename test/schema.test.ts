import { createHash } from 'node:crypto';
import { copyFileSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, expect, it } from 'vitest';
import type { Account } from '../src/core/account/account.js';
import { EXPORT_FORMAT, EXPORT_VERSION, exportAccount } from '../src/core/account-export/account-export.js';
import { exportText } from '../src/core/account-export/export-text.js';
import type { TableName } from '../src/core/records/state.js';
import type { Where } from '../src/core/store/repository.js';
import { fileStore } from '../src/sandbox/store/database.js';
import { MIGRATIONS, migration, NEWEST, withFunctions } from '../src/sandbox/store/schema.js';
import { useTmp } from './helpers.js';

const V2 = resolve(import.meta.dirname, 'data', 'v2');
const tmp = useTmp();
let copies = 0;
const copyOfV2 = () => {
  const file = join(tmp, `v2-${copies++}.db`);
  copyFileSync(join(V2, 'state.db'), file);
  return file;
};

/**
 * Each released migration's sha256. A released migration never changes (a database that had it would not have the
 * change): a change to the schema is a new file, whose hash is added here when it is released.
 */
const RELEASED: Record<string, string> = {
  '0001_accounts_and_records.sql': '9b3eca4a5962095ca26cf007003b59e9a47a8b60485e5b9d6562af46bfe63c77',
  '0002_account_ids_and_columns.sql': '2002d5a8aa4829a97e7d22bb2b77db1693d8a3582e7dc52dc7b3d4cb3db13c68',
  '0003_designed_tables.sql': '77a640cd29f1c45a66aa338e0293265f6ed8c6744a5e17ea8218a67a579fd345',
};

/** A database's schema: every table, index and trigger with the SQL that made it. */
const schemaOf = (db: DatabaseSync) =>
  db
    .prepare("SELECT type, name, tbl_name, sql FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name")
    .all();

describe('the migrations', () => {
  it('a released migration never changes: add a new one', () => {
    for (const [name, sha256] of Object.entries(RELEASED)) {
      const actual = createHash('sha256').update(migration(name)).digest('hex');
      expect(
        actual,
        `${name} was released and changed: a released migration never changes, add a new one instead`,
      ).toBe(sha256);
    }
    expect(MIGRATIONS.slice(0, Object.keys(RELEASED).length)).toEqual(Object.keys(RELEASED));
  });

  it("0002 takes version 1 to exactly the tables, rows and columns today's release (version 2) wrote", () => {
    // A copy: ATTACH opens a file to write, and the committed one stays as that release left it.
    const v2file = copyOfV2();
    const v2 = new DatabaseSync(v2file, { readOnly: true });
    const v1 = withFunctions(new DatabaseSync(':memory:'));
    v1.exec(migration(MIGRATIONS[0]!));
    // The v2 file's records as version 1 kept them: by the account's key, each record's id inside its JSON.
    const idField: Record<string, string> = { pool_cvus: 'cvu', hubs: '', idempotency_keys: '' };
    v1.exec(`ATTACH '${v2file}' AS v2`);
    v1.exec('INSERT INTO accounts (key, head) SELECT key, head FROM v2.accounts');
    const tables = (
      v2.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND sql LIKE '%data TEXT NOT NULL%'").all() as {
        name: string;
      }[]
    ).map((row) => row.name);
    expect(tables).toHaveLength(10);
    for (const table of tables) {
      const field = idField[table] ?? 'id';
      const data = field ? `json_set(r.data, '$.${field}', r.id)` : 'r.data';
      v1.exec(
        `INSERT INTO ${table} (account, id, data) SELECT a.key, r.id, ${data} FROM v2.${table} AS r JOIN v2.accounts AS a ON a.id = r.account ORDER BY r.seq`,
      );
    }
    v1.exec('DETACH v2');
    v1.exec(migration(MIGRATIONS[1]!));
    expect(schemaOf(v1)).toEqual(schemaOf(v2));
    // Every column computed from the JSON as today's release computed it from the record (`COLUMNS`), every count the
    // same (a list's count that went back to 0 stays a row in a file that had it).
    for (const table of [...tables, 'counts']) {
      const columns = (
        v2.prepare(`SELECT name FROM pragma_table_info('${table}') WHERE name NOT IN ('seq', 'account')`).all() as {
          name: string;
        }[]
      ).map((row) => row.name);
      const rows = (db: DatabaseSync) =>
        db
          .prepare(
            `SELECT a.key, ${columns.map((c) => `t.${c}`).join(', ')} FROM ${table} AS t JOIN accounts AS a ON a.id = t.account ${table === 'counts' ? 'WHERE t.n > 0 ORDER BY a.key, t.list' : 'ORDER BY a.key, t.seq'}`,
          )
          .all();
      expect(rows(v1), table).toEqual(rows(v2));
    }
  });

  it("a database of version 2 migrates, and its accounts export as today's release exported them", async () => {
    const file = copyOfV2();
    const store = fileStore(file);
    await store.checked;
    try {
      for (const key of ['sk_alpha', 'sk_beta', 'sk_gamma']) {
        const expected = JSON.parse(readFileSync(join(V2, `export-${key}.json`), 'utf8'));
        // The export's time is the account's clock when it was made, which runs with real time: the one thing that differs.
        const account = {
          head: store.head(key),
          rows: (table: TableName, where?: Where, unreadable?: string[]) => store.rows(key, table, where, unreadable),
          now: () => expected.exportedAt,
        } as unknown as Account;
        const unreadable: string[] = [];
        expect(JSON.parse(JSON.stringify(exportAccount(account, unreadable))), key).toEqual(expected);
        expect(unreadable).toEqual([]);
        // Streamed a piece at a time, the text is byte for byte what the release's whole document gave, keys in its order.
        expect([...exportText(account, EXPORT_FORMAT, EXPORT_VERSION, [])].join(''), key).toBe(
          JSON.stringify(expected),
        );
      }
    } finally {
      await store.close();
    }
    const db = new DatabaseSync(file, { readOnly: true });
    expect(db.prepare('PRAGMA user_version').get()).toEqual({ user_version: NEWEST });
  });

  it("a changed byte in a delivery's attempt or an account's head is refused by its crc, naming the file, table and record", async () => {
    const file = copyOfV2();
    await fileStore(file).close();
    const db = new DatabaseSync(file);
    const { delivery } = db
      .prepare('SELECT delivery FROM delivery_attempts WHERE data LIKE \'%"responseStatus":500%\' LIMIT 1')
      .get() as { delivery: string };
    db.prepare(
      'UPDATE delivery_attempts SET data = replace(data, \'"responseStatus":500\', \'"responseStatus":200\') WHERE delivery = ? AND n = 0',
    ).run(delivery);
    db.prepare(
      "UPDATE accounts SET head = replace(head, '\"clockOffsetMs\":', '\"clockOffsetMs\": ') WHERE key = 'sk_beta'",
    ).run();
    db.close();
    const store = fileStore(file);
    try {
      const read = (what: () => unknown) => {
        try {
          what();
        } catch (error) {
          return (error as Error).message;
        }
        return 'served';
      };
      expect(read(() => store.records('sk_alpha').get('deliveries', delivery))).toMatch(
        new RegExp(
          `^${file}: delivery_attempts record ${delivery} #1 cannot be read \\(its checksum does not match.*\`va-sandbox check\``,
        ),
      );
      expect(read(() => store.head('sk_beta'))).toContain(
        `${file}: accounts record sk_beta cannot be read (its checksum does not match`,
      );
      const unreadable: string[] = [];
      expect(Object.keys(store.read('sk_alpha', unreadable)!.deliveries)).not.toContain(delivery);
      expect(unreadable).toEqual([`deliveries ${delivery}`]);
    } finally {
      await store.close();
    }
  });
});
