import { crc32 } from 'node:zlib';

/**
 * A line of JSON that carries the CRC32 of its own bytes, and stays JSON: `{"k":"<8 hex>",<rest>` where the
 * checksum covers the bytes of <rest> (`"c":[…]}`). Journal lines and the index file's header are written so.
 */
const PREFIX = Buffer.from('{"k":"');
/** The prefix, 8 hex digits and `",`. */
const HEAD = PREFIX.length + 10;

/** A checked line holds the JSON it was made of from this byte on, but for its first, the `{` (see `checkedLine`). */
export const JSON_AT = HEAD - 1;

/** `value` (a JSON object, or its JSON text) as a checked line, with its newline. */
export function checkedLine(value: object | string): Buffer {
  const json = typeof value === 'string' ? value : JSON.stringify(value);
  // One buffer, encoded once: the JSON goes in after the checksum's place, its `{` where the `,` before it goes.
  const line = Buffer.allocUnsafe(HEAD - 1 + Buffer.byteLength(json) + 1);
  line.write(json, HEAD - 1);
  line[line.length - 1] = 0x0a;
  PREFIX.copy(line);
  line.write(`${hex(crc32(line.subarray(HEAD, line.length - 1)))}",`, PREFIX.length, 'latin1');
  return line;
}

/**
 * What a line (without its newline) holds: `checked` when it carries a checksum that matches, `legacy` for plain JSON
 * (as the release before checksums wrote), `damaged` for anything else (a wrong checksum, a line cut short).
 */
export type ReadLine = { kind: 'checked' | 'legacy'; value: unknown } | { kind: 'damaged' };

export function readLine(bytes: Buffer): ReadLine {
  if (bytes.length > HEAD && bytes.subarray(0, PREFIX.length).equals(PREFIX) && bytes[HEAD - 2] === 0x22 && bytes[HEAD - 1] === 0x2c) {
    const rest = bytes.subarray(HEAD);
    if (bytes.toString('latin1', PREFIX.length, HEAD - 2) !== hex(crc32(rest))) return { kind: 'damaged' };
    // The line is JSON as it is (its checksum a member like any other): parsed without a copy, the checksum left out.
    const value = parse(bytes) as { k?: string } | undefined;
    if (value === undefined) return { kind: 'damaged' };
    delete value.k;
    return { kind: 'checked', value };
  }
  const value = parse(bytes);
  return value === undefined ? { kind: 'damaged' } : { kind: 'legacy', value };
}

/** The CRC32 of some bytes, as the 8 hex digits lines carry. */
export const hex = (crc: number): string => crc.toString(16).padStart(8, '0');

function parse(bytes: Buffer): unknown {
  try {
    const value: unknown = JSON.parse(bytes.toString('utf8'));
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}
