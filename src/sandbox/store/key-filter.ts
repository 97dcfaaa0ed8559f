import { hashOf } from './lazy-map.js';

/** A filter keeps up to this many parts (a fold adds one) before they are merged into one. */
const MAX_PARTS = 8;

/**
 * Which keys a stored map or table may hold: the 32-bit hashes (`hashOf`) of every key written there, sorted, in parts
 * (a fold adds a part of the keys it wrote). A key whose hash is in no part is surely not there, so a key just made (a
 * new payment's id, CVU or alias) is known absent without reading or searching a bucket: at 300,000 payments those
 * reads and searches were a fifth of a create's CPU. A key removed since may stay in: it costs a bucket read, never a
 * wrong answer; so does one new key in ~7,000 at 600,000 keys (as many hashes in 2^32). Each part is kept in the index
 * file as `encode` writes it (about 2.7 bytes a key at 100,000 keys), read back when first asked.
 */
export class KeyFilter {
  private constructor(
    private readonly texts: (string | undefined)[],
    private readonly parts: (Uint32Array | undefined)[],
  ) {}

  static of(keys: Iterable<string | number>): KeyFilter {
    return new KeyFilter([undefined], [sortedHashes(keys)]);
  }

  /** Reads back what `text` wrote. */
  static parse(texts: string[]): KeyFilter {
    return new KeyFilter(texts, texts.map(() => undefined));
  }

  /** False when the key is surely not held. */
  mayHave(key: string | number, hash = hashOf(key)): boolean {
    for (let i = 0; i < this.parts.length; i++) if (holds((this.parts[i] ??= decode(this.texts[i]!)), hash)) return true;
    return false;
  }

  /** This filter with a part of `keys` added, or all its parts merged into one once they would be more than `MAX_PARTS`. */
  with(keys: Iterable<string | number>): KeyFilter {
    const added = sortedHashes(keys);
    if (added.length === 0) return this;
    if (this.parts.length < MAX_PARTS) return new KeyFilter([...this.texts, undefined], [...this.parts, added]);
    const all = this.parts.map((part, i) => part ?? decode(this.texts[i]!));
    const merged = new Uint32Array(all.reduce((n, part) => n + part.length, added.length));
    let at = 0;
    for (const part of [...all, added]) merged.set(part, (at += part.length) - part.length);
    return new KeyFilter([undefined], [merged.sort()]);
  }

  /** Each part as the index file keeps it (encoded once). */
  text(): string[] {
    for (let i = 0; i < this.texts.length; i++) this.texts[i] ??= encode(this.parts[i]!);
    return this.texts as string[];
  }
}

function sortedHashes(keys: Iterable<string | number>): Uint32Array {
  // A loop over an array: \`Uint32Array.from\` with a map function took several times as long.
  const list = Array.isArray(keys) ? (keys as (string | number)[]) : [...keys];
  const hashes = new Uint32Array(list.length);
  for (let i = 0; i < list.length; i++) hashes[i] = hashOf(list[i]!);
  return hashes.sort();
}

function holds(hashes: Uint32Array, hash: number): boolean {
  let low = 0;
  let high = hashes.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (hashes[mid]! < hash) low = mid + 1;
    else high = mid;
  }
  return low < hashes.length && hashes[low] === hash;
}

/** The bits of each gap written as they are (`encode`): about log2 of the mean gap between `n` hashes in 2^32. */
const lowBits = (n: number): number => (n === 0 ? 0 : Math.min(24, Math.max(1, Math.floor(Math.log2(2 ** 32 / n)))));

/**
 * Sorted hashes as text: their count (4 bytes, little-endian), then each one's gap from the one before it, Rice-coded
 * (the gap's high bits as that many ones and a zero, its `lowBits` low bits as they are), in base64: about
 * `lowBits` + 2 bits a hash, where a hash is 32.
 */
function encode(hashes: Uint32Array): string {
  const k = lowBits(hashes.length);
  const unit = 2 ** k;
  let bits = 0;
  for (let i = 0, before = 0; i < hashes.length; before = hashes[i++]!) bits += Math.floor((hashes[i]! - before) / unit) + 1 + k;
  // 4 bytes more at the end: the low bits are written (and read) through a 4-byte window.
  const out = Buffer.alloc(4 + Math.ceil(bits / 8) + 4);
  out.writeUInt32LE(hashes.length, 0);
  let at = 32;
  for (let i = 0, before = 0; i < hashes.length; before = hashes[i++]!) {
    const gap = hashes[i]! - before;
    const high = Math.floor(gap / unit);
    for (let n = 0; n < high; n++, at++) out[at >>> 3]! |= 0x80 >>> (at & 7);
    at++;
    // The low bits, placed in a 32-bit word from the current bit on (k + 7 < 32: they fit).
    const word = ((gap - high * unit) << (32 - k - (at & 7))) >>> 0;
    const byte = at >>> 3;
    out[byte]! |= word >>> 24;
    out[byte + 1]! |= (word >>> 16) & 0xff;
    out[byte + 2]! |= (word >>> 8) & 0xff;
    out[byte + 3]! |= word & 0xff;
    at += k;
  }
  return out.toString('base64');
}

function decode(text: string): Uint32Array {
  const bytes = Buffer.from(text, 'base64');
  const hashes = new Uint32Array(bytes.readUInt32LE(0));
  const k = lowBits(hashes.length);
  const unit = 2 ** k;
  let at = 32;
  for (let i = 0, before = 0; i < hashes.length; i++) {
    let high = 0;
    for (; (bytes[at >>> 3]! & (0x80 >>> (at & 7))) !== 0; at++) high++;
    at++;
    const byte = at >>> 3;
    const word = ((bytes[byte]! << 24) | (bytes[byte + 1]! << 16) | (bytes[byte + 2]! << 8) | bytes[byte + 3]!) >>> 0;
    before += high * unit + (((word << (at & 7)) >>> 0) >>> (32 - k));
    hashes[i] = before;
    at += k;
  }
  return hashes;
}
