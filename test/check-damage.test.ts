import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkDatabase } from '../src/sandbox/store/check.js';
import { fileStore } from '../src/sandbox/store/database.js';
import { NEWEST } from '../src/sandbox/store/schema.js';
import { StoreDamagedError } from '../src/sandbox/store/start-check.js';
import { HEADER, pageFlips, written } from './damage.js';
import { runCli, useTmp } from './helpers.js';

/**
 * Issue 47, point 3: `va-sandbox check` finds what `start` refuses, in the same words, for every header, schema-version
 * and page damage (header bytes 18, 60 and 63 flipped were `ok` from check while start refused), and says "not a
 * database" for a directory, a device or an empty file.
 */

/** What a start of `data` (the store it opens) says: the line it is refused with, or null when it serves. */
async function startRefuses(data: string): Promise<StoreDamagedError | null> {
  try {
    const store = fileStore(data);
    await store.checked;
    await store.close();
    return null;
  } catch (error) {
    if (error instanceof StoreDamagedError) return error;
    throw error;
  }
}

describe('va-sandbox check finds what a start refuses', () => {
  it('every header and page flip a start refuses, check reports with the start’s own words', {
    timeout: 120_000,
  }, async () => {
    const dir = useTmp();
    const base = join(dir, 'base.db');
    await written(base);
    const source = readFileSync(base);
    const missed: string[] = [];
    let refused = 0;
    for (const [n, flip] of [...HEADER, ...pageFlips(base)].entries()) {
      const data = join(dir, `case-${n}.db`);
      const bytes = Buffer.from(source);
      bytes[flip.at]! ^= flip.mask;
      writeFileSync(data, bytes);
      // Check first: it writes nothing, and the start then sees the file as damaged.
      const found = checkDatabase(data).damaged.join('\n');
      const refusal = await startRefuses(data);
      if (refusal === null) continue;
      refused++;
      const words = refusal.why.split('; ')[0]!;
      if (!found.includes(words))
        missed.push(
          `${flip.what} ^0x${flip.mask.toString(16)}: start "${refusal.message}", check ${JSON.stringify(found)}`,
        );
    }
    console.log(`check-damage: ${refused} flips refused at start, each found by check`);
    expect(missed).toEqual([]);
    expect(refused).toBeGreaterThan(10);
  });

  it('header bytes 18, 60 and 63 flipped: the built CLI’s check exits 1 with the start’s words, where it said ok', {
    timeout: 60_000,
  }, async () => {
    const dir = useTmp();
    const base = join(dir, 'base.db');
    await written(base);
    const cases: [number, number, RegExp][] = [
      [18, 0x80, /its header's write version \(byte 18\) is 130, which SQLite takes read-only/],
      [
        60,
        0x02,
        new RegExp(`written by a newer va-sandbox \\(schema ${0x02000000 + NEWEST}, this one knows up to ${NEWEST}\\)`),
      ],
      // The header's low byte: a version above this release's is newer; one below, a header that disagrees.
      [
        63,
        0x02,
        (NEWEST ^ 0x02) > NEWEST
          ? new RegExp(`written by a newer va-sandbox \\(schema ${NEWEST ^ 0x02}, this one knows up to ${NEWEST}\\)`)
          : new RegExp(`its header says schema ${NEWEST ^ 0x02}, its tables are schema ${NEWEST}`),
      ],
    ];
    for (const [at, mask, words] of cases) {
      const data = join(dir, `byte-${at}.db`);
      const bytes = readFileSync(base);
      bytes[at]! ^= mask;
      writeFileSync(data, bytes);
      const check = await runCli(['check', '--data', data]);
      expect(check.code, `byte ${at}: ${JSON.stringify(check)}`).toBe(1);
      expect(check.stdout, `byte ${at}`).toMatch(new RegExp(`^${data}: ${words.source}\n`));
      const start = await runCli(['start', '--port', '0', '--data', data, '--quiet']);
      expect(start.code, `byte ${at}`).toBe(1);
      expect(start.stderr, `byte ${at}`).toMatch(words);
    }
  });

  it('a directory, /dev/null, /dev/zero or an empty file: "not a database", one line, exit 1', {
    timeout: 30_000,
  }, async () => {
    const dir = useTmp();
    const folder = join(dir, 'folder');
    mkdirSync(folder);
    const empty = join(dir, 'empty.db');
    writeFileSync(empty, '');
    const cases: [string, string][] = [
      [folder, 'a directory'],
      ['/dev/null', 'a device'],
      ['/dev/zero', 'a device'],
      [empty, 'an empty file'],
    ];
    for (const [data, what] of cases) {
      expect(await runCli(['check', '--data', data]), data).toEqual({
        code: 1,
        stdout: '',
        stderr: `va-sandbox: ${data} is not a database (${what})\n`,
      });
    }
    // A start takes a new database nowhere but in a file: a directory is refused the same way (an empty file is a new database).
    const start = await runCli(['start', '--port', '0', '--data', folder, '--quiet']);
    expect(start).toMatchObject({ code: 1, stderr: `va-sandbox: ${folder} is not a database (a directory)\n` });
  });
});
