import { closeSync, copyFileSync, cpSync, existsSync, openSync, readFileSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { emptyAccountState, seededIds } from '../src/core/index.js';
import { checkedLine, readLine } from '../src/sandbox/store/checked-line.js';
import { readIndexFile, tableEntries } from '../src/sandbox/store/index-file.js';
import { STORED_INDEXES_VERSION } from '../src/sandbox/store/kept-indexes.js';
import { bucketOf } from '../src/sandbox/store/lazy-map.js';
import { fileStore, memoryStore, type FileStoreOptions, type Store } from '../src/sandbox/store/persistence.js';
import { createRuntime } from '../src/sandbox/runtime.js';
import { SnapshotFile, type CopiedLines } from '../src/sandbox/store/snapshot-file.js';
import { startServer } from '../src/sandbox/server.js';
import { api, eventually, runCli, spawnServer, useServer, useTmp, PAYMENT, CLIENT } from './helpers.js';

/** Loads a copy of a data file and its journal, as they are on disk now (what a crash would leave). */
async function loadCopy(data: string) {
  const copy = join(useTmp(), 'state.json');
  for (const suffix of ['', '.delta', '.journal', '.journal.next']) if (existsSync(data + suffix)) copyFileSync(data + suffix, copy + suffix);
  const store = fileStore(copy);
  const state = await store.load();
  await store.close();
  return state;
}

describe('file-backed state', () => {
  it('every acknowledged write is on disk when the answer arrives', async () => {
    const data = join(useTmp(), 'state.json');
    const server = await useServer({ data }, 'test');
    const client = api(server.url, 'sk_file');
    const created = await Promise.all(Array.from({ length: 40 }, (_, i) => client.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: i + 1 })));
    // The files as a crash would leave them right now, read by a new store.
    const state = await loadCopy(data);
    expect(Object.keys(state.accounts.sk_file!.vaPayments).sort()).toEqual(created.map((p) => p.id).sort());
  });

  it('a write appends one journal line of just its changes; a clean stop folds the journal into the data file', async () => {
    const data = join(useTmp(), 'state.json');
    const first = await startServer({ port: 0, data });
    const client = api(first.url, 'sk_journal');
    await client.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 1 });
    const before = readFileSync(`${data}.journal`, 'utf8').split('\n').filter(Boolean);
    const payment = await client.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 2 });
    const lines = readFileSync(`${data}.journal`, 'utf8').split('\n').filter(Boolean);
    expect(lines).toHaveLength(before.length + 1);
    const tables = JSON.parse(lines.at(-1)!).c.map((change: unknown[]) => `${change[1]}`);
    // No delivery: the payment has no callback URL, so its created event is dropped and has nothing to deliver.
    expect(tables.sort()).toEqual(['events', 'pool', 'vaPayments']);
    await first.close();
    expect(JSON.parse(readFileSync(data, 'utf8')).accounts.sk_journal.vaPayments[payment.id].amount).toBe(200);
    expect(readFileSync(`${data}.journal`, 'utf8').split('\n').filter(Boolean)).toHaveLength(1); // its header only
  });

  it('a journal line cut short by a crash is dropped, and writes go on after the last whole line', async () => {
    const dir = useTmp();
    const data = join(dir, 'state.json');
    const first = await startServer({ port: 0, data });
    const payment = await api(first.url, 'sk_torn').data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 1 });
    const snapshot = readFileSync(data);
    const journal = readFileSync(`${data}.journal`);
    await first.close();
    // The files a crash would have left: as they were, plus half a journal line that was being written.
    writeFileSync(data, snapshot);
    writeFileSync(`${data}.journal`, Buffer.concat([journal, Buffer.from('{"c":[["sk_torn","vaPay')]));
    const second = await useServer({ data }, 'test');
    const client = api(second.url, 'sk_torn');
    expect((await client.data('GET', `/api/v1/va-payments/${payment.id}`)).amount).toBe(1);
    const more = await client.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 3 });
    const state = await loadCopy(data);
    expect(Object.keys(state.accounts.sk_torn!.vaPayments).sort()).toEqual([payment.id, more.id].sort());
  });

  it('restarting on the same file restores payments, transfers, events and the clock', async () => {
    const data = join(useTmp(), 'state.json');
    const first = await startServer({ port: 0, data });
    const client = api(first.url, 'sk_restart');
    const payment = await client.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 100, externalReference: 'keep-me' });
    const transfer = await client.data('POST', '/sandbox/v1/transfers', { to: payment.cvu, total: 40 });
    await client.data('POST', '/sandbox/v1/clock/advance', { seconds: 60 });
    const before = await client.data('GET', `/api/v1/va-payments/${payment.id}`);
    await first.close();
    expect(existsSync(`${data}.lock`)).toBe(false);

    const second = await useServer({ data }, 'test');
    const again = api(second.url, 'sk_restart');
    expect(await again.data('GET', `/api/v1/va-payments/${payment.id}`)).toEqual(before);
    expect((await again.list('/sandbox/v1/transfers')).data[0].id).toBe(transfer.id);
    expect((await again.list('/sandbox/v1/events')).pagination.total).toBe(3);
    expect((await again.data('GET', '/sandbox/v1/clock')).offsetSeconds).toBe(60);
  });

  it('a journal already folded into the data file (a crash between the two) is not replayed over it', async () => {
    const data = join(useTmp(), 'state.json');
    const first = await startServer({ port: 0, data });
    const client = api(first.url, 'sk_gen');
    const payment = await client.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 1 });
    const oldJournal = readFileSync(`${data}.journal`); // says the payment is waiting
    await client.data('POST', `/api/v1/va-payments/${payment.id}/cancel`);
    await first.close(); // the data file now holds the cancel, in a newer generation
    writeFileSync(`${data}.journal`, oldJournal);
    const second = await useServer({ data }, 'test');
    expect((await api(second.url, 'sk_gen').data('GET', `/api/v1/va-payments/${payment.id}`)).status).toBe('cancelled');
  });

  it('payments that expired while the server was down are expired on start', async () => {
    const data = join(useTmp(), 'state.json');
    const lines: string[] = [];
    const first = await startServer({ port: 0, data, log: (line) => lines.push(line) });
    expect(lines, 'nothing due: nothing said').toEqual([]);
    const client = api(first.url, 'sk_down');
    const payment = await client.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 10, ttlSeconds: 60 });
    await first.close();
    // The clock runs on while the server is down: here, by moving the account's clock in the file.
    const state = JSON.parse(readFileSync(data, 'utf8'));
    state.accounts.sk_down.clockOffsetMs = 61_000;
    writeFileSync(data, JSON.stringify(state));
    const second = await useServer({ data, log: (line) => lines.push(line) }, 'test');
    // Expired while starting, before any request could ask, and the log says so (a large state takes a while).
    expect(second.runtime.sandbox.state.accounts.sk_down!.vaPayments[payment.id]!.status).toBe('expired');
    expect(lines).toEqual([
      'doing what fell due while the server was stopped (expiries, delayed client CVUs) before answering',
      expect.stringMatching(/^done what fell due while the server was stopped in \d+ ms$/),
    ]);
    const events = (await api(second.url, 'sk_down').list('/sandbox/v1/events')).data;
    expect(events[0]).toMatchObject({ eventType: 'failed', vaPaymentId: payment.id });
  });

  it('a second server on the same data file is refused with a clear message', async () => {
    const data = join(useTmp(), 'state.json');
    await useServer({ data }, 'test');
    await expect(startServer({ port: 0, data })).rejects.toThrow(/is in use by another va-sandbox server \(pid \d+\)/);
  });

  it('a data file that is not JSON is refused, and left as it was', async () => {
    const data = join(useTmp(), 'state.json');
    writeFileSync(data, '{not json');
    await expect(startServer({ port: 0, data })).rejects.toThrow(/cannot read .*state\.json/);
    expect(readFileSync(data, 'utf8')).toBe('{not json');
    expect(existsSync(`${data}.lock`)).toBe(false);
  });

  it('--memory writes nothing', async () => {
    const dir = useTmp();
    const server = await useServer({ memory: true, data: join(dir, 'state.json') }, 'test');
    await api(server.url).data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 1 });
    expect(existsSync(join(dir, 'state.json'))).toBe(false);
  });
});

