import { chmodSync, copyFileSync, existsSync, readdirSync, readFileSync, statSync, truncateSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { startServer, type RunningServer } from '../src/sandbox/server.js';
import { api, spawnServer, useServer, useTmp, type Api } from './helpers.js';

/** Damaged files on start (journal lines, the index file, a snapshot edited behind the index's back) and a lost lock. */
const KEY = 'sk_files';
const body = (i: number) => ({ paymentHubId: 1, currency: 'ARS', lockMode: 'time', amount: 15, externalReference: `ref-${String(i).padStart(3, '0')}` });

/** Every VA payment id the account lists, sorted (every page). */
async function listed(client: Api): Promise<string[]> {
  const ids: string[] = [];
  for (let page = 1; ; page++) {
    const { status, body } = await client.get(`/api/v1/va-payments?limit=100&page=${page}`);
    if (status !== 200) throw new Error(`list answered ${status}: ${JSON.stringify(body)}`);
    const items = (Array.isArray(body.data) ? body.data : body.data.vaPayments) as { id: string }[];
    ids.push(...items.map((item) => item.id));
    if (page >= (body.pagination ?? body.data.pagination).totalPages) return ids.sort();
  }
}

/** `n` payments created one request at a time (so one journal line each), their ids in order. */
async function createMany(server: RunningServer, n: number): Promise<string[]> {
  const client = api(server.url, KEY);
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push((await client.data('POST', '/api/v1/va-payments', body(i))).id);
  return ids;
}

/** A copy of a data file and the files beside it (but its lock) in a new folder: what a crash leaves, or a backup. */
function copyFiles(data: string): string {
  const to = join(useTmp(), 'state.json');
  for (const suffix of ['', '.delta', '.journal', '.journal.next', '.index']) if (existsSync(data + suffix)) copyFileSync(data + suffix, to + suffix);
  return to;
}

/** Every file of the folder and its bytes, to see that a refused start changed nothing. */
const snapshotOf = (data: string) =>
  Object.fromEntries(
    readdirSync(join(data, '..'))
      .filter((name) => !name.endsWith('.lock'))
      .map((name) => [name, readFileSync(join(data, '..', name)).toString('base64')]),
  );

describe('journal lines carry a checksum', () => {
  /** 300 payments written to a journal, and the files as a crash leaves them. */
  async function crashed() {
    const server = await useServer({ data: join(useTmp(), 'state.json') }, 'test');
    const ids = await createMany(server, 300);
    return { ids, data: copyFiles(server.dataPath!) };
  }

  /** The journal's lines (with their newlines) and the byte offset of line `n` (1: the header). */
  function lines(journal: string) {
    const text = readFileSync(journal, 'utf8');
    const all = text.split(/(?<=\n)/);
    const offset = (n: number) => Buffer.byteLength(all.slice(0, n - 1).join(''));
    return { all, offset };
  }

  it.each([
    ['a line that is no longer JSON', (line: string) => line.replace('"status":"waiting"', '"status";"waiting"')],
    ['a value changed, still JSON', (line: string) => line.replace('"status":"waiting"', '"status":"waitinG"')],
  ])('%s in the middle refuses the start, naming the file, the byte and the way out, and changes nothing', async (_, damage) => {
    const { ids, data } = await crashed();
    const journal = `${data}.journal`;
    const { all, offset } = lines(journal);
    expect(all).toHaveLength(301); // the header and one line per create
    all[150] = damage(all[150]!); // line 151: the 150th create
    writeFileSync(journal, all.join(''));
    const before = snapshotOf(data);

    const refused = await startServer({ port: 0, host: '127.0.0.1', data }).then(
      async (server) => {
        const found = await listed(api(server.url, KEY));
        await server.close();
        return `started, with ${found.length} of the ${ids.length} payments`;
      },
      (error: Error) => error.message,
    );
    expect(refused).toContain(`${journal} is damaged at byte ${offset(151)} (line 151)`);
    expect(refused).toContain(`Nothing was changed`);
    expect(refused).toContain(`truncate -s ${offset(151)} '${journal}'`);
    expect(snapshotOf(data)).toEqual(before);

    // The way out it names: cut the journal there, and start with what came before.
    truncateSync(journal, offset(151));
    const server = await useServer({ data }, 'test');
    expect(await listed(api(server.url, KEY))).toEqual(ids.slice(0, 149).sort());
  });

  it('a torn tail (cut short, or a last line failing its checksum) was never acknowledged and is dropped; the rest is there', async () => {
    const { ids, data } = await crashed();
    const journal = `${data}.journal`;
    const { all } = lines(journal);
    const last = all.at(-1)!;
    writeFileSync(journal, [...all, last.replace('"status":"waiting"', '"status":"waitinG"'), last.slice(0, 100)].join(''));
    const server = await useServer({ data }, 'test');
    const client = api(server.url, KEY);
    expect(await listed(client)).toEqual([...ids].sort());
    const more = await client.data('POST', '/api/v1/va-payments', body(300));
    await server.close();
    const again = await useServer({ data: copyFiles(data) }, 'test');
    expect(await listed(api(again.url, KEY))).toEqual([...ids, more.id].sort());
  });

  it('a journal the release before checksums wrote still loads, and is written on', async () => {
    const { ids, data } = await crashed();
    const journal = `${data}.journal`;
    const { all } = lines(journal);
    // Its lines were plain JSON: the same lines without the checksum member.
    writeFileSync(journal, all.map((line) => line.replace(/^\{"k":"[0-9a-f]{8}",/, '{')).join(''));
    expect(readFileSync(journal, 'utf8').split('\n')[1]).toMatch(/^\{"c":\[\["sk_files","all"/);
    const server = await useServer({ data }, 'test');
    const client = api(server.url, KEY);
    expect(await listed(client)).toEqual([...ids].sort());
    const more = await client.data('POST', '/api/v1/va-payments', body(300));
    const again = await useServer({ data: copyFiles(data) }, 'test');
    expect(await listed(api(again.url, KEY))).toEqual([...ids, more.id].sort());
  });
});

describe('the index file and the snapshot it describes', () => {
  /** A cleanly stopped data file with 30 payments (so an index file), its payments' ids, and the index's header. */
  async function stopped() {
    const data = join(useTmp(), 'state.json');
    const server = await startServer({ port: 0, host: '127.0.0.1', data });
    const ids = await createMany(server, 30);
    await server.close();
    const index = readFileSync(`${data}.index`);
    // The header is the last line, after the sections.
    const end = index.lastIndexOf(10, index.length - 2);
    return { data, ids, index, end, header: JSON.parse(index.toString('utf8', end + 1)) };
  }

  /** Starts on the files; every read answers, and the payments are those given. */
  async function readsAll(data: string, ids: string[]) {
    const server = await useServer({ data }, 'test');
    const client = api(server.url, KEY);
    expect(await listed(client)).toEqual([...ids].sort());
    for (const id of [ids[0]!, ids[15]!, ids.at(-1)!]) expect((await client.get(`/api/v1/va-payments/${id}`)).status).toBe(200);
    expect((await client.post('/api/v1/va-payments', body(99))).status).toBe(201);
    return server;
  }

  it('a section damaged at the same length is not used: the start reads everything, and every read answers', async () => {
    const { data, ids, index, header } = await stopped();
    // Each section's first byte made something JSON cannot start with, the length unchanged.
    const damaged = Buffer.from(index);
    const sections = JSON.stringify(header.accounts).matchAll(/\[(\d+),(\d+)\]/g);
    for (const [, at] of sections) damaged[Number(at)] = 0x23;
    writeFileSync(`${data}.index`, damaged);
    const server = await readsAll(data, ids);
    expect(server.runtime.store.quick).toBe(false);
  });

  it('a header damaged at the same length (a table said to start a byte later) is not used', async () => {
    const { data, ids, index, end } = await stopped();
    const text = index.toString('utf8', end + 1).replace(/("vaPayments":\{"start":\d*)(\d)/, (_, head, digit) => `${head}${digit === '9' ? 8 : Number(digit) + 1}`);
    expect(text.length).toBe(index.length - end - 1);
    writeFileSync(`${data}.index`, Buffer.concat([index.subarray(0, end + 1), Buffer.from(text)]));
    const server = await readsAll(data, ids);
    expect(server.runtime.store.quick).toBe(false);
  });

  it('a snapshot edited with its modification time put back is read whole (the edit counts); one only touched is still read quickly', async () => {
    const { data, ids } = await stopped();
    const { atime, mtime } = statSync(data);
    // The same size: one payment's reference a byte shorter, a later one's a byte longer; every record between moves.
    const text = readFileSync(data, 'utf8').replace('"externalReference":"ref-003"', '"externalReference":"ref-03"').replace('"externalReference":"ref-027"', '"externalReference":"ref-0277"');
    writeFileSync(data, text);
    utimesSync(data, atime, mtime);
    const server = await readsAll(data, ids);
    expect(server.runtime.store.quick).toBe(false);
    const references = await Promise.all([ids[3]!, ids[27]!].map(async (id) => (await api(server.url, KEY).data('GET', `/api/v1/va-payments/${id}`)).externalReference));
    expect(references).toEqual(['ref-03', 'ref-0277']);

    // Its change time moved, its bytes did not: the checksum says it is the snapshot the index describes.
    const { data: other, ids: otherIds } = await stopped();
    chmodSync(other, 0o600);
    const quick = await readsAll(other, otherIds);
    expect(quick.runtime.store.quick).toBe(true);
  });
});

describe('the lock is held and checked', () => {
  it('a server whose lock was removed (a second server took the file) stops writing and says so; nothing acknowledged is lost', { timeout: 60_000 }, async () => {
    const data = join(useTmp(), 'state.json');
    const first = await spawnServer(['--data', data]);
    const acked: string[] = [];
    const create = async (url: string, i: number) => {
      const response = await api(url, KEY).post('/api/v1/va-payments', body(i));
      if (response.status === 201) acked.push(response.body.data.id);
      return response;
    };
    for (let i = 0; i < 50; i++) expect((await create(first.url, i)).status).toBe(201);
    unlinkSync(`${data}.lock`);
    const second = await spawnServer(['--data', data]);
    const refusals: string[] = [];
    for (let i = 0; i < 50; i++) {
      const [a, b] = await Promise.all([create(first.url, 100 + i), create(second.url, 200 + i)]);
      if (a.status !== 201) refusals.push(`${a.status} ${a.body.error.code}`);
      expect(b.status).toBe(201);
    }
    const lostLock = (await create(first.url, 999)).body;
    // Both stop: the second folds what it holds; the first, which lost the lock, must not write over it.
    second.child.kill('SIGTERM');
    const secondExit = await second.exited;
    first.child.kill('SIGTERM');
    const firstExit = await first.exited;
    const again = await spawnServer(['--data', data]);
    const found = await listed(api(again.url, KEY));
    console.log(`lock: ${acked.length} acknowledged, ${found.length} found after both stopped and a restart`);
    expect(found).toEqual([...acked].sort());
    expect(refusals).toEqual(Array(50).fill('507 INSUFFICIENT_STORAGE'));
    expect(lostLock.error.message).toMatch(/lost its lock on .*state\.json .*stopped writing/);
    expect(first.stderr()).toMatch(/lost its lock on .*state\.json/);
    expect(secondExit).toBe(0);
    expect(firstExit).toBe(1);
    again.child.kill('SIGTERM');
    expect(await again.exited).toBe(0);
  });
});

describe('--fsync', () => {
  it('syncs the journal once per group of writes, before any of them is answered; without it, never', async () => {
    const original = fs.fdatasyncSync;
    let answers = 0;
    /** How many answers had arrived when each sync ran. */
    const syncs: number[] = [];
    const spy = vi.spyOn(fs, 'fdatasyncSync').mockImplementation((fd) => {
      syncs.push(answers);
      original(fd);
    });
    syncBuiltinESMExports();
    try {
      for (const fsync of [true, false]) {
        const server = await useServer({ data: join(useTmp(), 'state.json'), fsync }, 'test');
        const client = api(server.url, KEY);
        syncs.length = answers = 0;
        for (let i = 0; i < 10; i++) {
          await client.data('POST', '/api/v1/va-payments', body(i));
          expect(syncs, `fsync ${fsync}`).toEqual(fsync ? Array.from({ length: i + 1 }, (_, n) => n) : []);
          answers++;
        }
        // Concurrent writes share groups: one sync per journal write.
        const writes = server.runtime.store.writes;
        await Promise.all(Array.from({ length: 40 }, (_, i) => client.data('POST', '/api/v1/va-payments', body(i))));
        expect(syncs.length - (fsync ? 10 : 0)).toBe(fsync ? server.runtime.store.writes - writes : 0);
      }
    } finally {
      spy.mockRestore();
      syncBuiltinESMExports();
    }
    // The command's option.
    const cli = await spawnServer(['--data', join(useTmp(), 'state.json'), '--fsync']);
    expect((await api(cli.url, KEY).post('/api/v1/va-payments', body(1))).status).toBe(201);
    cli.child.kill('SIGTERM');
    expect(await cli.exited).toBe(0);
  });
});
