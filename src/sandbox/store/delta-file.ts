import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { crc32 } from 'node:zlib';
import { json, placed, readBytes, WRITE_CUT, type Placement } from './snapshot-file.js';

/** A record as the delta file holds it: `[account, table, id, value]`, the value null when the record is gone. */
export type DeltaRecord = [string, string, string, unknown];

/**
 * A batch's last line: the generation of the fold that wrote it, every account's head (its fields but its tables) then,
 * and the CRC32 of the batch's record lines (`crc`, written by `appendDelta`).
 */
interface BatchEnd {
  generation: number;
  heads: Record<string, Record<string, unknown>>;
  crc: number;
}

/** What the delta file holds: each whole batch after the data file's generation, and the bytes of whole batches. */
export interface Delta {
  batches: (Omit<BatchEnd, 'crc'> & { records: DeltaRecord[] })[];
  length: number;
}

/** Lines are gathered into writes of about this size. */
const CHUNK = 1024 * 1024;

/**
 * Appends a batch to the delta file (`<data file>.delta`): the records a fold took, one a line, then its end
 * (`BatchEnd`), synced. The delta file holds the records written since the data file, so that a fold writes what
 * changed rather than the whole state (see `fileStore`); the index file names each record's place in it. Resolves with
 * those places (a gone record's length -1), the file's length and the CRC32 of all of it (`crc`: of what it held
 * before, `length` bytes). When `cut` says so, it stops at its next piece, cuts the file back and rejects with
 * `WRITE_CUT`; a failed write cuts it back too (a crash leaves a batch without its end, which a start drops).
 * `written` gives a record's JSON as the journal holds it, when it does: copied, not made again.
 */
export async function appendDelta(
  path: string,
  records: DeltaRecord[],
  end: Omit<BatchEnd, 'crc'>,
  at: { length: number; crc: number },
  cut: () => boolean,
  written: (i: number) => Buffer | null = () => null,
): Promise<{ placement: Placement; length: number; crc: number }> {
  const handle = await open(path, existsSync(path) ? 'r+' : 'w');
  const placement: Placement = new Map();
  let position = at.length;
  let crc = at.crc;
  let batchCrc = 0;
  try {
    await handle.truncate(at.length); // what a batch cut short left
    // What is to be written next: text, and the records copied as bytes between it.
    let pieces: Buffer[] = [];
    let text = '';
    let textBytes = 0;
    const put = async () => {
      const bytes = Buffer.concat([...pieces, Buffer.from(text)]);
      pieces = [];
      text = '';
      textBytes = 0;
      crc = crc32(bytes, crc);
      batchCrc = crc32(bytes, batchCrc);
      for (let done = 0; done < bytes.length; ) done += (await handle.write(bytes, done, bytes.length - done, position + done)).bytesWritten;
      position += bytes.length;
    };
    // Each line's `[account,table,` made once a table.
    const heads = new Map<string, string>();
    for (let i = 0; i < records.length; i++) {
      const [account, table, id, value] = records[i]!;
      const tableKey = `${account}\u0000${table}`;
      let head = heads.get(tableKey);
      if (head === undefined) heads.set(tableKey, (head = `${json([account, table]).slice(0, -1)},`));
      const prefix = `${head}${json(id)},`;
      const copied = value === null ? null : written(i);
      const body = copied ?? (value === null ? 'null' : json(value));
      const prefixBytes = Buffer.byteLength(prefix);
      const length = typeof body === 'string' ? Buffer.byteLength(body) : body.length;
      const places = placed(placement, account, table, 0); // a delta file's tables have no byte range
      places.ids.push(id);
      places.offsets.push(position + textBytes + prefixBytes);
      places.lengths.push(value === null ? -1 : length);
      if (typeof body === 'string') text += `${prefix}${body}]\n`;
      else {
        pieces.push(Buffer.from(text + prefix), body);
        text = ']\n';
      }
      textBytes += prefixBytes + length + 2;
      if (textBytes >= CHUNK) {
        if (cut()) throw WRITE_CUT;
        await put();
      }
    }
    await put();
    text = `${JSON.stringify({ ...end, crc: batchCrc })}\n`;
    await put();
    await handle.sync();
  } catch (error) {
    await handle.truncate(at.length).catch(() => {});
    await handle.close();
    throw error;
  }
  await handle.close();
  return { placement, length: position, crc };
}

/** `FileRanges` reads ahead this many bytes at a time. */
const WINDOW = 4 * 1024 * 1024;

/**
 * Byte ranges of a file, read through a window that moves ahead as they are asked in ascending order (the records a
 * fold copies from a journal, mostly written in the order they were made); a range elsewhere is read alone.
 */
export class FileRanges {
  private readonly fd: number;
  private window: Buffer = Buffer.alloc(0);
  private start = 0;

  constructor(path: string) {
    this.fd = openSync(path, 'r');
  }

  /** The bytes at [offset, offset + length), fewer if the file ends before. */
  read(offset: number, length: number): Buffer {
    const end = this.start + this.window.length;
    if (offset >= this.start && offset + length <= end) return this.window.subarray(offset - this.start, offset - this.start + length);
    if (offset >= end && offset < end + WINDOW && length <= WINDOW) {
      this.window = readBytes(this.fd, offset, WINDOW);
      this.start = offset;
      return this.window.subarray(0, length);
    }
    return readBytes(this.fd, offset, length);
  }

  close(): void {
    closeSync(this.fd);
  }
}

/**
 * Reads the delta file's whole batches of generations after `after` (the data file's: older ones it holds already),
 * null when there is none. A batch without its end (a fold cut short by a crash) is dropped; a whole batch whose bytes
 * do not match the CRC32 its end names (the file was damaged after it was written) stops the start, naming the byte
 * to cut at.
 */
export function readDelta(path: string, after: number): Delta | null {
  if (!existsSync(path)) return null;
  const bytes = readFileSync(path);
  const batches: Delta['batches'] = [];
  let records: DeltaRecord[] = [];
  let length = 0;
  let torn = false;
  for (let start = 0, end = bytes.indexOf(10); end >= 0; start = end + 1, end = bytes.indexOf(10, start)) {
    let line: unknown;
    try {
      line = JSON.parse(bytes.toString('utf8', start, end));
    } catch {
      torn = true; // a batch's end may still come: its checksum says
      continue;
    }
    if (Array.isArray(line)) {
      records.push(line as DeltaRecord);
      continue;
    }
    const batch = line as BatchEnd;
    if (torn || crc32(bytes.subarray(length, start)) !== batch.crc) {
      throw new Error(
        `${path} is damaged in the batch from byte ${length}: it does not match its checksum. Nothing was changed. ` +
          `Keep a copy of the file; to start with what comes before the damage, cut it there: truncate -s ${length} '${path}'`,
      );
    }
    if (batch.generation > after) batches.push({ generation: batch.generation, heads: batch.heads, records });
    records = [];
    length = end + 1;
  }
  return { batches, length };
}