describe('va-sandbox start (the built server as a process)', () => {
  it('prints the base URL and the default API key, and stops cleanly on SIGTERM (state flushed, lock released)', async () => {
    const data = join(useTmp(), 'state.json');
    const server = await spawnServer(['--data', data]);
    expect(server.stdout()).toContain(`listening on ${server.url}`);
    expect(server.stdout()).toContain('API key: sk_sandbox');
    const payment = await api(server.url, 'sk_sandbox').data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 5 });
    expect(existsSync(`${data}.lock`)).toBe(true);
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
    expect(existsSync(`${data}.lock`)).toBe(false);
    expect(JSON.parse(readFileSync(data, 'utf8')).accounts.sk_sandbox.vaPayments[payment.id]).toBeDefined();
  });

  it('a second server process on the same file exits 1 with one line naming the owner', async () => {
    const data = join(useTmp(), 'state.json');
    const first = await spawnServer(['--data', data]);
    const second = await runCli(['start', '--port', '0', '--data', data]);
    expect(second.code).toBe(1);
    expect(second.stderr.trim().split('\n')).toHaveLength(1);
    expect(second.stderr).toContain(`in use by another va-sandbox server (pid ${first.child.pid})`);
  });

  it('a port in use is one clear line and exit 1', async () => {
    const first = await spawnServer(['--memory']);
    const port = new URL(first.url).port;
    const second = await runCli(['start', '--memory', '--port', port]);
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`port ${port} on 127.0.0.1 is already in use`);
  });

  it('SIGKILL loses no acknowledged write: after a restart every payment and transfer is there', async () => {
    const data = join(useTmp(), 'state.json');
    const server = await spawnServer(['--data', data]);
    const client = api(server.url, 'sk_crash');
    const acknowledged: { payments: string[]; transfers: string[] } = { payments: [], transfers: [] };
    const writers = Array.from({ length: 8 }, async (_, w) => {
      for (let i = 0; i < 10; i++) {
        const payment = await client.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 100, externalReference: `w${w}-${i}` });
        acknowledged.payments.push(payment.id);
        const transfer = await client.data('POST', '/sandbox/v1/transfers', { to: payment.cvu, total: 30 });
        acknowledged.transfers.push(transfer.id);
      }
    });
    await Promise.all(writers);
    server.child.kill('SIGKILL');
    await server.exited;
    expect(existsSync(`${data}.lock`)).toBe(true); // left behind by the killed server

    const restarted = await spawnServer(['--data', data]);
    const again = api(restarted.url, 'sk_crash');
    const payments = (await again.list('/api/v1/va-payments?limit=100')).data;
    const transfers = (await again.list('/sandbox/v1/transfers?limit=100')).data;
    expect(payments.map((p: { id: string }) => p.id).sort()).toEqual([...acknowledged.payments].sort());
    expect(transfers.map((t: { id: string }) => t.id).sort()).toEqual([...acknowledged.transfers].sort());
    expect(payments.every((p: { status: string; totalReceived: number }) => p.status === 'underpaid' && p.totalReceived === 30)).toBe(true);
  });
});

describe('fileStore', () => {
  it('saves asked for in one turn of the event loop share one journal write, and the file holds the latest state', async () => {
    const store = fileStore(join(useTmp(), 'state.json'));
    const state = await store.load();
    const before = store.writes;
    const saves: Promise<void>[] = [];
    for (let i = 0; i < 50; i++) {
      state.accounts[`k${i}`] = emptyAccountState();
      store.changed(`k${i}`, { all: true });
      saves.push(store.save());
    }
    await Promise.all(saves);
    expect(store.writes - before).toBe(1);
    expect(Object.keys((await loadCopy(store.path!)).accounts)).toHaveLength(50);
    await store.close();
  });

  it('a save asked for while a shared write is under way gets a write of its own', async () => {
    const store = fileStore(join(useTmp(), 'state.json'));
    const state = await store.load();
    const before = store.writes;
    state.accounts.a = emptyAccountState();
    store.changed('a', { all: true });
    const later = store.save().then(() => {
      state.accounts.b = emptyAccountState();
      store.changed('b', { all: true });
      return store.save();
    });
    await later;
    expect(store.writes - before).toBe(2);
    expect(Object.keys((await loadCopy(store.path!)).accounts).sort()).toEqual(['a', 'b']);
    await store.close();
  });

  it('each journal line says where the JSON of each change’s value is and its CRC32 (`p`), which a fold copies from there', async () => {
    const store = fileStore(join(useTmp(), 'state.json'));
    const state = await store.load();
    state.accounts.a = emptyAccountState();
    store.changed('a', { all: true });
    await store.save();
    const odd = ['ñandú "quoted" \\ back\nslash', '💸', '], ["', '}'];
    for (const [i, note] of odd.entries()) {
      state.accounts.a!.vaPayments[`p${i}`] = { id: `p${i}`, note } as never;
      store.changed('a', { table: 'vaPayments', id: `p${i}` });
    }
    store.changed('a', { header: true });
    await store.save();
    const bytes = readFileSync(`${store.path}.journal`);
    let values = 0;
    for (let start = bytes.indexOf(10) + 1, end = bytes.indexOf(10, start); end >= 0; start = end + 1, end = bytes.indexOf(10, start)) {
      const { c, p } = JSON.parse(bytes.toString('utf8', start, end)) as { c: unknown[][]; p: number[] };
      expect(p).toHaveLength(3 * c.length);
      for (const [i, change] of c.entries()) {
        const value = bytes.subarray(start + p[3 * i]!, start + p[3 * i]! + p[3 * i + 1]!);
        expect(value.toString()).toBe(JSON.stringify(change[3]));
        expect(crc32(value)).toBe(p[3 * i + 2]);
        values++;
      }
    }
    expect(values).toBe(odd.length + 2); // the account, each record, the head
    await store.close();
  });
});

