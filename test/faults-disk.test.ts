import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readlinkSync, rmSync, statfsSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { api, eventually, spawnServer, type Api, type Spawned } from './helpers.js';

/**
 * A full disk, with the real server (the built CLI, `va-sandbox start --data`) as a child process: on a real tmpfs of a
 * few MiB where this process may mount one (root, as CI runs), else on a folder whose writes the server process fails
 * past a size (`small-disk.mjs`, an injected failing fs). Which one ran is printed, and the other's tests are skipped.
 * `FAULTS_DISK=injected` runs the injected one even where mounting works.
 */
const MiB = 1024 * 1024;
const mountRefused = process.env.FAULTS_DISK === 'injected' ? 'FAULTS_DISK=injected' : probeMount();
const KIND = mountRefused === null ? 'tmpfs' : 'injected';
console.log(
  mountRefused === null
    ? 'faults-disk: on real tmpfs mounts'
    : `faults-disk: no tmpfs (${mountRefused}): the tmpfs tests are skipped, the same tests run on an injected failing fs`,
);

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
    return String((error as { stderr?: Buffer }).stderr ?? error).trim().split('\n')[0]!;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A disk of `bytes` for the server's files; `fill` takes all its room but `leave` bytes, `unfill` gives it back. */
function smallDisk(bytes: number) {
  const dir = mkdtempSync(join(tmpdir(), 'va-sandbox-disk-'));
  disks.push({ dir, mounted: false });
  if (KIND === 'tmpfs') {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${bytes}`, 'tmpfs', dir]);
    disks.at(-1)!.mounted = true;
  }
  const filler = join(dir, 'filler');
  const used = () => readdirSync(dir).reduce((sum, name) => sum + (statSync(join(dir, name), { throwIfNoEntry: false })?.size ?? 0), 0);
  const free = () => {
    if (KIND === 'injected') return bytes - used();
    const stats = statfsSync(dir);
    return stats.bavail * stats.bsize;
  };
  const env: Record<string, string> =
    KIND === 'tmpfs'
      ? {}
      : {
          NODE_OPTIONS: `--import ${pathToFileURL(join(import.meta.dirname, 'small-disk.mjs')).href}`,
          VA_SANDBOX_TEST_DISK_DIR: dir,
          VA_SANDBOX_TEST_DISK_BYTES: String(bytes),
        };
  return {
    data: join(dir, 'state.json'),
    env,
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
const payment = (note: number) => ({ paymentHubId: 1, currency: 'ARS', lockMode: 'time', amount: 15, metadata: { note: 'x'.repeat(note) } });

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

/** The descriptors the server process holds on its journals (deleted files included). */
const journalDescriptors = (server: Spawned) =>
  readdirSync(`/proc/${server.child.pid}/fd`)
    .map((fd) => {
      try {
        return readlinkSync(`/proc/${server.child.pid}/fd/${fd}`);
      } catch {
        return '';
      }
    })
    .filter((target) => target.includes('state.json.journal'));

describe.skipIf(KIND !== 'tmpfs')('on a real tmpfs', () => diskTests('tmpfs'));
describe.skipIf(KIND !== 'injected')('on an injected failing fs (no tmpfs could be mounted)', () => diskTests('injected'));

function diskTests(kind: string) {
  describe.each(['SIGKILL', 'SIGTERM'] as const)('a full disk, then %s', (signal) => {
    it('a write that cannot be stored is refused with 507 and leaves no trace; reads go on; writes resume once there is room; every acknowledged write is there after the restart', { timeout: 60_000 }, async () => {
      // The run: a 3 MiB disk filled but 150 KB, 67 creates with 1.5 KB of metadata, room again, 300 more.
      const disk = smallDisk(3 * MiB);
      let server = await spawnServer(['--data', disk.data], disk.env);
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

      server = await spawnServer(['--data', disk.data], disk.env);
      const found = await listed(api(server.url, KEY));
      console.log(
        `faults-disk (${kind}, ${signal}): ${acked.size} acknowledged (${whileFull.refusals.length} refused while full), ` +
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
      // A stop folds the journal into a new data file: now that events keep no copy of their payment it fits beside the
      // journal on 3 MiB, so the stop succeeds (a stop whose fold does not fit: the next test).
      if (signal === 'SIGTERM') expect(code, stderr).toBe(0);
      await stop(server, 'SIGKILL');
    });
  });

  it('an import too large for the journal (it goes into a new data file) that cannot be stored is undone, with the writes made while it was written', { timeout: 60_000 }, async () => {
    const disk = smallDisk(3 * MiB);
    let server = await spawnServer(['--data', disk.data], disk.env);
    let client = api(server.url, KEY);
    const acked = new Set<string>();
    await create(client, acked, 5, 100);
    const exportedPayments = [...acked].sort();
    // The account's own export, with 10,001 more pool CVUs: over the 10,000 records a journal line takes.
    const exported = await client.data('GET', '/sandbox/v1/export');
    const pool = (n: number) => `7${String(n).padStart(21, '0')}`;
    for (let n = 0; n < 10_001; n++) exported.account.pool[pool(n)] = { cvu: pool(n), alias: `BULK.${n}`, vaPaymentId: null, releasedAt: null };
    const poolSize = async () => Object.keys((await client.data('GET', '/sandbox/v1/export')).account.pool).length;
    const before = await poolSize();

    disk.fill(300 * 1024);
    const [imported, during] = await Promise.all([client.post('/sandbox/v1/import', exported), create(client, acked, 5, 100)]);
    const poolWhileFull = await poolSize();
    const listedWhileFull = await listed(client);
    disk.unfill();
    const again = await client.post('/sandbox/v1/import', exported);
    const after = await poolSize();
    await stop(server, 'SIGKILL');
    server = await spawnServer(['--data', disk.data], disk.env);
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

  it('a fold that fails for want of room keeps both journals whole and is tried again; a stop that cannot fold says so and exits 1; nothing acknowledged is lost after SIGKILL or SIGTERM', { timeout: 120_000 }, async () => {
    const disk = smallDisk(48 * MiB);
    const journal = `${disk.data}.journal`;
    let server = await spawnServer(['--data', disk.data], disk.env);
    let client = api(server.url, KEY);
    const acked = new Set<string>();
    const check = async (when: string) => {
      const found = await listed(client);
      console.log(`faults-disk (${kind}, fold): ${acked.size} acknowledged, ${found.length} found ${when}`);
      expect(found, when).toEqual([...acked].sort());
    };
    // The journal grows to just under the size that starts a fold (20 MiB: its floor).
    while (statSync(journal).size < 19.6 * MiB) await create(client, acked, 20, 7900, 4);
    // Room for 3 MiB of journal, not for the 20 MiB snapshot a fold writes.
    disk.fill(3 * MiB);
    while (!existsSync(`${journal}.next`)) await create(client, acked, 1, 7900);
    // The fold fails (writes meanwhile may be refused, the fold's part taking the last room), then 100 writes.
    await server.waitFor(/folding the journal into .* failed \(no space left on the disk\); both journals are kept whole/, 'stderr');
    const stored = await create(client, acked, 100, 7900, 4);
    expect(stored).toEqual({ stored: 100, refusals: [] });
    expect(existsSync(`${disk.data}.tmp`)).toBe(false); // the failed snapshot's part was removed
    expect(journalDescriptors(server)).toEqual([`${journal}.next`]);

    // SIGKILL with the fold failed: the start on the same full disk reads both journals (its own fold fails too).
    await stop(server, 'SIGKILL');
    server = await spawnServer(['--data', disk.data], disk.env);
    client = api(server.url, KEY);
    await check('after SIGKILL with a failed fold');
    // Its own fold, begun once the server is idle, fails (writes while it runs may be refused, its part taking the room).
    await server.waitFor(/folding the journal into .* failed \(no space left on the disk\); both journals are kept whole/, 'stderr');

    // A stop that cannot fold says so, exits 1, and loses nothing.
    expect(await create(client, acked, 20, 7900, 4)).toEqual({ stored: 20, refusals: [] });
    expect(await stop(server, 'SIGTERM')).toBe(1);
    expect(server.stderr()).toMatch(/^va-sandbox: folding the journal into .* failed \(no space left on the disk\).* at the stop: nothing is lost/m);
    server = await spawnServer(['--data', disk.data], disk.env);
    client = api(server.url, KEY);
    await check('after a SIGTERM that could not fold');

    // Room again: the fold is tried again (10 s after the last failure) at a write, and done.
    disk.unfill();
    await new Promise((resolve) => setTimeout(resolve, 10_500));
    expect(await create(client, acked, 4, 7900, 4)).toEqual({ stored: 4, refusals: [] });
    await eventually(() => !existsSync(`${journal}.next`), 20_000, 'the fold to be done');
    expect(journalDescriptors(server)).toEqual([journal]); // the old journal's descriptor was closed, none leaked
    expect(await create(client, acked, 4, 7900, 4)).toEqual({ stored: 4, refusals: [] });
    await stop(server, 'SIGKILL');
    server = await spawnServer(['--data', disk.data], disk.env);
    client = api(server.url, KEY);
    await check('after the fold was done again and a SIGKILL');
    expect(await stop(server, 'SIGTERM')).toBe(0);
    server = await spawnServer(['--data', disk.data], disk.env);
    client = api(server.url, KEY);
    await check('after a clean stop');
    await stop(server, 'SIGKILL');
  });
}
