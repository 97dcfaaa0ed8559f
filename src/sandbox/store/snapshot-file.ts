import { closeSync, existsSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { crc32 } from 'node:zlib';
import type { Adapter } from 'lowdb';
import { accountHead, TABLES, type SandboxState } from '../../core/index.js';
import type { TablePlacement } from './record-places.js';

const JSON_STRING = '"(?:[^"\\\\]|\\\\.)*"';
const HEAD = /^\{"version":(\d+),"generation":(\d+),"accounts":\{$/;
const ACCOUNT = new RegExp(`^,?(${JSON_STRING}):(\\{.*)$`);
const TABLE = new RegExp(`^,(${JSON_STRING}):\\{$`);
const RECORD_START = new RegExp(`^,?${JSON_STRING}:`);
/** Lines are gathered into writes of about this size. */
const CHUNK = 1024 * 1024;

/**
 * A lowdb adapter for the snapshot: one JSON document, laid out one record per line. Written a record at a time
 * (never one giant string, so there is no size limit and the event loop gets turns while a large state is
 * written) into a temp file that is synced and renamed over the old one; read back whole while it is small
 * enough to be one string, else a line at a time. The
 * records are replaced whole, never edited in place, so the tables' entries taken when `write` is called are a
 * consistent snapshot however long the writing takes. A file of another layout (edited by hand, say) is read
 * whole as plain JSON.
 */
export class SnapshotFile implements Adapter<SandboxState> {
  /** Set before a write that should say where it put each record: that write's `placement`. */
  locate = false;
  placement: Placement | null = null;
  /** The CRC32 of the file the last write made (the index file keeps it, to know the snapshot it describes). */
  checksum: number | null = null;
  /** Set to cut a write under way short: it stops at its next piece, removes its part and rejects with `WRITE_CUT`. */
  cut = false;
  /**
   * Run once the temp file is written and synced, its `placement` and `checksum` set, before it is renamed over the
   * data file; if it rejects, the temp file is removed and the write rejects too (the index file's sections are
   * written there, so a stop can still cut the fold short).
   */
  beforeRename: (() => Promise<void>) | null = null;

  /**
   * `wholeBelow`: a file smaller than this is parsed whole, the fastest way while a string can hold it.
   * `entriesOf`: a table's entries when it is not a plain object (see `tableEntries` of the index file).
   */
  constructor(
    private readonly file: string,
    private readonly wholeBelow = 256 * 1024 * 1024,
    private readonly entriesOf: (table: object) => TableEntries | null = () => null,
  ) {}

  async read(): Promise<SandboxState | null> {
    return this.readSync();
  }

  /** Read at once: on start, and to put accounts back as the file holds them after a failed write (nothing may run between). */
  readSync(): SandboxState | null {
    if (!existsSync(this.file)) return null;
    if (statSync(this.file).size < this.wholeBelow) return JSON.parse(readFileSync(this.file, 'utf8')) as SandboxState;
    const reader = new LayoutReader();
    let n = 0;
    for (const line of lines(this.file)) {
      n++;
      if (n === 1 && !HEAD.test(line)) return JSON.parse(readFileSync(this.file, 'utf8')) as SandboxState;
      if (!reader.take(line)) throw new Error(`the data file is damaged at line ${n}`);
    }
    return reader.result();
  }

  async write(state: SandboxState): Promise<void> {
    const lines = layout(state, this.entriesOf); // taken now, before anything is awaited
    const beforeRename = this.beforeRename;
    const placement: Placement | null = this.locate ? new Map() : null;
    this.placement = null;
    this.checksum = null;
    let checksum = 0;
    const temp = `${this.file}.tmp`;
    const handle = await open(temp, 'w');
    const put = async (bytes: Buffer) => {
      checksum = crc32(bytes, checksum);
      // A write may take only part (a disk that just filled): the rest is written, or fails, by the next.
      for (let at = 0; at < bytes.length; ) at += (await handle.write(bytes, at)).bytesWritten;
    };
    try {
      // Text is gathered as a string; records copied as bytes (see `entriesOf`) go in as they are.
      let text = '';
      let parts: Buffer[] = [];
      let size = 0;
      const add = (piece: string | Buffer) => {
        if (typeof piece !== 'string') {
          const before = Buffer.from(text);
          parts.push(before, piece);
          text = '';
          size += before.length + piece.length;
        } else text += piece;
      };
      let position = 0;
      for (const line of lines) {
        if (typeof line === 'string') {
          add(line);
          if (placement) position += Buffer.byteLength(line) + 1;
        } else if ('copied' in line) {
          // The lines as they were, but for the comma before the first, which only a table's first record goes without.
          const { bytes } = line.copied;
          const body = bytes[0] === COMMA ? bytes.subarray(1) : bytes;
          const comma = line.first ? '' : ',';
          add(comma);
          add(body);
          if (placement) position = placeCopied(placement, line, position + comma.length, bytes.length - body.length);
        } else {
          add(line.prefix);
          add(line.value);
          if (placement) position = place(placement, line, position);
        }
        text += '\n';
        if (text.length + size >= CHUNK) {
          if (this.cut) throw WRITE_CUT;
          await put(Buffer.concat([...parts, Buffer.from(text)]));
          text = '';
          parts = [];
          size = 0;
        }
      }
      await put(Buffer.concat([...parts, Buffer.from(text)]));
      await handle.sync();
    } catch (error) {
      // A full disk: the part written is removed, not left to take the room a retry needs.
      await handle.close();
      await rm(temp, { force: true });
      throw error;
    }
    await handle.close();
    this.placement = placement;
    this.checksum = checksum;
    try {
      await beforeRename?.();
    } catch (error) {
      this.placement = null;
      this.checksum = null;
      await rm(temp, { force: true });
      throw error;
    }
    await rename(temp, this.file);
  }
}

/** What a write cut short (`SnapshotFile.cut`) rejects with. */
export const WRITE_CUT = new Error('the snapshot write was cut short');

/**
 * Where a write put each table of each account: the byte range of its record lines (joined inside braces they are
 * the table's JSON object) and each record's id and value's byte offset and length, in file order.
 */
export type Placement = Map<string, Map<string, TablePlacement>>;

/** A table's records for a write: each `[id, record]`, or the lines of some not written since (see `tableEntries`). */
export type TableEntries = Iterable<[string, unknown] | CopiedLines>;

/** Records not written since the last snapshot, as it holds them: lines one after the other, copied as they are. */
export interface CopiedLines {
  /** Their lines, each but the last with its newline (the first with a comma before it unless it was its table's first). */
  bytes: Buffer;
  /** Where `bytes` starts in the last snapshot. */
  at: number;
  /** Each record's id and value's byte offset and length there. */
  ids: string[];
  offsets: number[];
  lengths: number[];
}

/**
 * A record's line (its value as JSON), the end of a table (`}`, id null), or lines copied from the last snapshot
 * (`first`: their table's first records).
 */
type Line =
  | string
  | { account: string; table: string; id: string | null; prefix: string; value: string }
  | { account: string; table: string; copied: CopiedLines; first: boolean };

const COMMA = 0x2c;

/** An account's table in a placement, starting at `position` if new. */
export function placed(placement: Placement, account: string, table: string, position: number): TablePlacement {
  let tables = placement.get(account);
  if (!tables) placement.set(account, (tables = new Map()));
  let at = tables.get(table);
  if (!at) tables.set(table, (at = { start: position, end: position, ids: [], offsets: [], lengths: [] }));
  return at;
}

/** Notes a record line (or a table's end) at `position`; returns the position after it. */
function place(placement: Placement, line: Extract<Line, { prefix: string }>, position: number): number {
  const table = placed(placement, line.account, line.table, position);
  const prefix = Buffer.byteLength(line.prefix);
  if (line.id === null) {
    table.end = position;
    return position + prefix + 1;
  }
  const value = Buffer.byteLength(line.value);
  table.ids.push(line.id);
  table.offsets.push(position + prefix);
  table.lengths.push(value);
  return position + prefix + value + 1;
}

/**
 * Notes copied lines whose bytes, less the `dropped` first (a comma), start at `position`; returns the position after
 * them. Each record moved as much as the first.
 */
function placeCopied(placement: Placement, line: Extract<Line, { copied: CopiedLines }>, position: number, dropped: number): number {
  const table = placed(placement, line.account, line.table, position);
  const { bytes, at, ids, offsets, lengths } = line.copied;
  const moved = position - (at + dropped);
  for (let i = 0; i < ids.length; i++) {
    table.ids.push(ids[i]!);
    table.offsets.push(offsets[i]! + moved);
    table.lengths.push(lengths[i]!);
  }
  return position + bytes.length - dropped + 1;
}

/**
 * The document's lines. The tables' entries are taken at once; each record is turned to JSON as it is reached,
 * or copied as the last snapshot's bytes when it was not written since (a table read through the index file).
 */
function layout(state: SandboxState, entriesOf: (table: object) => TableEntries | null): Iterable<Line> {
  const accounts = Object.entries(state.accounts).map(([key, account]) => ({
    key,
    head: accountHead(account),
    tables: TABLES.map((table) => [table, entriesOf(account[table]) ?? Object.entries(account[table])] as const),
  }));
  return (function* () {
    yield `{"version":${state.version},"generation":${state.generation ?? 0},"accounts":{`;
    for (const [i, { key, head, tables }] of accounts.entries()) {
      yield `${i ? ',' : ''}${json(key)}:${json(head).slice(0, -1)}`;
      for (const [table, records] of tables) {
        yield `,${JSON.stringify(table)}:{`;
        let j = 0;
        for (const entry of records) {
          if (Array.isArray(entry)) yield { account: key, table, id: entry[0], prefix: `${j++ ? ',' : ''}${json(entry[0])}:`, value: json(entry[1]) };
          else {
            yield { account: key, table, copied: entry, first: j === 0 };
            j += entry.ids.length;
          }
        }
        yield { account: key, table, id: null, prefix: '}', value: '' };
      }
      yield '}';
    }
    yield '}}';
  })();
}

/** JSON on one line: U+2028 and U+2029, which JSON leaves raw but readline takes for line ends, are escaped. */
export const json = (value: unknown): string => {
  const text = JSON.stringify(value);
  return LINE_SEPARATORS.test(text) ? text.replace(LINE_SEPARATORS_ALL, (c) => `\\u${c.charCodeAt(0).toString(16)}`) : text;
};
const LINE_SEPARATORS = /[\u2028\u2029]/;
const LINE_SEPARATORS_ALL = /[\u2028\u2029]/g;

/** A table's lines are parsed together, as one JSON object, up to this many characters (a string has a size limit). */
export const TABLE_PARSE = 64 * 1024 * 1024;

/** Reads the lines `layout` writes, one at a time. */
class LayoutReader {
  private state: SandboxState | null = null;
  private account: Record<string, unknown> | null = null;
  private table: { name: string; records: Record<string, unknown> | null; lines: string[]; size: number } | null = null;
  private done = false;

  /** Takes one line; false when it is not where the layout puts it. */
  take(line: string): boolean {
    if (this.done) return line === '';
    if (!this.state) {
      const head = HEAD.exec(line);
      if (!head) return false;
      this.state = { version: Number(head[1]) as 1, generation: Number(head[2]), accounts: {} };
      return true;
    }
    if (this.table) {
      if (line === '}') {
        this.flush();
        this.table = null;
        return true;
      }
      if (!RECORD_START.test(line)) return false;
      // Each line is `"id":{…}` (after the first, with a leading comma): joined, they make one object's members.
      const member = this.table.lines.length === 0 && line.startsWith(',') ? line.slice(1) : line;
      this.table.lines.push(member);
      this.table.size += member.length;
      if (this.table.size > TABLE_PARSE) this.flush();
      return true;
    }
    if (this.account) {
      if (line === '}') return !(this.account = null);
      const table = TABLE.exec(line);
      if (!table) return false;
      this.table = { name: JSON.parse(table[1]!) as string, records: null, lines: [], size: 0 };
      this.account[this.table.name] = {};
      return true;
    }
    if (line === '}}') return (this.done = true);
    const account = ACCOUNT.exec(line);
    if (!account) return false;
    this.account = JSON.parse(`${account[2]}}`) as Record<string, unknown>;
    define(this.state.accounts, JSON.parse(account[1]!) as string, this.account);
    return true;
  }

  /** Parses the gathered lines of the table at once and adds them. */
  private flush(): void {
    const table = this.table!;
    if (table.lines.length === 0) return;
    table.records = this.account![table.name] = addMembers(table.records, table.lines.join(''));
    table.lines = [];
    table.size = 0;
  }

  result(): SandboxState {
    if (!this.done || !this.state) throw new Error('the data file ends early');
    return this.state;
  }
}

/**
 * Adds a piece of a table's record lines (`"id":{…}` members, the first without its leading comma) to the table read
 * so far, or starts it. JSON.parse keeps "__proto__" an own key, and so does `define` for the pieces after the first.
 */
export function addMembers(table: Record<string, unknown> | null, members: string): Record<string, unknown> {
  const records = JSON.parse(`{${members}}`) as Record<string, unknown>;
  if (table === null) return records;
  for (const id of Object.keys(records)) define(table, id, records[id]);
  return table;
}

/** Sets a key as an own property, so "__proto__" is a key like any other. */
export const define = (target: object, key: string, value: unknown) =>
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });

/** The file's lines, read in large chunks and split on newline bytes (no line is ever the whole file). */
function* lines(file: string): Generator<string> {
  const fd = openSync(file, 'r');
  try {
    let carry = Buffer.alloc(0);
    const chunk = Buffer.alloc(16 * 1024 * 1024);
    for (;;) {
      const bytesRead = readSync(fd, chunk, 0, chunk.length, null);
      if (bytesRead === 0) break;
      const bytes = carry.length ? Buffer.concat([carry, chunk.subarray(0, bytesRead)]) : chunk.subarray(0, bytesRead);
      let start = 0;
      for (let end = bytes.indexOf(10); end >= 0; end = bytes.indexOf(10, start)) {
        yield bytes.toString('utf8', start, end);
        start = end + 1;
      }
      carry = Buffer.from(bytes.subarray(start));
    }
    if (carry.length) yield carry.toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** Up to `length` bytes of a file from `start` (fewer at its end). */
export function readBytes(fd: number, start: number, length: number): Buffer {
  const buffer = Buffer.allocUnsafe(length);
  let at = 0;
  for (let n = -1; at < length && n !== 0; at += n) n = readSync(fd, buffer, at, length - at, start + at);
  return buffer.subarray(0, at);
}

/** The CRC32 of a file, or of its first `length` bytes, read in large chunks. */
export function fileChecksum(file: string, length = Infinity): number {
  const fd = openSync(file, 'r');
  try {
    const chunk = Buffer.alloc(16 * 1024 * 1024);
    let checksum = 0;
    for (let at = 0, n = -1; at < length && n !== 0; at += n) {
      n = readSync(fd, chunk, 0, Math.min(chunk.length, length - at), at);
      checksum = crc32(chunk.subarray(0, n), checksum);
    }
    return checksum;
  } finally {
    closeSync(fd);
  }
}