describe('snapshot layout and compaction', () => {
  /** A store on a new file, with one account; `put` writes a record the way the core does. */
  async function openStore(path: string) {
    const store = fileStore(path);
    const state = await store.load();
    state.accounts.k ??= emptyAccountState();
    store.changed('k', { all: true });
    const put = (id: string, value: unknown) => {
      state.accounts.k!.idempotency[id] = value as never;
      store.changed('k', { table: 'idempotency', id });
      return store.save();
    };
    return { store, state, put };
  }

  it('round-trips awkward keys and values, one record per line, and still reads a hand-written plain JSON file', async () => {
    const data = join(useTmp(), 'state.json');
    const { store, put } = await openStore(data);
    await put('__proto__', { fingerprint: 'a"b\nc', status: 201, body: { 'x\u2028y': [1, null] }, createdAt: 'z' });
    await put('toString', { fingerprint: '}}', status: 200, body: '{', createdAt: 'z' });
    await store.close();
    const lines = readFileSync(data, 'utf8').split('\n');
    expect(lines[0]).toMatch(/^\{"version":1,"generation":\d+,"accounts":\{$/);
    expect(lines.some((line) => line.startsWith('"__proto__":{"fingerprint"'))).toBe(true);
    const state = await loadCopy(data);
    // Read a line at a time (as a file too large for one string is), it is the same state.
    expect(JSON.stringify(await new SnapshotFile(data, 0).read())).toBe(JSON.stringify(JSON.parse(readFileSync(data, 'utf8'))));
    expect(Object.keys(state.accounts.k!.idempotency)).toEqual(['__proto__', 'toString']);
    expect(state.accounts.k!.idempotency.__proto__).toMatchObject({ fingerprint: 'a"b\nc', body: { 'x\u2028y': [1, null] } });
    // A plain JSON document, as a person might write it, is read too.
    writeFileSync(data, JSON.stringify(state, null, 2));
    rmSync(`${data}.journal`);
    expect((await loadCopy(data)).accounts.k!.idempotency.toString).toMatchObject({ body: '{' });
  });

  it('a damaged data file is refused with the line, not replaced', async () => {
    const data = join(useTmp(), 'state.json');
    const { store, put } = await openStore(data);
    await put('a', { fingerprint: 'f', status: 201, body: null, createdAt: 'z' });
    await store.close();
    const lines = readFileSync(data, 'utf8').split('\n');
    writeFileSync(data, [...lines.slice(0, 3), '"broken', ...lines.slice(3)].join('\n'));
    await expect(new SnapshotFile(data, 0).read()).rejects.toThrow(/damaged at line 4/);
    await expect(fileStore(data).load()).rejects.toThrow(/cannot read .*state\.json/);
  });

  it('when the journal outgrows the snapshot it is folded into a new generation while writes go on, losing none', async () => {
    const data = join(useTmp(), 'state.json');
    const { store, put } = await openStore(data);
    const big = 'x'.repeat(4096); // 6,000 of these outgrow the journal's floor (20 MiB)
    const generation = () => JSON.parse(readFileSync(data, 'utf8').split('\n')[0]! + '}}').generation as number;
    const first = generation();
    const saves: Promise<void>[] = [];
    for (let i = 0; i < 6000; i++) {
      saves.push(put(`r${i}`, { fingerprint: big, status: i, body: null, createdAt: 'z' }));
      if (i % 50 === 0) await Promise.all(saves.splice(0));
    }
    await Promise.all(saves);
    await eventually(() => !existsSync(`${data}.journal.next`), 10_000, 'the compaction to finish');
    expect(generation()).toBeGreaterThan(first);
    const state = await loadCopy(data);
    expect(Object.keys(state.accounts.k!.idempotency)).toHaveLength(6000);
    expect(state.accounts.k!.idempotency.r5999!.status).toBe(5999);
    await store.close();
  });

  it('a compaction cut short by a crash (a next journal beside the old one) loses nothing on start', async () => {
    const data = join(useTmp(), 'state.json');
    const { store, put } = await openStore(data);
    await put('before', { fingerprint: 'f', status: 1, body: null, createdAt: 'z' });
    await store.close();
    // What a crash mid-compaction leaves: the snapshot and journal of generation g, and the next journal (g+1)
    // already holding a save made after the new snapshot was taken.
    const g = JSON.parse(readFileSync(data, 'utf8').split('\n')[0]! + '}}').generation as number;
    const change = ['k', 'idempotency', 'after', { fingerprint: 'f', status: 2, body: null, createdAt: 'z' }];
    writeFileSync(`${data}.journal.next`, `${JSON.stringify({ generation: g + 1 })}\n${JSON.stringify({ c: [change] })}\n`);
    const { store: again, state } = await openStore(data);
    expect(Object.keys(state.accounts.k!.idempotency).sort()).toEqual(['after', 'before']);
    // The fold is done again once the accounts are made (here, at the stop: no server reads ahead).
    await again.close();
    expect(existsSync(`${data}.journal.next`)).toBe(false);
    expect(Object.keys((await loadCopy(data)).accounts.k!.idempotency).sort()).toEqual(['after', 'before']);
  });
});

describe('the index file: a quick start after a clean stop', () => {
  const KEY = '__proto__'; // an awkward API key: the index file keeps it a key like any other

  it('is read from its end, more at a time until its header starts: 800 accounts make a header past the first megabyte', { timeout: 60_000 }, async () => {
    const data = join(useTmp(), 'state.json');
    const runtime = await createRuntime({ store: fileStore(data) });
    const made = Array.from({ length: 800 }, (_, i) => runtime.sandbox.account(`sk_many_${i}`).createVaPayment(PAYMENT).id);
    await runtime.commit();
    await runtime.close(); // a small state: folded at the stop, with its index file
    const bytes = readFileSync(`${data}.index`);
    expect(bytes.length - bytes.lastIndexOf(10, bytes.length - 2), 'the header line').toBeGreaterThan(1024 * 1024);
    const again = fileStore(data);
    const restarted = await createRuntime({ store: again });
    expect(again.quick).toBe(true);
    expect(restarted.sandbox.account('sk_many_799').getVaPayment(made[799]!).id).toBe(made[799]);
    await restarted.close();
  });

  it('a fold cut short by a crash is done again with its index file, so a crash right after it still starts through the index', async () => {
    const data = join(useTmp(), 'state.json');
    const first = await startServer({ port: 0, data });
    const payment = await api(first.url, 'sk_refold').data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 7 });
    await first.close();
    // What a crash right after a fold began leaves: the snapshot of generation g, its index file, the next journal (g+1).
    const g = JSON.parse(readFileSync(data, 'utf8').split('\n')[0]! + '}}').generation as number;
    writeFileSync(`${data}.journal.next`, `${JSON.stringify({ generation: g + 1 })}\n`);
    const server = await spawnServer(['--data', data]);
    await eventually(() => !existsSync(`${data}.journal.next`), 10_000, 'the fold to be done again');
    server.child.kill('SIGKILL');
    await server.exited;
    const store = fileStore(data);
    const state = await store.load();
    expect(store.quick, 'a start through the index file of the snapshot that fold wrote').toBe(true);
    expect(state.accounts.sk_refold!.vaPayments[payment.id]).toMatchObject({ id: payment.id, status: 'waiting' });
    await store.close();
  });

  /** A state with what the indexes cover: a paid and a waiting time-locked payment, an amount lock, a client with a CVU. */
  async function fill(url: string) {
    const a = api(url, KEY);
    const paid = await a.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 10 });
    await a.data('POST', '/sandbox/v1/transfers', { to: paid.alias.toLowerCase(), total: 10 });
    const waiting = (await a.post('/api/v1/va-payments', { ...PAYMENT, amount: 20 }, { 'idempotency-key': 'toString' })).body.data;
    const locked = await a.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 15, lockMode: 'amount' });
    const client = await a.data('POST', '/api/v1/clients', { ...CLIENT, name: 'Ana', taxId: '20-12345678-3' });
    return { paid, waiting, locked, client };
  }

  /** What a client sees of that state. */
  async function reads(url: string, ids: Awaited<ReturnType<typeof fill>>) {
    const a = api(url, KEY);
    return Promise.all([
      a.list('/api/v1/va-payments?limit=100'),
      a.data('GET', `/api/v1/va-payments/${ids.paid.id}`),
      a.data('GET', `/api/v1/clients/${ids.client.id}`),
      a.list('/sandbox/v1/deliveries?limit=100'),
    ]);
  }

  /** A copy of the files as they are now, in a new folder (`keepTimes`: as `cp -p` makes it). */
  function copy(data: string, keepTimes: boolean): string {
    const to = join(useTmp(), 'state.json');
    for (const suffix of ['', '.delta', '.journal', '.index']) {
      if (existsSync(data + suffix)) cpSync(data + suffix, to + suffix, { preserveTimestamps: keepTimes });
    }
    return to;
  }

  it('a clean stop writes it; the next start reads through it and answers and writes as a full read would', async () => {
    const data = join(useTmp(), 'state.json');
    const first = await startServer({ port: 0, host: '127.0.0.1', data });
    const ids = await fill(first.url);
    const before = await reads(first.url, ids);
    await first.close();
    expect(existsSync(`${data}.index`)).toBe(true);

    const second = await useServer({ data }, 'test');
    expect(second.runtime.store.quick).toBe(true);
    expect(await reads(second.url, ids)).toEqual(before);
    const a = api(second.url, KEY);
    // The indexes read back: the pool by alias, the amount lock, the tax id, the idempotency key.
    expect(await a.data('POST', '/sandbox/v1/transfers', { to: ids.waiting.alias, total: 20 })).toMatchObject({ outcome: 'credited' });
    expect((await a.call('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 15, lockMode: 'amount' })).body.error.code).toBe('AMOUNT_LOCK_CONFLICT');
    expect((await a.call('POST', '/api/v1/clients', { ...CLIENT, name: 'Bea', taxId: '20123456783' })).body.error.code).toBe('TAX_ID_ALREADY_EXISTS');
    const replayed = await a.post('/api/v1/va-payments', { ...PAYMENT, amount: 20 }, { 'idempotency-key': 'toString' });
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.body.data.id).toBe(ids.waiting.id);
    expect((await a.data('GET', `/api/v1/va-payments/${ids.waiting.id}`)).status).toBe('completed');
  });

  it('tells a key no bucket holds without reading one: every stored key may be held, a new id is not', async () => {
    const data = join(useTmp(), 'state.json');
    const first = await startServer({ port: 0, host: '127.0.0.1', data });
    await fill(first.url);
    await first.close();
    const lazy = readIndexFile(`${data}.index`, data, `${data}.delta`)!;
    const indexes = lazy.indexes.get(KEY)!;
    let checked = 0;
    for (const name of ['eventsBySource', 'poolByAddress', 'vaPaymentsOrder', 'clientsByTaxId', 'vaPaymentsGroups']) {
      const map = indexes.map(name)!;
      for (let bucket = 0; bucket < map.buckets; bucket++) {
        for (const [key] of map.read(bucket)) {
          expect(map.mayHold!(key), `${name} ${key}`).toBe(true);
          checked++;
        }
        expect(map.mayHold!(randomUUID())).toBe(false);
      }
    }
    expect(checked).toBeGreaterThan(10);
    lazy.release();
  });

  it('a stop with nothing changed since a quick start leaves the files alone; a change writes a new snapshot and index', async () => {
    const data = join(useTmp(), 'state.json');
    const first = await startServer({ port: 0, host: '127.0.0.1', data });
    await fill(first.url);
    await first.close();
    const stopped = statSync(data).mtimeMs;
    const idle = await startServer({ port: 0, host: '127.0.0.1', data });
    expect(idle.runtime.store.quick).toBe(true);
    await idle.close();
    expect(statSync(data).mtimeMs).toBe(stopped);

    const busy = await startServer({ port: 0, host: '127.0.0.1', data });
    const added = await api(busy.url, KEY).data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 30 });
    await busy.close();
    const last = await useServer({ data }, 'test');
    expect(last.runtime.store.quick).toBe(true);
    expect((await api(last.url, KEY).data('GET', `/api/v1/va-payments/${added.id}`)).amount).toBe(30);
  });

  it('after a crash the journal is replayed over it and re-indexed, answering as a full read does', async () => {
    const data = join(useTmp(), 'state.json');
    const first = await startServer({ port: 0, host: '127.0.0.1', data });
    const ids = await fill(first.url);
    await first.close();

    // A crash after a quick start and writes that move every index: the files as they are while the server runs.
    const running = await startServer({ port: 0, host: '127.0.0.1', data });
    expect(running.runtime.store.quick).toBe(true);
    const a = api(running.url, KEY);
    const late = await a.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 40, externalReference: 'late' });
    await a.data('POST', '/sandbox/v1/transfers', { to: ids.waiting.alias, total: 20 }); // completed: its CVU is free again
    await a.data('POST', `/api/v1/va-payments/${ids.locked.id}/cancel`); // the lock on 15 goes
    await a.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 25, lockMode: 'amount' }); // a lock on 25
    const bea = await a.data('POST', '/api/v1/clients', { ...CLIENT, name: 'Bea', taxId: '20-22222222-3' });
    const crashed = copy(data, true);
    const readsWhole = copy(data, false); // the same files, read whole
    await running.close();
    const afterCrash = await useServer({ data: crashed }, 'test');
    const whole = await useServer({ data: readsWhole }, 'test');
    expect([afterCrash.runtime.store.quick, whole.runtime.store.quick]).toEqual([true, false]);
    const all = { ...ids, late, bea } as unknown as Awaited<ReturnType<typeof fill>>;
    expect(await reads(afterCrash.url, all)).toEqual(await reads(whole.url, all));
    for (const server of [afterCrash, whole]) {
      const b = api(server.url, KEY);
      expect((await b.data('GET', `/api/v1/va-payments/${late.id}`)).amount).toBe(40);
      expect((await b.list('/api/v1/va-payments?status=completed&limit=10')).data.map((p: { id: string }) => p.id).sort()).toEqual([ids.paid.id, ids.waiting.id].sort());
      expect((await b.list('/api/v1/va-payments?externalReference=late')).data.map((p: { id: string }) => p.id)).toEqual([late.id]);
      expect((await b.call('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 25, lockMode: 'amount' })).body.error.code).toBe('AMOUNT_LOCK_CONFLICT');
      expect((await b.call('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 15, lockMode: 'amount' })).status).toBe(201);
      expect((await b.call('POST', '/api/v1/clients', { ...CLIENT, name: 'Cam', taxId: '20222222223' })).body.error.code).toBe('TAX_ID_ALREADY_EXISTS');
      // The CVU the completed payment freed is lent again before a new one is opened.
      expect((await b.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 50 })).cvu).toBe(ids.waiting.cvu);
    }
  });

  it('is not used for a data file changed or copied without its times, nor when damaged', async () => {
    const data = join(useTmp(), 'state.json');
    const first = await startServer({ port: 0, host: '127.0.0.1', data });
    const ids = await fill(first.url);
    await first.close();

    // Copied with its times the state is the same state; copied without, it is read whole (and answers the same).
    expect((await useServer({ data: copy(data, true) }, 'test')).runtime.store.quick).toBe(true);
    expect((await useServer({ data: copy(data, false) }, 'test')).runtime.store.quick).toBe(false);

    // Edited by hand after the stop (same size): the edit counts, indexes included (the amount lock moves to 16).
    const edited = copy(data, true);
    const text = readFileSync(edited, 'utf8');
    const line = text.split('\n').find((l) => l.includes(`"${ids.locked.id}":{`))!;
    writeFileSync(edited, text.replace(line, line.replace('"amount":1500', '"amount":1600')));
    const afterEdit = await useServer({ data: edited }, 'test');
    expect(afterEdit.runtime.store.quick).toBe(false);
    const a = api(afterEdit.url, KEY);
    expect((await a.data('GET', `/api/v1/va-payments/${ids.locked.id}`)).amount).toBe(16);
    expect((await a.call('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 16, lockMode: 'amount' })).body.error.code).toBe('AMOUNT_LOCK_CONFLICT');
    expect((await a.call('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 15, lockMode: 'amount' })).status).toBe(201);

    // Damaged: cut (its header with it), its sections cut short (the header intact), or a header that is not one; or
    // written by a release whose index file was laid out otherwise (its version before this one's), sound but not read.
    const index = readFileSync(`${data}.index`);
    const end = index.lastIndexOf(10, index.length - 2);
    const { k: _, ...header } = JSON.parse(index.toString('utf8', end + 1)) as { k: string; version: number };
    const older = Buffer.concat([index.subarray(0, end + 1), checkedLine({ ...header, version: STORED_INDEXES_VERSION - 1 })]);
    const shortSections = Buffer.concat([index.subarray(0, end - 10), index.subarray(end)]);
    for (const bytes of [index.subarray(0, 20), index.subarray(0, index.length - 10), shortSections, Buffer.from('null\n'), older]) {
      const damaged = copy(data, true);
      writeFileSync(`${damaged}.index`, bytes);
      const afterDamage = await useServer({ data: damaged }, 'test');
      expect(afterDamage.runtime.store.quick).toBe(false);
      expect((await api(afterDamage.url, KEY).data('GET', `/api/v1/va-payments/${ids.paid.id}`)).status).toBe('completed');
    }
  });

  it('after a quick start the rest of the index is read ahead in slices, between other work, without any request', async () => {
    let consumed = 0;
    let turns = 0;
    const store: Store = {
      ...memoryStore(),
      quick: true,
      *warming() {
        for (let i = 0; i < 50; i++) {
          const until = performance.now() + 0.5;
          while (performance.now() < until); // a bucket's worth of work
          consumed++;
          yield;
        }
      },
    };
    const runtime = await createRuntime({ store });
    expect(consumed).toBe(0); // nothing read before the runtime is up
    const other = setInterval(() => turns++, 0); // other work waiting its turn
    await eventually(() => consumed === 50, 5000, 'the index to be read ahead');
    clearInterval(other);
    expect(turns).toBeGreaterThan(3); // it let other work run between its slices
    await runtime.close();
  });

  it('reading ahead waits while requests keep the event loop busy, and goes on once they stop', async () => {
    let consumed = 0;
    const store: Store = {
      ...memoryStore(),
      quick: true,
      *warming() {
        for (; consumed < 20; consumed++) yield;
      },
    };
    let busy = true;
    // Work that keeps the event loop busy, as a flood of requests does: 5 ms of CPU per turn.
    const spin = () => {
      const until = performance.now() + 5;
      while (performance.now() < until);
      if (busy) setImmediate(spin);
    };
    const runtime = await createRuntime({ store });
    spin();
    await new Promise((resolve) => setTimeout(resolve, 300));
    busy = false;
    expect(consumed, 'read ahead while busy').toBe(0);
    await eventually(() => consumed === 20, 5000, 'the index to be read ahead once idle');
    await runtime.close();
  });

  /**
   * A runtime on a new data file where every state counts as large (a stop never folds to leave one file); `options`
   * gives more options of its store, from the data file's path.
   */
  async function largeState(key: string, options: (data: string) => FileStoreOptions = () => ({})) {
    const data = join(useTmp(), 'state.json');
    const runtime = await createRuntime({ store: fileStore(data, { foldAtStopBelow: 1, ...options(data) }) });
    const account = runtime.sandbox.account(key);
    const ids: string[] = [];
    /** Makes payments, not saved yet. */
    const make = (n: number) => {
      for (let i = 0; i < n; i++) ids.push(account.createVaPayment(PAYMENT).id);
    };
    const create = async (n: number) => {
      make(n);
      await runtime.commit();
    };
    await create(20_000); // over 20 MiB (the journal's floor) in one save: folded before it is acknowledged
    const generation = () => JSON.parse(readFileSync(data, 'utf8').split('\n')[0]! + '}}').generation as number;
    /** A start on the files: through the index file of the data file before the fold, each payment as it was made. */
    const readBack = async (options?: FileStoreOptions) => {
      const again = fileStore(data, options);
      const restarted = await createRuntime({ store: again });
      expect(again.quick, 'a start through the index file of the data file before the fold').toBe(true);
      for (const id of [ids[0]!, ids[20_000]!, ids.at(-1)!]) {
        expect(restarted.sandbox.account(key).getVaPayment(id)).toEqual(account.getVaPayment(id));
      }
      return restarted;
    };
    return { data, runtime, make, create, generation, readBack };
  }

  it('a stop does not wait for a fold under way of a large state: the next start replays both journals quickly and folds again', { timeout: 60_000 }, async () => {
    const { data, runtime, create, generation, readBack } = await largeState('sk_cut');
    const g = generation();
    // The journal outgrows its floor: the save is acknowledged and a fold begins in the background.
    while (!existsSync(`${data}.journal.next`)) await create(2_000);
    await runtime.close();
    expect(existsSync(`${data}.journal.next`), 'the fold was cut short').toBe(true);
    expect(existsSync(`${data}.tmp`), 'its part removed').toBe(false);
    expect(generation()).toBe(g);
    const restarted = await readBack();
    await eventually(() => !existsSync(`${data}.journal.next`), 20_000, 'the fold to be done again once idle');
    await restarted.close();
  });

  it('a start that replayed over half a fold’s worth of journal folds it at its first write; one that replayed less does not', { timeout: 90_000 }, async () => {
    const { data, runtime, create, readBack } = await largeState('sk_soon');
    const journal = () => statSync(`${data}.journal`).size;
    /** A fold began (the next journal is written to) or is done (the journal holds what came since). */
    const folded = (before: number) => existsSync(`${data}.journal.next`) || journal() < before;
    await create(2_000); // ~2.3 MB: under half the journal's floor (20 MiB)
    await runtime.close(); // leaves the journal (`foldAtStopBelow`)
    const small = await readBack({ foldAtStopBelow: 1 });
    const account = small.sandbox.account('sk_soon');
    let before = journal();
    account.createVaPayment(PAYMENT);
    await small.commit();
    await sleep(500);
    expect(folded(before), 'no fold after a short replay').toBe(false);
    for (let i = 0; i < 4; i++) {
      for (let n = 0; n < 2_000; n++) account.createVaPayment(PAYMENT);
      await small.commit();
    }
    await small.close();
    expect(journal(), 'over half of 20 MiB').toBeGreaterThan(10 * 2 ** 20);
    expect(journal(), 'under all of it: no fold while it grew').toBeLessThan(20 * 2 ** 20);
    before = journal();
    const long = await readBack();
    await sleep(500);
    expect(folded(before), 'none before a write').toBe(false);
    long.sandbox.account('sk_soon').createVaPayment(PAYMENT);
    await long.commit();
    await eventually(() => !existsSync(`${data}.journal.next`) && journal() < 64 * 1024, 20_000, 'the first write to fold the replayed journal');
    await long.close();
  });

  it('tells onFold when each fold begins and when it ends: one into a new data file, one into the delta file', { timeout: 90_000 }, async () => {
    const told: [running: boolean, dataFile: number | undefined][] = [];
    const { data, runtime, create } = await largeState('sk_told', (data) => ({
      onFold: (running) => told.push([running, statSync(data, { throwIfNoEntry: false })?.ino]),
    }));
    // The start's fold (a new data file exists from the start) and the first save's (no index file yet) each wrote a
    // new data file: told before it was in place, and after.
    expect(told.map(([running]) => running)).toEqual([true, false, true, false]);
    for (const at of [0, 2]) expect(told[at]![1], 'the new data file in place once told it ended').not.toBe(told[at + 1]![1]);
    expect(statSync(data).ino).toBe(told[3]![1]);
    while (!existsSync(`${data}.journal.next`)) await create(2_000);
    expect(told.at(-1)![0], 'told as it began').toBe(true);
    await eventually(() => !existsSync(`${data}.journal.next`), 30_000, 'the fold to be done');
    expect(statSync(`${data}.delta`).size, 'a fold into the delta file').toBeGreaterThan(0);
    expect(told.slice(4)).toEqual([
      [true, told[3]![1]],
      [false, told[3]![1]],
    ]);
    await runtime.close();
  });

  it('a fold of a large state appends what changed to the delta file, leaving the data file; a quick start and a full read both read it back', { timeout: 90_000 }, async () => {
    const { data, runtime, create, readBack } = await largeState('sk_delta');
    const { ino, size } = statSync(data);
    await create(2_000);
    // A byte of a payment the journal holds, damaged after it was written (its amount): the fold does not copy the damage
    // into the delta file, but makes that payment's JSON again (its bytes no longer have the CRC32 its line says).
    const journal = readFileSync(`${data}.journal`);
    const start = journal.indexOf(10) + 1;
    const { c, p } = JSON.parse(journal.toString('utf8', start, journal.indexOf(10, start))) as { c: unknown[][]; p: number[] };
    const i = c.findIndex((change) => change[1] === 'vaPayments');
    const amount = journal.indexOf('"amount":', start + p[3 * i]!) + '"amount":'.length;
    expect(amount).toBeLessThan(start + p[3 * i]! + p[3 * i + 1]!);
    const fd = openSync(`${data}.journal`, 'r+');
    writeSync(fd, Buffer.from([journal[amount] === 0x39 ? 0x38 : journal[amount]! + 1]), 0, 1, amount);
    closeSync(fd);
    while (!existsSync(`${data}.journal.next`)) await create(2_000);
    await eventually(() => !existsSync(`${data}.journal.next`), 30_000, 'the fold to be done');
    expect([statSync(data).ino, statSync(data).size], 'the data file as it was').toEqual([ino, size]);
    const appended = statSync(`${data}.delta`).size;
    // The records the folded journal held: most of its 20 MiB (its lines also say where each value is, `p`).
    expect(appended).toBeGreaterThan(16 * 1024 * 1024);
    await create(10); // in the journal only
    const state = JSON.stringify(runtime.sandbox.state.accounts.sk_delta);
    await runtime.close(); // a large state: the stop leaves the files as they are
    expect(statSync(`${data}.delta`).size).toBe(appended);
    const image = copy(data, true);

    // Through the index file: what the delta file holds read from there, in the order records were made. The start
    // leaves the delta file as it is (its times too: the next start trusts them rather than check its CRC32).
    const times = statSync(`${data}.delta`).mtimeMs;
    const quick = await readBack();
    expect(JSON.stringify(quick.sandbox.state.accounts.sk_delta)).toBe(state);
    await quick.close();
    expect(statSync(`${data}.delta`).mtimeMs).toBe(times);
    // Everything read: the data file, the delta file's batches, the journal.
    expect(JSON.stringify((await loadCopy(image)).accounts.sk_delta)).toBe(state);

    // A batch a crash cut short (no end line) is dropped: the index file names the delta file without it.
    const torn = copy(image, true);
    writeFileSync(`${torn}.delta`, '["sk_delta","vaPayments","torn",{"id":"torn"}]\n', { flag: 'a' });
    const again = fileStore(torn);
    const read = await again.load();
    expect(again.quick).toBe(true);
    expect(statSync(`${torn}.delta`).size, 'cut back to what the index file names').toBe(appended);
    expect(read.accounts.sk_delta!.vaPayments.torn).toBeUndefined();
    await again.close();
    writeFileSync(`${torn}.delta`, '["sk_delta","vaPayments","torn",{"id":"torn"}]\n', { flag: 'a' });
    rmSync(`${torn}.index`);
    expect((await loadCopy(torn)).accounts.sk_delta!.vaPayments.torn).toBeUndefined();

    // A byte damaged in the middle of a batch: the index file no longer matches (its CRC32), and the full read stops the
    // start, naming where to cut; nothing is changed.
    const damaged = copy(image, true);
    const bytes = readFileSync(`${damaged}.delta`);
    const at = bytes.indexOf('"amount":') + '"amount":'.length;
    bytes[at] = bytes[at] === 0x39 ? 0x38 : bytes[at]! + 1;
    writeFileSync(`${damaged}.delta`, bytes);
    await expect(fileStore(damaged).load()).rejects.toThrow(/state\.json\.delta is damaged in the batch from byte 0: .*truncate -s 0 /);
    expect(readFileSync(`${damaged}.delta`).equals(bytes)).toBe(true);
  });

  it('a stop cuts a fold short while it writes the index file too: the delta file it appended to is cut back at the next start', { timeout: 60_000 }, async () => {
    const { data, runtime, create, generation, readBack } = await largeState('sk_index');
    const g = generation();
    const { ino } = statSync(data);
    const delta = () => statSync(`${data}.delta`, { throwIfNoEntry: false })?.size ?? 0;
    const before = delta();
    while (!existsSync(`${data}.journal.next`)) await create(2_000);
    // The records are appended to the delta file and the index file's sections are being written: the fold pauses
    // between them, and this loop runs in those pauses.
    while (!existsSync(`${data}.index.tmp`)) await new Promise((resolve) => setImmediate(resolve));
    await runtime.close();
    expect(existsSync(`${data}.journal.next`), 'the fold was cut short').toBe(true);
    expect(existsSync(`${data}.index.tmp`), 'its part removed').toBe(false);
    expect([statSync(data).ino, generation()], 'the data file as it was').toEqual([ino, g]);
    expect(delta(), 'its records appended').toBeGreaterThan(before);
    const restarted = await readBack();
    expect(delta(), 'what the index file does not name, cut off').toBe(before);
    await restarted.close();
  });

  it("a fold of a large state that the stop's own last save sets off is cut short too", { timeout: 60_000 }, async () => {
    const { data, runtime, make, create, readBack } = await largeState('sk_last');
    const journal = () => statSync(`${data}.journal`).size;
    const threshold = Math.max(statSync(data).size / 4, 20 * 1024 * 1024);
    // Saved until one more batch would take the journal past the point where a fold begins.
    while (journal() + 3_000 * 1_300 < threshold) await create(1_000);
    expect(existsSync(`${data}.journal.next`), 'no fold yet').toBe(false);
    const before = journal();
    make(5_000); // not saved: the stop saves it, and that save sets a fold off
    await runtime.close();
    expect(existsSync(`${data}.journal.next`), 'the fold it set off was cut short, not waited for').toBe(true);
    expect(before).toBeLessThan(threshold);
    expect(journal(), 'the last save, in the journal, took it past where a fold begins').toBeGreaterThan(threshold);
    await (await readBack()).close();
  });

  /** An index file as its sections and its header line (the last, which names its data file by times that differ between copies). */
  const indexParts = (index: string) => {
    const bytes = readFileSync(index);
    const end = bytes.lastIndexOf(10, bytes.length - 2);
    return { sections: bytes.subarray(0, end), header: readLine(bytes.subarray(end + 1, bytes.length - 1)) };
  };
  const sections = (index: string): Buffer => indexParts(index).sections;

  /** Every lookup an index file holds, read back (ids, not refs), by account and name; each key checked to be in its bucket. */
  const lookups = (data: string) => {
    const { header } = indexParts(`${data}.index`);
    const lazy = readIndexFile(`${data}.index`, data, `${data}.delta`)!;
    try {
      const accounts = (header as { value: { accounts: [string, { maps: Record<string, unknown>; values: Record<string, unknown> }][] } }).value.accounts;
      return accounts.map(([key, { maps, values }]) => {
        const source = lazy.indexes.get(key)!;
        const read = (name: string) => {
          const map = source.map(name)!;
          const entries = Array.from({ length: map.buckets }, (_, bucket) => map.read(bucket).map(([k, v]) => [k, v, bucket] as const)).flat();
          expect(entries.filter(([k, , bucket]) => bucketOf(k, map.buckets) !== bucket), 'each key in its bucket').toEqual([]);
          return new Map(entries.map(([k, v]) => [k, v]));
        };
        return [key, Object.keys(maps).map((name) => [name, read(name)]), Object.keys(values).map((name) => [name, source.value(name)])];
      });
    } finally {
      lazy.release();
    }
  };

  /** How many buckets of lookups an index file holds with deltas after their base (see `WrittenMap`), and without. */
  const deltas = (data: string) => {
    const { header } = indexParts(`${data}.index`);
    const accounts = (header as { value: { accounts: [string, { maps: Record<string, { sections: unknown[][] }> }][] } }).value.accounts;
    const buckets = accounts.flatMap(([, { maps }]) => Object.values(maps).flatMap((map) => map.sections));
    return { with: buckets.filter((segments) => segments.length > 1).length, most: Math.max(...buckets.map((segments) => segments.length - 1)) };
  };

  /**
   * Folds a copy of the files a crash left after writes over a quick start, at its stop: as they are, with every
   * bucket read ahead first, or without the index file (everything read).
   */
  async function foldCopy(image: string, how: 'as they are' | 'read ahead' | 'no index') {
    const data = copy(image, true);
    if (how === 'no index') rmSync(`${data}.index`);
    const store = fileStore(data);
    const runtime = await createRuntime({ store });
    expect(store.quick).toBe(how !== 'no index');
    if (how === 'read ahead') for (const _ of store.warming());
    await runtime.close();
    return { data, deltas: deltas(data) };
  }

  it('a fold adds what changed to the buckets as the index file wrote them, and they read back as a fold of everything writes them', async () => {
    const data = join(useTmp(), 'state.json');
    const first = await startServer({ port: 0, host: '127.0.0.1', data });
    const ids = await fill(first.url);
    await first.close();
    // Writes over a quick start: new keys, lists appended to, a payment paid (its keys set again, one taken out).
    const second = await startServer({ port: 0, host: '127.0.0.1', data });
    const a = api(second.url, KEY);
    for (let i = 1; i <= 5; i++) await a.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 40 + i });
    await a.data('POST', '/sandbox/v1/transfers', { to: ids.waiting.alias, total: 20 });
    await a.data('POST', '/api/v1/clients', { ...CLIENT, name: 'Bea', taxId: '27-11111111-5' });
    const image = copy(data, true);
    await second.close();

    const kept = await foldCopy(image, 'as they are');
    const readAhead = await foldCopy(image, 'read ahead');
    const whole = await foldCopy(image, 'no index');
    expect(kept.deltas.with, 'buckets with a delta').toBeGreaterThan(0);
    expect(whole.deltas.with, 'a fold of everything writes bases only').toBe(0);
    // What was read ahead makes no difference: the changes are what the fold writes (see index-file.test.ts for what
    // they read back as).
    expect(sections(`${kept.data}.index`).equals(sections(`${readAhead.data}.index`))).toBe(true);
    // The records not written since copied as lines, the others written: the data file a full read writes.
    expect(readFileSync(kept.data).equals(readFileSync(whole.data))).toBe(true);
    const server = await useServer({ data: kept.data }, 'test');
    expect(server.runtime.store.quick).toBe(true);
    expect((await api(server.url, KEY).data('GET', `/api/v1/va-payments/${ids.waiting.id}`)).status).toBe('completed');
  });

  it('a fold merges every bucket into a new base when a record left the places their refs name', async () => {
    const data = join(useTmp(), 'state.json');
    const first = await startServer({ port: 0, host: '127.0.0.1', data });
    await fill(first.url);
    await api(first.url, KEY).data('POST', '/sandbox/v1/clock/advance', { seconds: 20 * 3600 });
    await api(first.url, KEY).post('/api/v1/va-payments', { ...PAYMENT, amount: 60 }, { 'idempotency-key': 'later' });
    await first.close();
    // A day after the first idempotency key it is forgotten: its record, its table's first, leaves, the next moves up.
    const second = await startServer({ port: 0, host: '127.0.0.1', data });
    const a = api(second.url, KEY);
    await a.data('POST', '/sandbox/v1/clock/advance', { seconds: 5 * 3600 });
    await a.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 50 });
    const image = copy(data, true);
    await second.close();

    const moved = await foldCopy(image, 'as they are');
    const readAhead = await foldCopy(image, 'read ahead');
    const full = await foldCopy(image, 'no index');
    expect(moved.deltas.with).toBe(0);
    expect(sections(`${moved.data}.index`).equals(sections(`${readAhead.data}.index`))).toBe(true);
    expect(readFileSync(moved.data).equals(readFileSync(full.data))).toBe(true);
    expect(Object.keys(JSON.parse(readFileSync(full.data, 'utf8')).accounts[KEY].idempotency)).toEqual(['later']);
  });

  it("the folds of a running server add to the delta and index files the last one wrote, whatever they read ahead", { timeout: 240_000 }, async () => {
    // 20,000 payments expired and 1,500 waiting: the lookup of active payments is small in the index file, the tables
    // not; all in the data file (the stop folds everything into it).
    const data = join(useTmp(), 'state.json');
    let now = Date.now();
    const first = await createRuntime({ store: fileStore(data, { foldAtStopBelow: Infinity }), ids: seededIds(2), clock: { now: () => now } });
    const make = async (n: number) => {
      for (let i = 0; i < n; i++) first.sandbox.account('sk_twice').createVaPayment(PAYMENT);
      await first.commit();
    };
    await make(20_000);
    now += 2 * 3600_000;
    first.sandbox.account('sk_twice').runDue();
    await make(1_500);
    await first.close();
    /**
     * The same writes on a copy: 20,000 payments in one save (folded before it is acknowledged: the active ones now need
     * more buckets, the tables not), one more, a stop that folds.
     */
    const twice = async (how: 'as they are' | 'read ahead' | 'no index') => {
      const copied = copy(data, true);
      if (how === 'no index') rmSync(`${copied}.index`);
      const store = fileStore(copied, { foldAtStopBelow: Infinity });
      const again = await createRuntime({ store, ids: seededIds(3), clock: { now: () => now } }); // the same for each
      expect(store.quick).toBe(how !== 'no index');
      if (how === 'read ahead') for (const _ of store.warming());
      const account = again.sandbox.account('sk_twice');
      for (let i = 0; i < 20_000; i++) account.createVaPayment(PAYMENT);
      await again.commit();
      const folded = deltas(copied);
      const appended = existsSync(`${copied}.delta`);
      const state = JSON.stringify(await loadCopy(copied));
      account.createVaPayment({ ...PAYMENT, amount: 99 });
      await again.close();
      return { data: copied, deltas: [folded, deltas(copied)], appended, state };
    };
    const kept = await twice('as they are');
    const readAll = await twice('read ahead');
    const whole = await twice('no index');
    expect(kept.deltas[0]!.with, 'the first fold added deltas').toBeGreaterThan(0);
    expect(kept.deltas[1]!.with, 'and so did the second, into a new data file: what the refs name kept its place').toBeGreaterThan(0);
    expect(whole.deltas[0]!.with, 'with nothing to add to, bases only').toBe(0);
    // The same lookups, each with its ids (a map written whole lists what was read ahead first, so not the same bytes).
    expect(lookups(kept.data)).toEqual(lookups(readAll.data));
    // The first fold appended its records to the delta file (the stop's, a small state's, wrote a new data file): the
    // files held the same state then as those of a fold into a new data file, and after.
    expect([kept.appended, whole.appended]).toEqual([true, false]);
    expect(kept.state).toBe(whole.state);
    // The same data file but for its generation (a start without its index file folds once more).
    const records = (data: string) => readFileSync(data, 'utf8').replace(/^\{"version":1,"generation":\d+,/, '');
    expect(records(kept.data) === records(whole.data)).toBe(true);
    const store = fileStore(kept.data);
    const state = await store.load();
    expect(store.quick).toBe(true);
    expect(Object.keys(state.accounts.sk_twice!.vaPayments)).toHaveLength(41_501);
    await store.close();
  });

  it('a table asked for whole is read in pieces of whole lines, in its order, as the data file holds it', async () => {
    const data = join(useTmp(), 'state.json');
    const server = await startServer({ port: 0, host: '127.0.0.1', data });
    const a = api(server.url, KEY);
    for (let i = 1; i <= 12; i++) await a.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: i, externalReference: `ref-ñ-${i}` });
    await server.close();
    const lazy = readIndexFile(`${data}.index`, data, `${data}.delta`, 2048)!;
    try {
      const stored = JSON.parse(readFileSync(data, 'utf8')).accounts[KEY];
      for (const table of ['vaPayments', 'pool', 'events', 'deliveries', 'transfers'] as const) {
        expect(JSON.stringify(Object.entries(lazy.state.accounts[KEY]![table]))).toBe(JSON.stringify(Object.entries(stored[table])));
      }
    } finally {
      lazy.release();
    }
  });

  it('a last compaction copies the records not written since as bytes, in their order, with the changes in place', async () => {
    const data = join(useTmp(), 'state.json');
    const server = await startServer({ port: 0, host: '127.0.0.1', data });
    const a = api(server.url, KEY);
    for (let i = 1; i <= 12; i++) await a.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: i, metadata: { note: `ñandú ${i}` } });
    await server.close();
    const lazy = readIndexFile(`${data}.index`, data, `${data}.delta`, 2048)!;
    try {
      const payments = lazy.state.accounts[KEY]!.vaPayments;
      const ids = Object.keys(JSON.parse(readFileSync(data, 'utf8')).accounts[KEY].vaPayments);
      payments[ids[3]!] = { ...payments[ids[3]!]!, status: 'cancelled' };
      delete payments[ids[5]!];
      payments.added = { id: 'added' } as never;
      const entries = [...tableEntries(payments)!];
      // Lines copied as they are, each record's value where its offset says: a run before the change, one between it
      // and the record gone, one after.
      const copied = entries.filter((entry): entry is CopiedLines => !Array.isArray(entry));
      expect(copied.map((lines) => lines.ids)).toEqual([ids.slice(0, 3), ids.slice(4, 5), ids.slice(6)]);
      for (const { bytes, at, ids: copiedIds, offsets, lengths } of copied) {
        copiedIds.forEach((id, i) => expect(JSON.parse(String(bytes.subarray(offsets[i]! - at, offsets[i]! - at + lengths[i]!)))).toEqual(payments[id]));
      }
      const order = entries.flatMap((entry) => (Array.isArray(entry) ? [entry[0]] : entry.ids));
      expect(order).toEqual([...ids.filter((id) => id !== ids[5]), 'added']);
      expect(entries.find((entry) => Array.isArray(entry) && entry[0] === ids[3])).toMatchObject([ids[3], { status: 'cancelled' }]);
    } finally {
      lazy.release();
    }
  });
});
