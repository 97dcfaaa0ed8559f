import { spawnSync } from 'node:child_process';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, expect, it } from 'vitest';
import { startServer } from '../src/sandbox/http/server.js';
import { api, BIN, PAYMENT, ROOT, runCli, useTmp } from './helpers.js';

/** `va-sandbox check [--data FILE]` (contract part 8): read-only, beside a running server or not. */

/** Every row that carries a CRC-32, counted by a connection of the test's own. */
function recordsIn(data: string): number {
  const db = new DatabaseSync(data, { readOnly: true });
  try {
    const tables = db
      .prepare(
        "SELECT name FROM sqlite_schema s WHERE type = 'table' AND EXISTS (SELECT 1 FROM pragma_table_info(s.name) WHERE name = 'crc')",
      )
      .all() as { name: string }[];
    return tables.reduce(
      (sum, { name }) => sum + (db.prepare(`SELECT count(*) AS n FROM ${name}`).get() as { n: number }).n,
      0,
    );
  } finally {
    db.close();
  }
}

/** A database after a clean stop: payments on a few pages, and a client. */
async function written(data: string): Promise<void> {
  const server = await startServer({ port: 0, host: '127.0.0.1', data });
  const client = api(server.url, 'sk_check');
  for (let i = 0; i < 40; i++) await client.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 10 + i });
  await client.data('POST', '/api/v1/clients', { paymentHubId: 1, name: 'Ana', taxId: '20-1' });
  await server.close();
}

