import { endianness } from 'node:os';
import { hashOf } from './lazy-map.js';

/** The index file keeps hashes little-endian: a big-endian machine swaps their bytes. */
const SWAP = endianness() === 'BE';

/**
 * Which keys a stored map or table may hold: the sorted 32-bit hashes (`hashOf`) of every key written there. A key whose
 * hash is not among them is surely not there, so a key just made (a new payment's id, CVU or alias) is known absent
 * without reading or searching a bucket: at 300,000 payments those reads and searches were a fifth of a create's CPU.
 * A key removed since may stay in: it costs a bucket read, never a wrong answer; so does one new key in ~7,000 at
 * 600,000 keys (as many hashes in 2^32). 4 bytes a key, stored as base64 (see `text`).
 */
export class KeyFilter {
  private constructor(private readonly hashes: Uint32Array) {}

  static of(keys: Iterable<string | number>): KeyFilter {
    return new KeyFilter(Uint32Array.from(keys, hashOf).sort());
  }

  /** Reads back what `text` wrote. */
  static parse(text: string): KeyFilter {
    const bytes = Buffer.from(text, 'base64');
    if (SWAP) bytes.swap32();
    const hashes = new Uint32Array(bytes.length >>> 2);
    new Uint8Array(hashes.buffer).set(bytes.subarray(0, hashes.length * 4));
    return new KeyFilter(hashes);
  }

  /** False when the key is surely not held. */
  mayHave(key: string | number, hash = hashOf(key)): boolean {
    const { hashes } = this;
    let low = 0;
    let high = hashes.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (hashes[mid]! < hash) low = mid + 1;
      else high = mid;
    }
    return low < hashes.length && hashes[low] === hash;
  }

  /** This filter with `keys` added (a merge of two sorted lists: a fold adds its few to hundreds of thousands). */
  with(keys: Iterable<string | number>): KeyFilter {
    const added = KeyFilter.of(keys).hashes;
    if (added.length === 0) return this;
    const { hashes } = this;
    const merged = new Uint32Array(hashes.length + added.length);
    let i = 0;
    let j = 0;
    let n = 0;
    while (i < hashes.length && j < added.length) merged[n++] = hashes[i]! <= added[j]! ? hashes[i++]! : added[j++]!;
    merged.set(hashes.subarray(i), n);
    merged.set(added.subarray(j), n + hashes.length - i);
    return new KeyFilter(merged);
  }

  /** As the index file keeps it: the hashes' bytes, little-endian, in base64. */
  text(): string {
    const bytes = Buffer.from(this.hashes.buffer, this.hashes.byteOffset, this.hashes.byteLength);
    return (SWAP ? Buffer.from(bytes).swap32() : bytes).toString('base64');
  }
}
