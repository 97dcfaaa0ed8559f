import { spawnSync } from 'node:child_process';
import {
  closeSync,
  cpSync,
  existsSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, expect, it } from 'vitest';
import { startServer } from '../src/sandbox/http/server.js';
import { normalizeState } from '../src/sandbox/previous-release/previous-release.js';
import { fileStore } from '../src/sandbox/store/database.js';
import { NEWEST } from '../src/sandbox/store/schema.js';
import {
  api,
  eventually,
  freePort,
  PAYMENT,
  ROOT,
  runCli,
  spawnCli,
  spawnServer,
  stored,
  useServer,
  useTmp,
} from './helpers.js';

/** The state database (SQLite): what it keeps, what it refuses at start, and the previous release's data sets it takes in. */

const KEY = 'sk_db';

/** A database with a few payments and a client, written by a server that then stopped; their ids. */
async function written(data: string) {
  const server = await startServer({ port: 0, host: '127.0.0.1', data });
  const client = api(server.url, KEY);
  const payments: string[] = [];
  for (let i = 0; i < 20; i++)
    payments.push(
      (await client.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 100 + i, externalReference: `r${i}` }))
        .id,
    );
  const customer = await client.data('POST', '/api/v1/clients', { paymentHubId: 1, name: 'Ana', taxId: '20-1' });
  await server.close();
  return { payments, customer };
}

/** Starts the built CLI's server on `data` expecting a refusal: its exit code and stderr. */
const refusedStart = (data: string) => runCli(['start', '--port', '0', '--data', data]);

