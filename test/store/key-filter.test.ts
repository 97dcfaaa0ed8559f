import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { generateCvu } from '../../src/core/cvu.js';
import { seededIds } from '../../src/core/ids.js';
import { KeyFilter } from '../../src/sandbox/store/key-filter.js';

describe('KeyFilter', () => {
  const ids = seededIds(7);
  const keys = [...Array.from({ length: 5_000 }, () => randomUUID()), ...Array.from({ length: 5_000 }, () => generateCvu(ids)), 0, 42, 'expiry:x'];

  it('may have every key it was made of, and what was added, read back from its text the same', () => {
    const added = Array.from({ length: 300 }, () => randomUUID());
    const filter = KeyFilter.parse(KeyFilter.of(keys).with(added).text());
    for (const key of [...keys, ...added]) expect(filter.mayHave(key), String(key)).toBe(true);
    expect(KeyFilter.of(keys).with([])).toBeInstanceOf(KeyFilter);
  });

  it('says a key it was not made of is not there, but for about as many in 2^32 as it holds', () => {
    const filter = KeyFilter.of(keys);
    const others = Array.from({ length: 20_000 }, () => randomUUID());
    // 10,003 hashes in 2^32: about 0.05 of 20,000 other keys collide; 5 allows for chance, and fails a filter that says "maybe" to all.
    expect(others.filter((key) => filter.mayHave(key)).length).toBeLessThan(5);
    expect(KeyFilter.parse(KeyFilter.of([]).text()).mayHave('any')).toBe(false);
  });
});
