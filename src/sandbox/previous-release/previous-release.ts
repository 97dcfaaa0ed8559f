/**
 * Reads a data set written by the previous release's file store (the data file, its delta file and journals), standing
 * alone, for a start that copies it into the database once. It gives the state that store's full read gave after a
 * clean stop or a crash: the data file, then the delta file's whole batches newer than it, then every whole save of
 * each journal not older than them (a torn last line, or the lines of a save whose last line is missing, dropped). The
 * index file (`<file>.index`) holds only lookups and where records sit: it is not read. Damage that store would refuse
 * (a line or batch failing its checksum with good ones after it, a file missing) throws an Error of one line, naming
 * the file. The files' generation (which journal follows which file) is left out of the state returned.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { crc32 } from 'node:zlib';
import { type AccountState, keyedByCaller, normalizeAccount } from '../../core/records/state.js';

/** Everything the previous release kept, as its data file holds it: one account per API key. */
export interface SandboxState {
  version: 1;
  /** Which journal continues this data file (left out of the state `readPreviousRelease` returns). */
  generation?: number;
  accounts: Record<string, AccountState>;
}

/** Gives a state read from JSON its caller-keyed tables, before any key is looked up or written. */
export function normalizeState(state: SandboxState): SandboxState {
  state.accounts = keyedByCaller(state.accounts ?? {});
  for (const account of Object.values(state.accounts)) normalizeAccount(account);
  return state;
}

/** A journal change: `[account, table | "header" | "all", id, value | null, new?]`; a delta record has no `new`. */
type Change = [string, string, string | null, unknown, 1?];

/** A data file of this size or more is read a line at a time (a string cannot hold a very large one). */
const WHOLE_BELOW = 256 * 1024 * 1024;

/**
 * The state the files at `dataPath` (its `state.json`) hold; null when there are none, or only journals holding no
 * change (a first start that never wrote its data file). `wholeBelow`: see `WHOLE_BELOW`.
 */
export function readPreviousRelease(dataPath: string, { wholeBelow = WHOLE_BELOW } = {}): SandboxState | null {
  const [deltaPath, journalPath, nextPath] = ['.delta', '.journal', '.journal.next'].map(
    (suffix) => dataPath + suffix,
  ) as [string, string, string];
  // Both journals are read (and checked) before either is applied.
  const journals = [readJournal(journalPath), readJournal(nextPath)] as const;
  if (!existsSync(dataPath)) {
    const held = [
      journals[0] && journals[0].saves.length > 0 && journalPath,
      journals[1] && journals[1].saves.length > 0 && nextPath,
    ];
    const beside = [existsSync(deltaPath) && deltaPath, ...held].filter(Boolean);
    if (beside.length === 0) return null;
    throw new Error(
      `${dataPath} is missing, but ${beside.join(' and ')} beside it hold changes made after it: copy the files together`,
    );
  }
  const state = normalizeState(readDataFile(dataPath, wholeBelow));
  for (const batch of readDelta(deltaPath, state.generation ?? 0)) {
    // Each account's head (an account new since made from it), then its records, as journal changes are applied.
    for (const [key, head] of Object.entries(batch.heads))
      apply(state, [key, state.accounts[key] ? 'header' : 'all', null, head]);
    for (const record of batch.records) apply(state, record);
    state.generation = batch.generation;
  }
  const generation = state.generation ?? 0;
  for (const [i, journal] of journals.entries()) {
    // A journal older than the files was folded into them; the next journal (a fold under way) may be one ahead.
    if (journal === null || journal.generation < generation) continue;
    if (journal.generation > generation + i) {
      const path = i === 0 ? journalPath : nextPath;
      throw new Error(
        `${path} follows changes that ${dataPath} and its delta file do not hold (generation ${journal.generation}, they ${generation}): a file is missing`,
      );
    }
    for (const save of journal.saves) for (const change of save) apply(state, change);
  }
  normalizeState(state);
  delete state.generation;
  return state;
}

/** Applies a change: `all` puts an account whole (its head; its records follow) or removes it, `header` its head. */
function apply(state: SandboxState, [key, table, id, value]: Change): void {
  if (table === 'all') {
    if (value === null) delete state.accounts[key];
    else state.accounts[key] = normalizeAccount(value as AccountState);
    return;
  }
  const account = state.accounts[key];
  if (!account) return;
  if (table === 'header') {
    Object.assign(account, value);
    return;
  }
  const records = account[table as keyof AccountState] as Record<string, unknown>;
  if (value === null) delete records[id!];
  else records[id!] = value;
}

/** Each line of `bytes` ending in a newline, with the byte it starts at; the bytes after the last newline too with `tail`. */
function* linesOf(bytes: Buffer, tail = false): Generator<[line: Buffer, start: number]> {
  let start = 0;
  for (let end = bytes.indexOf(10); end >= 0; start = end + 1, end = bytes.indexOf(10, start))
    yield [bytes.subarray(start, end), start];
  if (tail && start < bytes.length) yield [bytes.subarray(start), start];
}