describe('the state database', () => {
  it('keeps every acknowledged write across a restart, in tables named with the contract’s words and readable JSON', async () => {
    const data = join(useTmp(), 'state.db');
    const { payments, customer } = await written(data);
    const db = new DatabaseSync(data, { readOnly: true });
    const tables = (
      db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name").all() as { name: string }[]
    ).map((t) => t.name);
    expect(tables).toEqual([
      'accounts',
      'clients',
      'counts',
      'deliveries',
      'delivery_attempts',
      'events',
      'hubs',
      'idempotency_keys',
      'invoices',
      'ledger_entries',
      'pool_cvus',
      'requests',
      'retired',
      'sqlite_sequence',
      'transfers',
      'va_payments',
    ]);
    const row = db
      .prepare('SELECT data FROM va_payments WHERE account = (SELECT id FROM accounts WHERE key = ?) AND id = ?')
      .get(KEY, payments[3]!) as { data: string };
    // The record's id is the row's `id`, beside its JSON.
    expect(JSON.parse(row.data)).toMatchObject({ amount: 10300, externalReference: 'r3', status: 'waiting' });
    expect(
      (db.prepare("SELECT data ->> '$.name' AS name FROM clients WHERE id = ?").get(customer.id) as { name: string })
        .name,
    ).toBe('Ana');
    db.close();

    const server = await useServer({ data }, 'test');
    const client = api(server.url, KEY);
    const listed = (await client.list('/api/v1/va-payments?limit=100')).data.map((p: { id: string }) => p.id);
    expect(listed).toEqual([...payments].reverse());
    expect(await client.data('GET', `/api/v1/clients/${customer.id}`)).toEqual(customer);
  });

  it('answers the three queries docs/storage.md gives support staff', async () => {
    const data = join(useTmp(), 'state.db');
    const { payments } = await written(data);
    const doc = readFileSync(join(ROOT, 'docs', 'storage.md'), 'utf8');
    const queries = [...doc.matchAll(/^sqlite3 -readonly \.va-sandbox\/state\.db "(.+)"$/gm)].map((m) =>
      m[1]!.replace('<payment id>', payments[3]!).replace("'sk_sandbox'", `'${KEY}'`),
    );
    expect(queries).toHaveLength(3);
    const db = new DatabaseSync(data, { readOnly: true });
    const [accounts, payment, failed] = queries.map((query) => db.prepare(query).all());
    db.close();
    expect(accounts).toEqual([{ key: KEY, n: 20 }]);
    expect(payment).toHaveLength(1);
    expect(JSON.parse((payment![0] as { data: string }).data)).toMatchObject({
      amount: 10300,
      externalReference: 'r3',
    });
    expect(failed).toEqual([]);
  });

  it('a reset gives the account a new id at once; the old id’s rows are swept away after, a slice at a time', async () => {
    const data = join(useTmp(), 'state.db');
    const server = await useServer({ data }, 'test');
    const client = api(server.url, KEY);
    for (let i = 0; i < 30; i++) await client.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 100 + i });
    const db = new DatabaseSync(data, { readOnly: true });
    const idOf = () => (db.prepare('SELECT id FROM accounts WHERE key = ?').get(KEY) as { id: number }).id;
    const rowsOf = (id: number) =>
      (db.prepare('SELECT count(*) AS n FROM va_payments WHERE account = ?').get(id) as { n: number }).n;
    const old = idOf();
    expect(rowsOf(old)).toBe(30);
    await client.data('POST', '/sandbox/v1/reset');
    expect(idOf()).not.toBe(old);
    expect((await client.list('/api/v1/va-payments')).pagination.total).toBe(0);
    await eventually(
      () => rowsOf(old) === 0 && (db.prepare('SELECT count(*) AS n FROM retired').get() as { n: number }).n === 0,
      5_000,
      'the sweep',
    );
    expect(db.prepare('SELECT count(*) AS n FROM counts WHERE account = ?').get(old)).toEqual({ n: 0 });
    await client.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 5 });
    expect((await client.list('/api/v1/va-payments')).pagination.total).toBe(1);
    db.close();
  });

  it('a database of schema version 1 (one JSON row per record, by API key) is brought to the newest schema at start', async () => {
    // Made by a server of version 1, then stopped: written here as that version laid it out.
    const data = join(useTmp(), 'state.db');
    const source = await useServer({ memory: true }, 'test');
    const client = api(source.url, KEY);
    const payment = await client.data('POST', '/api/v1/va-payments', {
      ...PAYMENT,
      amount: 10,
      externalReference: 'v1',
    });
    const state = (await client.data('GET', '/sandbox/v1/export')).account;
    const v1 = new DatabaseSync(data);
    const tables = {
      hubs: 'hubs',
      pool: 'pool_cvus',
      vaPayments: 'va_payments',
      transfers: 'transfers',
      events: 'events',
      deliveries: 'deliveries',
      idempotency: 'idempotency_keys',
      clients: 'clients',
      entries: 'ledger_entries',
      invoices: 'invoices',
    };
    v1.exec(
      'CREATE TABLE accounts (key TEXT PRIMARY KEY, head TEXT NOT NULL, due_at INTEGER, sending INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID',
    );
    for (const name of Object.values(tables))
      v1.exec(
        `CREATE TABLE ${name} (seq INTEGER PRIMARY KEY, account TEXT NOT NULL, id TEXT NOT NULL, data TEXT NOT NULL); CREATE UNIQUE INDEX ${name}_by_id ON ${name} (account, id)`,
      );
    v1.prepare('INSERT INTO accounts (key, head) VALUES (?, ?)').run(KEY, JSON.stringify({ clockOffsetMs: 0 }));
    for (const [table, name] of Object.entries(tables)) {
      for (const [id, record] of Object.entries(state[table] ?? {}))
        v1.prepare(`INSERT INTO ${name} (account, id, data) VALUES (?, ?, ?)`).run(KEY, id, JSON.stringify(record));
    }
    v1.exec('PRAGMA user_version = 1');
    v1.close();
    const server = await useServer({ data }, 'test');
    const reader = api(server.url, KEY);
    expect(await reader.data('GET', `/api/v1/va-payments/${payment.id}`)).toMatchObject({
      id: payment.id,
      amount: 10,
      externalReference: 'v1',
      status: 'waiting',
    });
    expect((await reader.list('/api/v1/va-payments?externalReference=v1')).pagination.total).toBe(1);
    const db = new DatabaseSync(data, { readOnly: true });
    expect(db.prepare('PRAGMA user_version').get()).toEqual({ user_version: NEWEST });
    db.close();
  });

  it('a key that only reads makes no account (with no request journal to keep); its first write does', async () => {
    const data = join(useTmp(), 'state.db');
    const server = await useServer({ data, journal: 0 }, 'test');
    const reader = api(server.url, 'sk_only_reads');
    expect((await reader.get('/api/v1/va-payments')).status).toBe(200);
    expect((await reader.get('/sandbox/v1/deliveries')).status).toBe(200);
    expect((await reader.get('/sandbox/v1/clock')).status).toBe(200);
    expect(stored(data, 'sk_only_reads')).toBeUndefined();
    await reader.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 5 });
    expect(Object.keys(stored(data, 'sk_only_reads').vaPayments)).toHaveLength(1);
  });

  it('refuses a second server on the same database with one line naming the lock file', async () => {
    const data = join(useTmp(), 'state.db');
    await spawnServer(['--data', data]);
    const second = await refusedStart(data);
    expect(second.code).not.toBe(0);
    const lines = second.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`${data}.lock`);
  });

  it('takes over a lock left by a server that died, and says so naming the lock file', async () => {
    const data = join(useTmp(), 'state.db');
    await written(data);
    const gone = spawnSync(process.execPath, ['-e', '0']).pid!; // a process that has ended
    writeFileSync(`${data}.lock`, String(gone));
    const lines: string[] = [];
    const server = await startServer({ port: 0, host: '127.0.0.1', data, log: (line) => lines.push(line) });
    await server.close();
    expect(lines).toContain(
      `took over the lock file ${data}.lock, left by a va-sandbox server that is no longer running (pid ${gone})`,
    );
  });
});

