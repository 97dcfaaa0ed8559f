import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { seededIds } from '../src/core/conventions/ids.js';
import { generateCvu } from '../src/core/hubs/cvu.js';
import { NEWEST } from '../src/sandbox/store/schema.js';
import { type Api, api, ROOT, runCli, type Spawned, spawnServer } from './helpers.js';

/**
 * A full disk, with the real server (the built CLI, `va-sandbox start --data`) as a child process, on a real tmpfs of a
 * few MiB. SQLite writes through its own file calls, not Node's, so only a real full disk makes it fail: where no tmpfs
 * can be mounted (not root), the tests are skipped and say why.
 */
const MiB = 1024 * 1024;
const mountRefused = probeMount();
if (mountRefused !== null) console.log(`faults-disk: no tmpfs (${mountRefused}): skipped`);

/** The disks' folders, and which of them are tmpfs mounts: unmounted and removed after the file's tests. */
const disks: { dir: string; mounted: boolean }[] = [];
afterAll(() => {
  for (const { dir, mounted } of disks) {
    if (mounted) execFileSync('umount', ['-l', dir]);
    rmSync(dir, { recursive: true, force: true });
  }
});

function probeMount(): string | null {
  const dir = mkdtempSync(join(tmpdir(), 'va-sandbox-probe-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', dir], { stdio: 'pipe' });
    execFileSync('umount', [dir]);
    return null;
  } catch (error) {
    return String((error as { stderr?: Buffer }).stderr ?? error)
      .trim()
      .split('\n')[0]!;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A disk of `bytes` for the server's files; `fill` takes all its room but `leave` bytes, `unfill` gives it back. */
function smallDisk(bytes: number) {
  const dir = mkdtempSync(join(tmpdir(), 'va-sandbox-disk-'));
  disks.push({ dir, mounted: false });
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${bytes}`, 'tmpfs', dir]);
  disks.at(-1)!.mounted = true;
  const filler = join(dir, 'filler');
  const free = () => {
    const stats = statfsSync(dir);
    return stats.bavail * stats.bsize;
  };
  return {
    data: join(dir, 'state.db'),
    free,
    fill(leave: number) {
      rmSync(filler, { force: true });
      writeFileSync(filler, Buffer.alloc(Math.max(0, free() - leave)));
    },
    unfill: () => rmSync(filler, { force: true }),
  };
}

const KEY = 'sk_disk';
/** A create whose journal line is about `size` bytes (its metadata is in the payment and in its `created` event). */
const payment = (note: number) => ({
  paymentHubId: 1,
  currency: 'ARS',
  lockMode: 'time',
  amount: 15,
  metadata: { note: 'x'.repeat(note) },
});

/** Every VA payment id the account lists, sorted (every page). */
async function listed(client: Api): Promise<string[]> {
  const ids: string[] = [];
  for (let page = 1; ; page++) {
    const { body } = await client.get(`/api/v1/va-payments?limit=100&page=${page}`);
    const items = (Array.isArray(body.data) ? body.data : body.data.vaPayments) as { id: string }[];
    ids.push(...items.map((item) => item.id));
    if (page >= (body.pagination ?? body.data.pagination).totalPages) return ids.sort();
  }
}

/**
 * Creates `n` payments, `parallel` at a time; the ids of those answered 201 join `acked`. Returns how many were
 * stored, and how the others were answered (`507 INSUFFICIENT_STORAGE` is the only right one).
 */
async function create(client: Api, acked: Set<string>, n: number, note: number, parallel = 1) {
  let stored = 0;
  const refusals: string[] = [];
  for (let i = 0; i < n; i += parallel) {
    await Promise.all(
      Array.from({ length: Math.min(parallel, n - i) }, async () => {
        const { status, body } = await client.post('/api/v1/va-payments', payment(note));
        if (status === 201) {
          acked.add(body.data.id);
          stored++;
        } else refusals.push(`${status} ${body?.error?.code}`);
      }),
    );
  }
  return { stored, refusals };
}

/** Stops the server with `signal`; its exit code (null when killed). */
async function stop(server: Spawned, signal: 'SIGKILL' | 'SIGTERM'): Promise<number | null> {
  server.child.kill(signal);
  return server.exited;
}

describe.skipIf(mountRefused !== null)('on a real tmpfs', () => {
  describe.each(['SIGKILL', 'SIGTERM'] as const)('a full disk, then %s', (signal) => {
    it('a write that cannot be stored is refused with 507 and leaves no trace; reads go on; writes resume once there is room; every acknowledged write is there after the restart', {
      timeout: 60_000,
    }, async () => {
      // A 16 MiB disk (room for SQLite's WAL, which grows to ~4 MiB between checkpoints) filled but 150 KB, 67 creates
      // with 1.5 KB of metadata, room again, 300 more.
      const disk = smallDisk(16 * MiB);
      let server = await spawnServer(['--data', disk.data]);
      const client = api(server.url, KEY);
      const acked = new Set<string>();
      disk.fill(150 * 1024);
      const whileFull = await create(client, acked, 67, 1500);
      const listedWhileFull = await listed(client);
      const ackedWhileFull = [...acked].sort();
      const eventsWhileFull = (await client.get('/sandbox/v1/events?limit=100')).status;
      disk.unfill();
      const afterRoom = await create(client, acked, 300, 1500);
      const code = await stop(server, signal);
      const stderr = server.stderr();

      server = await spawnServer(['--data', disk.data]);
      const found = await listed(api(server.url, KEY));
      console.log(
        `faults-disk (${signal}): ${acked.size} acknowledged (${whileFull.refusals.length} refused while full), ` +
          `stop exit ${code}, ${found.length} found after the restart`,
      );
      // Every acknowledged write is there, and nothing else.
      expect(found).toEqual([...acked].sort());
      // While full: some creates stored, the rest refused with 507; reads answered, showing nothing of the refused ones.
      expect(whileFull.stored).toBeGreaterThan(0);
      expect(whileFull.refusals.length).toBeGreaterThan(0); // the disk did fill
      expect(new Set(whileFull.refusals)).toEqual(new Set(['507 INSUFFICIENT_STORAGE']));
      expect(listedWhileFull).toEqual(ackedWhileFull);
      expect(eventsWhileFull).toBe(200);
      expect(stderr).toMatch(/no space left on the disk.*\n(.*\n)*.*are stored again/);
      // Room again: every write is taken.
      expect(afterRoom).toEqual({ stored: 300, refusals: [] });
      if (signal === 'SIGTERM') expect(code, stderr).toBe(0);
      await stop(server, 'SIGKILL');
    });
  });

  it('a read sees only what is committed: a create refused with 507 is never listed or exported, even by a read in the same moment', {
    timeout: 60_000,
  }, async () => {
    // Creates 16 at a time on a disk left 100 KB, each with its own externalReference, while 4 readers list the newest
    // page and export the account over and over: whatever a read shows must have been stored.
    const disk = smallDisk(16 * MiB);
    const server = await spawnServer(['--data', disk.data]);
    const client = api(server.url, KEY);
    disk.fill(100 * 1024);
    const refused = new Set<string>();
    const stored = new Set<string>();
    const seen = new Set<string>();
    let creating = true;
    const creates = (async () => {
      for (let i = 0; i < 160; i += 16) {
        await Promise.all(
          Array.from({ length: 16 }, async (_, j) => {
            const reference = `c${i + j}`;
            const { status, body } = await client.post('/api/v1/va-payments', {
              ...payment(1500),
              externalReference: reference,
            });
            if (status === 201) stored.add(reference);
            else if (status === 507) refused.add(reference);
            else throw new Error(`create answered ${status} ${JSON.stringify(body)}`);
          }),
        );
      }
      creating = false;
    })();
    const reader = async (n: number) => {
      let reads = 0;
      for (; creating && reads < 2000; reads++) {
        const { status, body } =
          n % 2 ? await client.get('/api/v1/va-payments?limit=100') : await client.get('/sandbox/v1/export');
        expect(status).toBe(200);
        const payments = n % 2 ? body.data : Object.values(body.data.account.vaPayments);
        for (const { externalReference } of payments as { externalReference: string }[]) seen.add(externalReference);
      }
      return reads;
    };
    const [, ...reads] = await Promise.all([creates, reader(0), reader(1), reader(2), reader(3)]);
    const shown = [...refused].filter((reference) => seen.has(reference));
    console.log(
      `faults-disk: ${stored.size} creates stored, ${refused.size} refused with 507, ${reads.join('+')} reads, ${shown.length} refused ones shown`,
    );
    expect(refused.size).toBeGreaterThan(0); // the disk did fill
    expect(shown).toEqual([]);
    disk.unfill();
    const after = (await client.list('/api/v1/va-payments?limit=100')).data.map(
      (p: { externalReference: string }) => p.externalReference,
    );
    expect(after.sort()).toEqual([...stored].sort());
    await stop(server, 'SIGKILL');
  });

  it('an import that cannot be stored is undone, with the writes that shared its transaction', {
    timeout: 60_000,
  }, async () => {
    // Room for the import's records, their lookup columns and indexes, and its WAL, once the disk is freed.
    const disk = smallDisk(8 * MiB);
    let server = await spawnServer(['--data', disk.data]);
    let client = api(server.url, KEY);
    const acked = new Set<string>();
    await create(client, acked, 5, 100);
    const exportedPayments = [...acked].sort();
    // The account's own export, with 10,001 more pool CVUs: about 1.5 MB to store.
    const exported = await client.data('GET', '/sandbox/v1/export');
    // Real CVUs (an import checks their check digits), from a seeded source: 13 random digits each, none alike.
    const ids = seededIds(152);
    for (let n = 0; n < 10_001; n++) {
      const cvu = generateCvu(ids);
      exported.account.pool[cvu] = { cvu, alias: `BULK.${n}`, vaPaymentId: null, releasedAt: null };
    }
    const poolSize = async () => Object.keys((await client.data('GET', '/sandbox/v1/export')).account.pool).length;
    const before = await poolSize();

    disk.fill(300 * 1024);
    const [imported, during] = await Promise.all([
      client.post('/sandbox/v1/import', exported),
      create(client, acked, 5, 100),
    ]);
    const poolWhileFull = await poolSize();
    const listedWhileFull = await listed(client);
    disk.unfill();
    const again = await client.post('/sandbox/v1/import', exported);
    const after = await poolSize();
    await stop(server, 'SIGKILL');
    server = await spawnServer(['--data', disk.data]);
    client = api(server.url, KEY);

    expect(`${imported.status} ${imported.body.error?.code}`).toBe('507 INSUFFICIENT_STORAGE');
    expect(new Set(during.refusals)).toEqual(new Set(during.refusals.length ? ['507 INSUFFICIENT_STORAGE'] : []));
    expect(poolWhileFull).toBe(before + during.stored); // nothing of the import is left (a create adds a pool CVU)
    expect(listedWhileFull).toEqual([...acked].sort()); // nor of the writes refused with it
    expect(again.status).toBe(200);
    expect(after).toBe(before + 10_001);
    // After SIGKILL and a restart: the import, and nothing from before it that it replaced.
    expect(await poolSize()).toBe(before + 10_001);
    expect(await listed(client)).toEqual(exportedPayments);
    await stop(server, 'SIGKILL');
  });
  it('a full disk during the schema migration says the disk is full and how much the migration needs, not to restore a backup; with room, the next start migrates it', {
    timeout: 60_000,
  }, async () => {
    const disk = smallDisk(4 * MiB);
    copyFileSync(join(ROOT, 'test/data/v2/state.db'), disk.data);
    disk.fill(200 * 1024);
    const start = await runCli(['start', '--port', '0', '--data', disk.data, '--quiet']);
    const lines = start.stderr.trim().split('\n');
    console.log(`migration on a full disk: ${lines[0]}`);
    expect(start.code, start.stderr).toBe(1);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      new RegExp(
        `^va-sandbox: ${disk.data} cannot be migrated \\(the disk is full: migrating it to schema ${NEWEST} needs about 498 KiB free beside it, 1\\d\\d KiB are\\): free some room and start again \\(the file is sound at schema 2`,
      ),
    );
    expect(lines[0]).not.toMatch(/backup|damaged/);
    // With the room it said it needs, and no more, the next start migrates the file and serves it.
    disk.fill(498 * 1024);
    const server = await spawnServer(['--data', disk.data]);
    expect((await api(server.url, 'sk_alpha').get('/api/v1/va-payments')).status).toBe(200);
    expect(await stop(server, 'SIGTERM')).toBe(0);
  });
});