/** A JSON object (not an array, not null), or undefined. */
function object(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

const JSON_STRING = '"(?:[^"\\\\]|\\\\.)*"';
const HEAD = /^\{"version":(\d+),"generation":(\d+),"accounts":\{$/;
const ACCOUNT = new RegExp(`^,?(${JSON_STRING}):(\\{.*)$`);
const TABLE = new RegExp(`^,(${JSON_STRING}):\\{$`);

/**
 * The data file: one JSON document, its records one a line (a head line, each account's head, its tables, `}`s). A
 * large one is read a line at a time when laid out so, else (and a small one) parsed whole.
 */
function readDataFile(path: string, wholeBelow: number): SandboxState {
  const damaged = (why: string) => new Error(`${path} is damaged: ${why}`);
  if (statSync(path).size >= wholeBelow) {
    const bytes = readFileSync(path);
    const lines = linesOf(bytes, true);
    const head = HEAD.exec(lines.next().value?.[0].toString() ?? '');
    if (head) {
      const state: SandboxState = { version: Number(head[1]) as 1, generation: Number(head[2]), accounts: {} };
      let account: Record<string, unknown> | null = null;
      let table: Record<string, unknown> | null = null;
      let done = false;
      let n = 1;
      for (const [bytesOfLine] of lines) {
        const line = bytesOfLine.toString();
        n++;
        if (done) {
          if (line !== '') throw damaged(`line ${n} comes after its end`);
        } else if (table) {
          if (line === '}') table = null;
          else {
            // `"id":{…}`, after a table's first with a leading comma.
            const entries = Object.entries(object(`{${line.startsWith(',') ? line.slice(1) : line}}`) ?? {});
            if (entries.length !== 1) throw damaged(`line ${n} is not a record`);
            define(table, ...entries[0]!);
          }
        } else if (account) {
          const match = TABLE.exec(line);
          if (line === '}') account = null;
          else if (match) define(account, JSON.parse(match[1]!) as string, (table = {}));
          else throw damaged(`line ${n} is not a table`);
        } else if (line === '}}') done = true;
        else {
          const match = ACCOUNT.exec(line);
          account = (match && object(`${match[2]}}`)) ?? null;
          if (!account) throw damaged(`line ${n} is not an account`);
          define(state.accounts, JSON.parse(match![1]!) as string, account);
        }
      }
      if (!done) throw damaged('it ends early');
      return state;
    }
  }
  const state = object(readFileSync(path, 'utf8'));
  if (!state) throw damaged('it is not a JSON document of the state');
  return state as unknown as SandboxState;
}

/** Sets a key as an own property, so "__proto__" is a key like any other. */
const define = (target: object, key: string, value: unknown) =>
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });

/**
 * A journal: a header (`{"generation":n}`), then a line per save (a save of many changes takes several, each but its
 * last marked `more`), each line `{"k":"<CRC32 of the bytes after its 16th, 8 hex>","c":[changes],…}`; the release
 * before checksums wrote the same lines as plain JSON. Null when there is none, or not even a whole header.
 */
function readJournal(path: string): { generation: number; saves: Change[][] } | null {
  if (!existsSync(path)) return null;
  const values: Record<string, unknown>[] = [];
  let checked = false;
  let damage: { at: number; line: number } | null = null;
  let n = 0;
  for (const [line, start] of linesOf(readFileSync(path))) {
    n++;
    const sum =
      line.length > 16 && line.toString('latin1', 0, 6) === '{"k":"' && line.toString('latin1', 14, 16) === '",';
    const value =
      sum && line.toString('latin1', 6, 14) !== crc32(line.subarray(16)).toString(16).padStart(8, '0')
        ? undefined
        : object(line.toString());
    // A line failing its checksum (or a plain one after checked ones) is a write cut short, if no good line follows.
    if (value === undefined || (!sum && checked)) {
      damage ??= { at: start, line: n };
      continue;
    }
    if (damage)
      throw new Error(
        `${path} is damaged at byte ${damage.at} (line ${damage.line}): that line does not match its checksum, and good lines follow it`,
      );
    checked ||= sum;
    if (values.length > 0 && !Array.isArray(value.c))
      throw new Error(`${path} is not a journal va-sandbox wrote (line ${n} holds no changes)`);
    values.push(value);
  }
  const [header, ...lines] = values;
  if (header === undefined) return null;
  if (typeof header.generation !== 'number')
    throw new Error(`${path} is not a journal va-sandbox wrote (its first line names no generation)`);
  const saves: Change[][] = [];
  let save: Change[] = [];
  for (const line of lines) {
    save.push(...(line.c as Change[]));
    if (line.more === true) continue;
    saves.push(save);
    save = [];
  }
  return { generation: header.generation, saves };
}

/**
 * The delta file's whole batches of generations after `after` (the data file's). A batch is a line per record
 * (`[account, table, id, value | null]`), then its end: `{"generation","heads","crc"}`, `crc` the CRC32 of its record
 * lines. A batch without its end (a fold a crash cut short) is dropped; one failing its CRC32 throws.
 */
function readDelta(
  path: string,
  after: number,
): { generation: number; heads: Record<string, unknown>; records: Change[] }[] {
  if (!existsSync(path)) return [];
  const bytes = readFileSync(path);
  const batches: ReturnType<typeof readDelta> = [];
  let records: Change[] = [];
  let from = 0;
  let torn = false;
  for (const [bytesOfLine, start] of linesOf(bytes)) {
    let line: unknown;
    try {
      line = JSON.parse(bytesOfLine.toString());
    } catch {
      torn = true; // a batch's end may still come: its checksum says
      continue;
    }
    if (Array.isArray(line)) {
      records.push(line as Change);
      continue;
    }
    const end = line as { generation: number; heads: Record<string, unknown>; crc: number } | null;
    if (torn || end?.crc !== crc32(bytes.subarray(from, start)))
      throw new Error(`${path} is damaged in the batch from byte ${from}: it does not match its checksum`);
    if (end.generation > after) batches.push({ generation: end.generation, heads: end.heads, records });
    records = [];
    from = start + bytesOfLine.length + 1;
  }
  return batches;
}