describe('va-sandbox check', () => {
  it('an undamaged database: ok: N records in FILE, exit 0, and the file left as it was', {
    timeout: 30_000,
  }, async () => {
    const data = join(useTmp(), 'state.db');
    await written(data);
    const before = readFileSync(data);
    const records = recordsIn(data);
    expect(records).toBeGreaterThan(10);
    expect(await runCli(['check', '--data', data])).toEqual({
      code: 0,
      stdout: `ok: ${records} records in ${data}\n`,
      stderr: '',
    });
    // VA_SANDBOX_DATA names it as it does for start.
    expect((await runCli(['check'], { VA_SANDBOX_DATA: data })).stdout).toBe(`ok: ${records} records in ${data}\n`);
    const json = await runCli(['check', '--data', data, '--json']);
    expect(JSON.parse(json.stdout)).toEqual({ file: data, records, damaged: [] });
    expect(readFileSync(data).equals(before)).toBe(true);
  });

  it('loads neither ink nor React (a non-interactive command)', { timeout: 30_000 }, async () => {
    const data = join(useTmp(), 'state.db');
    await written(data);
    // Any import of them fails the run.
    const hook = `import { registerHooks } from 'node:module'; registerHooks({ resolve(name, context, next) { if (/^(ink|react)(\\/|$)/.test(name)) throw new Error('loaded ' + name); return next(name, context); } });`;
    const run = spawnSync(
      process.execPath,
      ['--import', `data:text/javascript,${encodeURIComponent(hook)}`, BIN, 'check', '--data', data],
      { encoding: 'utf8' },
    );
    expect(run.stderr).toBe('');
    expect(run.stdout).toMatch(/^ok: \d+ records in /);
    expect(run.status).toBe(0);
  });

  it('beside a server that is taking writes: ok every time, and every write answered 201', {
    timeout: 60_000,
  }, async () => {
    const data = join(useTmp(), 'state.db');
    const server = await startServer({ port: 0, host: '127.0.0.1', data });
    const client = api(server.url, 'sk_check_live');
    let checking = true;
    const statuses: number[] = [];
    const writer = (async () => {
      for (let i = 0; checking && i < 100_000; i++)
        statuses.push(
          (await client.call('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 1 + (i % 1000) })).status,
        );
    })();
    try {
      for (let run = 0; run < 3; run++) {
        const written = statuses.length;
        const check = await runCli(['check', '--data', data]);
        expect(check).toMatchObject({ code: 0, stderr: '' });
        expect(check.stdout).toMatch(new RegExp(`^ok: \\d+ records in ${data}\\n$`));
        expect(statuses.length).toBeGreaterThan(written); // the server wrote while it was checked
      }
    } finally {
      checking = false;
      await writer;
      await server.close();
    }
    expect(statuses.filter((status) => status !== 201)).toEqual([]);
    expect((await runCli(['check', '--data', data])).stdout).toBe(`ok: ${recordsIn(data)} records in ${data}\n`);
  });

  it('a damaged b-tree page: integrity_check’s problems (a start’s own check of a file this small), each on a line naming the file, exit 1', {
    timeout: 30_000,
  }, async () => {
    const data = join(useTmp(), 'state.db');
    await written(data);
    const db = new DatabaseSync(data, { readOnly: true });
    const { pageno, pgsize } = db
      .prepare(
        "SELECT pageno, pgsize FROM dbstat WHERE name = 'va_payments' AND pagetype = 'leaf' ORDER BY pageno LIMIT 1",
      )
      .get() as { pageno: number; pgsize: number };
    db.close();
    const bytes = readFileSync(data);
    bytes[(pageno - 1) * pgsize + 4]! ^= 0x01; // the page's count of cells
    writeFileSync(data, bytes);
    const check = await runCli(['check', '--data', data]);
    expect(check.code).toBe(1);
    const lines = check.stdout.trim().split('\n');
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line).toMatch(new RegExp(`^${data}: (integrity_check: |va_payments )`));
    expect(lines[0]).toMatch(/integrity_check: /);
    expect(check.stderr).toMatch(
      new RegExp(`^va-sandbox: ${data} is damaged \\(\\d+ found damaged, \\d+ records read\\)[^\\n]*\\n$`),
    );
  });

  it('--full: an index key that disagrees with its table (what a start refuses), as integrity_check words it', {
    timeout: 30_000,
  }, async () => {
    const data = join(useTmp(), 'state.db');
    await written(data);
    const db = new DatabaseSync(data, { readOnly: true });
    const { pageno, pgsize } = db
      .prepare(
        "SELECT pageno, pgsize FROM dbstat d WHERE pagetype = 'leaf' AND ncell > 0 AND (SELECT type FROM sqlite_schema s WHERE s.name = d.name) = 'index' ORDER BY pageno LIMIT 1",
      )
      .get() as { pageno: number; pgsize: number };
    db.close();
    const bytes = readFileSync(data);
    const start = (pageno - 1) * pgsize;
    bytes[start + bytes.readUInt16BE(start + 8) + 3]! ^= 0x04; // a byte of its first key
    writeFileSync(data, bytes);
    const check = await runCli(['check', '--data', data, '--full']);
    expect(check.code).toBe(1);
    expect(check.stdout).toMatch(new RegExp(`^${data}: integrity_check: .*index`));
  });

  it('a record changed far into a large table (past the rows one statement checks): its table and id, and every row counted', {
    timeout: 30_000,
  }, async () => {
    const data = join(useTmp(), 'state.db');
    await written(data);
    // 12,000 copies of an event under ids of their own, the 11,111th then changed by a letter (its JSON still sound).
    const db = new DatabaseSync(data);
    db.exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 12000)
      INSERT INTO events (account, id, data, crc) SELECT e.account, 'copy-' || i, e.data, e.crc FROM n, (SELECT * FROM events LIMIT 1) AS e`);
    db.exec(`UPDATE events SET data = replace(data, '"created"', '"creatEd"') WHERE id = 'copy-11111'`);
    db.close();
    const records = recordsIn(data);
    const check = await runCli(['check', '--data', data]);
    expect(check.code).toBe(1);
    expect(check.stdout).toBe(`${data}: events record copy-11111: its CRC-32 does not match its stored bytes\n`);
    expect(check.stderr).toContain(`(1 found damaged, ${records} records read)`);
  });

  it('a file of schema version 2 (test/data/v2), not yet migrated: its structure checked, and says its records have no CRC-32', async () => {
    const data = join(useTmp(), 'state.db');
    copyFileSync(join(ROOT, 'test/data/v2/state.db'), data);
    expect(await runCli(['check', '--data', data])).toEqual({
      code: 0,
      stdout: `ok: 0 records in ${data} (schema version 2: its records keep no CRC-32 until a start migrates it)\n`,
      stderr: '',
    });
  });

  it('a missing file: one line naming it, exit 1; one that is no database: what a start says of it, exit 1', async () => {
    const dir = useTmp();
    const missing = await runCli(['check', '--data', join(dir, 'none.db')]);
    expect(missing).toEqual({
      code: 1,
      stdout: '',
      stderr: `va-sandbox: no database at ${join(dir, 'none.db')} (give the one a server uses with --data, or VA_SANDBOX_DATA)\n`,
    });
    writeFileSync(join(dir, 'notes.txt'), 'not a database, but long enough to have a header of its own '.repeat(20));
    const text = await runCli(['check', '--data', join(dir, 'notes.txt')]);
    expect(text).toMatchObject({ code: 1, stdout: `${join(dir, 'notes.txt')}: file is not a database\n` });
    expect(text.stderr).toMatch(/^va-sandbox: .*notes\.txt is damaged \(1 found damaged, 0 records read\): restore it/);
  });
});
