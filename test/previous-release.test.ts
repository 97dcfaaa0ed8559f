import {
  appendFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { crc32 } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { TABLES } from '../src/core/records/state.js';
import {
  normalizeState,
  readPreviousRelease,
  type SandboxState,
} from '../src/sandbox/previous-release/previous-release.js';

/**
 * Data sets the previous release's file store wrote, each with `expected.json`: the state that store's load() gave
 * from them (the engine itself is gone; these files carry the truth). See test/data/previous-release/README.md.
 */
const DATA = resolve(import.meta.dirname, 'data', 'previous-release');
const SETS = ['clean', 'crash', 'current-clean', 'current-crash', 'current-delta'];

const tmp = mkdtempSync(join(tmpdir(), 'va-sandbox-previous-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
let copies = 0;

/** A copy of a set's files, as a migration would find them; returns its data file's path. */
function copyOf(set: string): string {
  const dir = join(tmp, `${set}-${copies++}`);
  cpSync(join(DATA, set), dir, { recursive: true });
  rmSync(join(dir, 'expected.json'));
  return join(dir, 'state.json');
}

/** The state as JSON holds it (the tables keyed by callers have no prototype). */
const plain = (value: unknown) => JSON.parse(JSON.stringify(value)) as unknown;
/** What that release loaded, as this one reads it (its invoices in today's shape: `normalizeAccount`). */
const expected = (set: string) =>
  plain(normalizeState(JSON.parse(readFileSync(join(DATA, set, 'expected.json'), 'utf8')) as SandboxState)) as Record<
    string,
    unknown
  >;

/** A journal line with its checksum, as the previous release wrote them: `{"k":"<CRC32 of what follows>",…}`. */
function checked(value: object): string {
  const rest = JSON.stringify(value).slice(1);
  return `{"k":"${crc32(Buffer.from(rest)).toString(16).padStart(8, '0')}",${rest}\n`;
}

/** The error `read` throws: a single line naming `file`. */
function failure(read: () => unknown, file: string): string {
  let message = '';
  try {
    read();
  } catch (error) {
    message = (error as Error).message;
  }
  expect(message, 'an error').not.toBe('');
  expect(message, 'one line').not.toContain('\n');
  expect(message).toContain(file);
  return message;
}

describe('reading a data set of the previous release', () => {
  it.each(SETS)('%s: the state the previous release loaded from it, read whole or a line at a time', (set) => {
    const data = copyOf(set);
    expect(plain(readPreviousRelease(data))).toEqual(expected(set));
    expect(plain(readPreviousRelease(data, { wholeBelow: 0 }))).toEqual(expected(set));
  });

  it('the sets hold what they are meant to: every table, a clean stop, a crash with a journal, a delta file', () => {
    for (const set of SETS.filter((name) => name.startsWith('current-'))) {
      const { accounts } = expected(set) as { accounts: Record<string, Record<string, object>> };
      expect(Object.keys(accounts).sort()).toEqual(['sk_alpha', 'sk_beta']);
      for (const table of TABLES)
        expect(Object.keys(accounts.sk_alpha![table]!).length, `${set} ${table}`).toBeGreaterThan(0);
      expect(accounts.sk_alpha!.forwarding).toBeTruthy();
      expect(accounts.sk_alpha!.faults).toBeTruthy();
    }
    const lines = (set: string, file: string) =>
      readFileSync(join(DATA, set, file), 'utf8')
        .trimEnd()
        .split('\n').length;
    expect(lines('current-clean', 'state.json.journal'), 'a clean stop folds its journal').toBe(1);
    expect(lines('current-crash', 'state.json.journal'), 'a crash leaves its journal').toBeGreaterThan(10);
    expect(lines('current-delta', 'state.json.journal')).toBeGreaterThan(1);
    expect(existsSync(join(DATA, 'current-delta', 'state.json.delta'))).toBe(true);
  });

  it('null where there is no data set, or only a journal that holds no change', () => {
    const dir = join(tmp, 'empty');
    mkdirSync(dir);
    expect(readPreviousRelease(join(dir, 'state.json'))).toBeNull();
    writeFileSync(join(dir, 'state.json.journal.next'), checked({ generation: 1 }));
    expect(readPreviousRelease(join(dir, 'state.json'))).toBeNull();
  });

  it('drops a torn last journal line, and a save whose last line is missing; applies every whole line', () => {
    for (const set of ['crash', 'current-crash', 'current-delta']) {
      const data = copyOf(set);
      const journal = readFileSync(`${data}.journal`);
      const last = journal.subarray(journal.lastIndexOf(10, journal.length - 2) + 1);
      appendFileSync(`${data}.journal`, last.subarray(0, last.length >> 1)); // a write a crash cut short
      expect(plain(readPreviousRelease(data)), set).toEqual(expected(set));
    }
    const data = copyOf('current-crash');
    const payment = { id: 'added', status: 'waiting' };
    appendFileSync(`${data}.journal`, checked({ c: [['sk_beta', 'vaPayments', 'added', payment, 1]], more: true }));
    expect(plain(readPreviousRelease(data)), 'a save of several lines without its last').toEqual(
      expected('current-crash'),
    );
    appendFileSync(`${data}.journal`, checked({ c: [['sk_beta', 'header', null, { clockOffsetMs: 5 }]] }));
    const state = readPreviousRelease(data)!;
    expect(state.accounts.sk_beta!.vaPayments.added).toEqual(payment);
    expect(state.accounts.sk_beta!.clockOffsetMs).toBe(5);
  });

  it('applies the next journal of a fold cut short, skips a journal the files were folded from', () => {
    const data = copyOf('current-crash');
    const generation = Number(/"generation":(\d+)/.exec(readFileSync(data, 'utf8'))![1]);
    const save = checked({ c: [['sk_alpha', 'header', null, { clockOffsetMs: 7 }]] });
    writeFileSync(`${data}.journal.next`, checked({ generation: generation + 1 }) + save);
    const state = readPreviousRelease(data)!;
    expect(state.accounts.sk_alpha!.clockOffsetMs).toBe(7);
    expect(
      plain({
        ...state,
        accounts: { ...state.accounts, sk_alpha: { ...state.accounts.sk_alpha, clockOffsetMs: 61_000 } },
      }),
    ).toEqual(expected('current-crash'));
    writeFileSync(`${data}.journal.next`, checked({ generation: generation + 2 }) + save);
    expect(failure(() => readPreviousRelease(data), `${data}.journal.next`)).toMatch(/a file is missing/);

    // The data file of the next generation (a fold that put it in place, a crash before the journals' swap): the
    // journal it was folded from is not applied again, the next one is.
    const folded = copyOf('current-crash');
    const bare = copyOf('current-crash');
    rmSync(`${bare}.journal`);
    writeFileSync(
      folded,
      readFileSync(folded, 'utf8').replace(`"generation":${generation},`, `"generation":${generation + 1},`),
    );
    expect(plain(readPreviousRelease(folded))).toEqual(plain(readPreviousRelease(bare)));
    expect(plain(readPreviousRelease(bare))).not.toEqual(expected('current-crash'));
    writeFileSync(`${folded}.journal.next`, checked({ generation: generation + 1 }) + save);
    expect(readPreviousRelease(folded)!.accounts.sk_alpha!.clockOffsetMs).toBe(7);
  });

  it('refuses a journal damaged before its last line, naming the file and the byte', () => {
    for (const set of ['current-crash', 'crash']) {
      const data = copyOf(set);
      const bytes = readFileSync(`${data}.journal`);
      const second = bytes.indexOf(10) + 1;
      bytes[bytes.indexOf('"sk_', second) + 2] = 0x78; // the account's key, in the second line (the first save)
      writeFileSync(`${data}.journal`, bytes);
      if (set === 'crash') {
        // Plain lines (0.1.0) carry no checksum: a change that keeps them JSON is read as written, as that release read it.
        expect(plain(readPreviousRelease(data))).not.toEqual(expected(set));
        bytes[second] = 0x5b; // `[`: no longer JSON
        writeFileSync(`${data}.journal`, bytes);
      }
      expect(failure(() => readPreviousRelease(data), `${data}.journal`)).toMatch(
        new RegExp(`damaged at byte ${second} \\(line 2\\)`),
      );
    }
  });

  it('refuses a damaged batch of the delta file, and a journal that follows a delta file not there', () => {
    const data = copyOf('current-delta');
    const bytes = readFileSync(`${data}.delta`);
    const at = bytes.indexOf('"amount":') + '"amount":'.length;
    bytes[at] = bytes[at] === 0x39 ? 0x38 : bytes[at]! + 1;
    writeFileSync(`${data}.delta`, bytes);
    expect(failure(() => readPreviousRelease(data), `${data}.delta`)).toMatch(/damaged in the batch from byte 0/);

    const left = copyOf('current-delta');
    rmSync(`${left}.delta`);
    expect(failure(() => readPreviousRelease(left), `${left}.journal`)).toMatch(/a file is missing/);

    // A batch a crash cut short (no end line) is dropped: the journals hold its changes.
    const torn = copyOf('current-delta');
    appendFileSync(`${torn}.delta`, '["sk_alpha","vaPayments","torn",{"id":"torn"}]\n');
    expect(plain(readPreviousRelease(torn))).toEqual(expected('current-delta'));
  });

  it('refuses a data set whose data file is missing or damaged, rather than read it as empty', () => {
    for (const set of ['current-crash', 'crash', 'current-delta']) {
      const data = copyOf(set);
      rmSync(data);
      expect(failure(() => readPreviousRelease(data), data)).toMatch(
        /is missing, but .*state\.json\.(journal|delta) beside it hold changes/,
      );
    }
    const data = copyOf('current-clean');
    const text = readFileSync(data, 'utf8');
    writeFileSync(data, text.slice(0, text.length >> 1));
    failure(() => readPreviousRelease(data), data);
    failure(() => readPreviousRelease(data, { wholeBelow: 0 }), data);
  });
});
