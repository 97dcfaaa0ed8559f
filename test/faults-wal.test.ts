import { closeSync, existsSync, openSync, readSync, rmSync, statSync, truncateSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { api, PAYMENT, spawnServer, useTmp } from './helpers.js';

/**
 * What SQLite keeps when its WAL (`state.db-wal`) is lost or damaged after a SIGKILL (docs/reliability.md, "What the
 * WAL keeps"): the writes of the log up to the first frame it cannot trust, and none after. A start serves that
 * committed prefix, never a write out of order, never a crash.
 */

const KEY = 'sk_wal';
// Few enough that the log stays under SQLite's automatic checkpoint (1,000 pages): with the request journal's rows,
// 50 creates wrote 1,002 frames, a checkpoint restarted the log, and its second half held only stale frames.
const ACKED = 25;
/** A WAL frame: its 24-byte header and a 4096-byte page, after the log's 32-byte header. */
const FRAME = 24 + 4096;

/** A server killed after `ACKED` creates, one at a time (each its own commit), all in its WAL: the database file. */
async function killedWithWal(): Promise<string> {
  const data = join(useTmp(), 'state.db');
  const server = await spawnServer(['--data', data]);
  const client = api(server.url, KEY);
  for (let i = 0; i < ACKED; i++)
    await client.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 100 + i, externalReference: `p${i}` });
  server.child.kill('SIGKILL');
  await server.exited;
  return data;
}

/** Which of the acknowledged creates a start on `data` serves, by their order (`p0`, `p1`…), in order. */
async function servedAfterStart(data: string): Promise<number[]> {
  const server = await spawnServer(['--data', data]);
  const { data: items } = await api(server.url, KEY).list('/api/v1/va-payments?limit=100');
  server.child.kill('SIGKILL');
  await server.exited;
  return items
    .map((p: { externalReference: string }) => Number(p.externalReference.slice(1)))
    .sort((a: number, b: number) => a - b);
}

/** The first `n` acknowledged creates: what a committed prefix of the log holds. */
const prefix = (n: number) => Array.from({ length: n }, (_, i) => i);

function flip(file: string, at: number): void {
  const fd = openSync(file, 'r+');
  const byte = Buffer.alloc(1);
  readSync(fd, byte, 0, 1, at);
  byte[0]! ^= 0x01;
  writeSync(fd, byte, 0, 1, at);
  closeSync(fd);
}

describe('a lost or damaged WAL after SIGKILL', () => {
  it('deleted: the start serves the database as of its last checkpoint; the acknowledged writes after it are lost', {
    timeout: 60_000,
  }, async () => {
    const data = await killedWithWal();
    expect(statSync(`${data}-wal`).size).toBeGreaterThan(FRAME);
    rmSync(`${data}-wal`);
    const served = await servedAfterStart(data);
    console.log(`faults-wal: WAL deleted: ${served.length} of ${ACKED} acknowledged creates served`);
    expect(served).toEqual(prefix(served.length));
    expect(served.length).toBeLessThan(ACKED);
  });

  it('truncated halfway: the start serves the commits before the cut, none after', { timeout: 60_000 }, async () => {
    const data = await killedWithWal();
    const frames = Math.floor((statSync(`${data}-wal`).size - 32) / FRAME);
    truncateSync(`${data}-wal`, 32 + FRAME * Math.floor(frames / 2) + 100);
    const served = await servedAfterStart(data);
    console.log(
      `faults-wal: WAL cut after ${Math.floor(frames / 2)} of ${frames} frames: ${served.length} of ${ACKED} served`,
    );
    expect(served).toEqual(prefix(served.length));
    expect(served.length).toBeLessThan(ACKED);
  });

  it('a byte flipped in a frame halfway: SQLite ends the log at that frame; the commits before it are served, none after', {
    timeout: 60_000,
  }, async () => {
    const data = await killedWithWal();
    const frames = Math.floor((statSync(`${data}-wal`).size - 32) / FRAME);
    flip(`${data}-wal`, 32 + FRAME * Math.floor(frames / 2) + 24 + 100);
    const served = await servedAfterStart(data);
    console.log(
      `faults-wal: a byte flipped in frame ${Math.floor(frames / 2)} of ${frames}: ${served.length} of ${ACKED} served`,
    );
    expect(served).toEqual(prefix(served.length));
    expect(served.length).toBeLessThan(ACKED);
  });

  it('a byte flipped in its header: SQLite ignores the whole log; the database as of its last checkpoint is served', {
    timeout: 60_000,
  }, async () => {
    const data = await killedWithWal();
    flip(`${data}-wal`, 8); // the page size, covered by the header's checksum
    const served = await servedAfterStart(data);
    console.log(`faults-wal: a byte flipped in the WAL header: ${served.length} of ${ACKED} served`);
    expect(served).toEqual(prefix(served.length));
    expect(served.length).toBeLessThan(ACKED);
  });

  it('untouched: every acknowledged write is served (the control)', { timeout: 60_000 }, async () => {
    const data = await killedWithWal();
    expect(existsSync(`${data}-wal`)).toBe(true);
    expect(await servedAfterStart(data)).toEqual(prefix(ACKED));
  });
});
