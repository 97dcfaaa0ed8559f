import { execFileSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, expect, it } from 'vitest';
import { startServer } from '../src/sandbox/http/server.js';
import { checkAside } from '../src/sandbox/store/start-check.js';
import { api, eventually, PAYMENT, spawnServer, useTmp } from './helpers.js';

/**
 * Issue 48 point 5: the integrity check a large database gets beside the running server is a process of its own. Its
 * long read holds back every checkpoint: once the file is found sound it copies the log written meanwhile into the
 * file itself (a passive checkpoint), and a stop ends it at once rather than waiting for it.
 */

/** A WAL database whose rows are all still in its log (no checkpoint yet), and the connection that wrote them. */
function unCheckpointed(rows: number) {
  const file = join(useTmp(), 'state.db');
  const db = new DatabaseSync(file);
  db.exec(
    'PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0; CREATE TABLE t (id INTEGER PRIMARY KEY, data TEXT)',
  );
  const insert = db.prepare('INSERT INTO t (data) VALUES (?)');
  db.exec('BEGIN');
  for (let i = 0; i < rows; i++) insert.run('x'.repeat(500));
  db.exec('COMMIT');
  return { file, db };
}

describe('the integrity check beside the server', () => {
  it('finds a sound file sound, then copies the log written meanwhile into the file', async () => {
    const { file, db } = unCheckpointed(5_000);
    const before = statSync(file).size;
    expect(statSync(`${file}-wal`).size).toBeGreaterThan(2 * 1024 * 1024);
    await checkAside(file).done;
    expect(statSync(file).size).toBeGreaterThan(before + 2 * 1024 * 1024);
    // Copied, not lost: the writer reads every row, and the next write starts the log over.
    expect((db.prepare('SELECT count(*) AS n FROM t').get() as { n: number }).n).toBe(5_000);
    db.close();
  });

  it('is ended at once by a stop, leaving the file and its log as they were', async () => {
    const { file, db } = unCheckpointed(20_000);
    const sizes = () => [statSync(file).size, statSync(`${file}-wal`).size];
    const before = sizes();
    const check = checkAside(file);
    const settled = check.done.then(
      () => 'settled',
      () => 'settled',
    );
    const t0 = performance.now();
    await check.stop();
    expect(performance.now() - t0).toBeLessThan(2_000);
    expect(await Promise.race([settled, new Promise((resolve) => setTimeout(resolve, 300, 'pending'))])).toBe(
      'pending',
    );
    expect(sizes()).toEqual(before);
    expect(await check.stop()).toBeUndefined(); // a second stop does nothing
    db.close();
  });
});

/** A va-sandbox database past the 64 MiB a start checks before it answers: 70,000 remembered answers of about 1 KB. */
async function large(): Promise<string> {
  const data = join(useTmp(), 'state.db');
  const server = await startServer({ port: 0, host: '127.0.0.1', data });
  await api(server.url, 'sk_big').data('POST', '/api/v1/va-payments', PAYMENT);
  await server.close();
  const db = new DatabaseSync(data);
  const account = (db.prepare("SELECT id FROM accounts WHERE key = 'sk_big'").get() as { id: number }).id;
  const insert = db.prepare('INSERT INTO idempotency_keys (account, id, data, crc, due_at) VALUES (?, ?, ?, 0, ?)');
  const answer = JSON.stringify({
    fingerprint: 'f',
    status: 201,
    body: 'x'.repeat(1000),
    createdAt: '2026-11-26T00:00:00.000Z',
  });
  db.exec('BEGIN');
  for (let i = 0; i < 70_000; i++) insert.run(account, `key-${i}`, answer, 8.64e15);
  db.exec('COMMIT');
  db.close();
  expect(statSync(data).size).toBeGreaterThan(64 * 1024 * 1024);
  return data;
}

/** The process ids whose command line names `file` (the aside check's does). */
const checking = (file: string) => {
  try {
    return execFileSync('pgrep', ['-f', file], { encoding: 'utf8' }).trim().split('\n').filter(Boolean);
  } catch {
    return []; // pgrep exits 1 when none matches
  }
};

describe('a server on a database checked beside it', () => {
  it('stops at once on SIGTERM while the check runs, and a killed server leaves no check behind', {
    timeout: 120_000,
  }, async () => {
    const data = await large();
    const first = await spawnServer(['--data', data]);
    expect(checking(data).length).toBeGreaterThan(0);
    const t0 = performance.now();
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    expect(performance.now() - t0).toBeLessThan(2_000);
    expect(checking(data)).toEqual([]);

    const second = await spawnServer(['--data', data]);
    expect(checking(data).length).toBeGreaterThan(0);
    second.child.kill('SIGKILL');
    await second.exited;
    await eventually(() => checking(data).length === 0, 3_000, 'the check to end with its server');
  });
});