describe('damage found at start', () => {
  it('a database whose structure is damaged is refused with one line saying what to do; the file is left as it was', async () => {
    const data = join(useTmp(), 'state.db');
    await written(data);
    // Page 2 (a table's b-tree page): its header overwritten, as a bad sector or a stray write would.
    const fd = openSync(data, 'r+');
    writeSync(fd, Buffer.alloc(64, 0xa5), 0, 64, 4096);
    closeSync(fd);
    const before = readFileSync(data);
    const start = await refusedStart(data);
    expect(start.code).not.toBe(0);
    expect(start.stderr.trim().split('\n')).toHaveLength(1);
    expect(start.stderr).toMatch(/is damaged .*restore it from a backup .*, or move it away to start afresh/);
    expect(readFileSync(data).equals(before)).toBe(true);
  });

  it('a file that is not a database is refused the same way', async () => {
    const data = join(useTmp(), 'state.db');
    await written(data);
    const fd = openSync(data, 'r+');
    writeSync(fd, Buffer.from('not a database!!'), 0, 16, 0);
    closeSync(fd);
    const start = await refusedStart(data);
    expect(start.code).not.toBe(0);
    expect(start.stderr.trim().split('\n')).toHaveLength(1);
    expect(start.stderr).toMatch(/is damaged/);
  });

  it('a database too large to check before answering is checked beside the server: damaged, the server stops with the same line', {
    timeout: 60_000,
  }, async () => {
    const data = join(useTmp(), 'state.db');
    await written(data);
    // Past the 64 MiB a start checks before it answers: 70,000 remembered answers of about 1 KB.
    const db = new DatabaseSync(data);
    db.exec('BEGIN');
    const insert = db.prepare('INSERT INTO idempotency_keys (account, id, data, crc, due_at) VALUES (?, ?, ?, 0, ?)');
    const answer = JSON.stringify({
      fingerprint: 'f',
      status: 201,
      body: 'x'.repeat(1000),
      createdAt: '2026-11-26T00:00:00.000Z',
    });
    const account = (db.prepare('SELECT id FROM accounts WHERE key = ?').get(KEY) as { id: number }).id;
    for (let i = 0; i < 70_000; i++) insert.run(account, `key-${i}`, answer, 8.64e15);
    db.exec('COMMIT');
    db.close();
    expect(statSync(data).size).toBeGreaterThan(64 * 1024 * 1024);
    // A page 40 MiB in (some of those answers), its header overwritten as a bad sector would.
    const fd = openSync(data, 'r+');
    writeSync(fd, Buffer.alloc(64, 0xa5), 0, 64, 40 * 1024 * 1024);
    closeSync(fd);
    const start = await runCli(['start', '--port', '0', '--data', data]);
    expect(start.stdout).toMatch(/listening on http/);
    expect(start.code).toBe(1);
    expect(start.stderr.trim().split('\n')).toHaveLength(1);
    expect(start.stderr).toMatch(/is damaged .*restore it from a backup .*, or move it away to start afresh/);
  });

  it('a WAL without its database is refused, never taken for a new state', async () => {
    const dir = useTmp();
    const data = join(dir, 'state.db');
    writeFileSync(`${data}-wal`, Buffer.alloc(4096, 1));
    const start = await refusedStart(data);
    expect(start.code).not.toBe(0);
    expect(start.stderr).toMatch(/state\.db-wal is there without its database/);
    expect(existsSync(data)).toBe(false);
  });

  it('a database written by a newer version is refused with a clear line', async () => {
    const data = join(useTmp(), 'state.db');
    await written(data);
    const db = new DatabaseSync(data);
    db.exec('PRAGMA user_version = 99');
    db.close();
    const start = await refusedStart(data);
    expect(start.code).not.toBe(0);
    expect(start.stderr).toMatch(/written by a newer va-sandbox \(schema 99/);
  });

  it('a byte changed inside a record’s JSON, the structure sound, is refused by its checksum: a 500 naming the file, table and record; an export leaves it out and names it', async () => {
    const data = join(useTmp(), 'state.db');
    const { payments } = await written(data);
    const db = new DatabaseSync(data);
    db.prepare('UPDATE va_payments SET data = replace(data, \'"amount":10300\', \'"amount":10400\') WHERE id = ?').run(
      payments[3]!,
    );
    db.close();
    const server = await useServer({ data }, 'test');
    const client = api(server.url, KEY);
    const answer = await client.get(`/api/v1/va-payments/${payments[3]}`);
    expect(answer.status).toBe(500);
    expect(answer.body.error.code).toBe('INTERNAL_ERROR');
    expect(answer.body.error.message).toContain(
      `${data}: va_payments record ${payments[3]} cannot be read (its checksum does not match`,
    );
    expect(answer.body.error.message).toContain('`va-sandbox check`');
    expect(JSON.stringify(answer.body)).not.toContain('104');
    const exported = await client.get('/sandbox/v1/export');
    expect(exported.body.unreadable).toContain(`va_payments ${payments[3]}`);
    expect(Object.keys(exported.body.data.account.vaPayments)).not.toContain(payments[3]);
    // The others are served as they were.
    expect((await client.data('GET', `/api/v1/va-payments/${payments[4]}`)).amount).toBe(104);
  });
});

/** The previous release's data sets, each with the state that release loaded from it (`expected.json`). */
const SETS = ['clean', 'crash', 'current-clean', 'current-crash', 'current-delta'];

describe('a data set of the previous release', () => {
  it.each(SETS)(
    'is copied into the database once, its files kept as *.migrated, each account as that release loaded it (%s)',
    async (set) => {
      const dir = useTmp();
      cpSync(join(ROOT, 'test', 'data', 'previous-release', set), dir, { recursive: true });
      // As this release reads what that one loaded: its invoices in today's shape (`normalizeState`).
      const expected = normalizeState(JSON.parse(readFileSync(join(dir, 'expected.json'), 'utf8')))
        .accounts as unknown as Record<string, Record<string, unknown>>;
      const old = readdirSync(dir).filter((name) => name.startsWith('state.json'));
      const lines: string[] = [];
      // The store alone: a server would go on to expire what fell due since and send what was left to send.
      await fileStore(join(dir, 'state.db'), { log: (line) => lines.push(line) }).close();
      expect(lines.filter((line) => line.includes('previous release'))).toEqual([
        `copied the previous release's data set ${join(dir, 'state.json')} into ${join(dir, 'state.db')} (${Object.keys(expected).length} accounts); its files are kept as *.migrated`,
      ]);
      expect(
        readdirSync(dir)
          .filter((name) => name.startsWith('state.json'))
          .sort(),
      ).toEqual(old.map((name) => `${name}.migrated`).sort());
      for (const [key, account] of Object.entries(expected)) {
        const copied = stored(join(dir, 'state.db'), key);
        for (const [field, value] of Object.entries(account))
          expect(copied[field], `${set} ${key} ${field}`).toEqual(value);
      }
      // A second start copies nothing again.
      const again: string[] = [];
      await fileStore(join(dir, 'state.db'), { log: (line) => again.push(line) }).close();
      expect(again.filter((line) => line.includes('previous release'))).toEqual([]);
    },
  );

  it('named by --data itself (state.json) goes into state.db beside it', async () => {
    const dir = useTmp();
    cpSync(join(ROOT, 'test', 'data', 'previous-release', 'current-clean'), dir, { recursive: true });
    const server = await startServer({ port: 0, host: '127.0.0.1', data: join(dir, 'state.json') });
    expect(server.dataPath).toBe(join(dir, 'state.db'));
    await server.close();
    expect(statSync(join(dir, 'state.db')).size).toBeGreaterThan(0);
    expect(existsSync(join(dir, 'state.json.migrated'))).toBe(true);
  });

  it('a damaged one is refused with its reader’s one line, and nothing is copied or renamed', async () => {
    const dir = useTmp();
    cpSync(join(ROOT, 'test', 'data', 'previous-release', 'current-delta'), dir, { recursive: true });
    rmSync(join(dir, 'state.json.delta'));
    const start = await refusedStart(join(dir, 'state.db'));
    expect(start.code).not.toBe(0);
    expect(start.stderr.trim().split('\n')).toHaveLength(1);
    expect(existsSync(join(dir, 'state.json'))).toBe(true);
    expect(readdirSync(dir).filter((name) => name.endsWith('.migrated'))).toEqual([]);
  });
});

/**
 * The payments of sk_big in the database; 0 when it has none yet, or not all its tables yet (killed right after making
 * the file, or between two steps of its schema: the data set is copied after the last).
 */
function copiedPayments(data: string): number {
  try {
    return Object.keys(stored(data, 'sk_big')?.vaPayments ?? {}).length;
  } catch (error) {
    if (/no such (table|column)/.test((error as Error).message)) return 0;
    throw error;
  }
}

describe('SIGKILL during a migration', () => {
  it('at any of several moments loses nothing: the next start copies the data set again or finds it copied', {
    timeout: 120_000,
  }, async () => {
    const dir = useTmp();
    // A previous release's data file of 30,000 completed payments (nothing falls due on start): about a second to copy.
    const template = JSON.parse(
      readFileSync(join(ROOT, 'test', 'data', 'previous-release', 'current-clean', 'expected.json'), 'utf8'),
    ).accounts.sk_alpha;
    const model = Object.values(template.vaPayments as Record<string, any>).find((p) => p.status === 'completed');
    const vaPayments: Record<string, unknown> = {};
    for (let i = 0; i < 30_000; i++) {
      const id = `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
      vaPayments[id] = { ...model, id };
    }
    const account = { ...template, vaPayments, events: {}, deliveries: {}, transfers: {}, idempotency: {} };
    writeFileSync(join(dir, 'state.json'), JSON.stringify({ version: 1, accounts: { sk_big: account } }));
    const data = join(dir, 'state.db');
    const outcomes: string[] = [];
    for (const after of [300, 700, 1100, 1600, 2500]) {
      const server = spawnCli(['start', '--port', String(await freePort()), '--data', data]);
      await new Promise((resolve) => setTimeout(resolve, after));
      // Killed wherever it is: starting, reading the data set, copying it, renaming its files, or already answering.
      server.child.kill('SIGKILL');
      await server.exited;
      const copied = existsSync(data) ? copiedPayments(data) : 0;
      outcomes.push(
        `${after} ms: ${copied} copied, state.json ${existsSync(join(dir, 'state.json')) ? 'kept' : 'renamed'}`,
      );
      expect([0, 30_000]).toContain(copied);
      if (copied === 0) expect(existsSync(join(dir, 'state.json'))).toBe(true);
    }
    console.log(`SIGKILL during a migration: ${outcomes.join('; ')}`);
    const server = await useServer({ data }, 'test');
    expect((await api(server.url, 'sk_big').list('/api/v1/va-payments?limit=1')).pagination.total).toBe(30_000);
    expect(existsSync(join(dir, 'state.json.migrated'))).toBe(true);
  });
});
