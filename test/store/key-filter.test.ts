import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { generateCvu } from '../../src/core/cvu.js';
import { seededIds } from '../../src/core/ids.js';
import { KeyFilter } from '../../src/sandbox/store/key-filter.js';

describe('KeyFilter', () => {
  const ids = seededIds(7);
  const keys = [...Array.from({ length: 5_000 }, () => randomUUID()), ...Array.from({ length: 5_000 }, () => generateCvu(ids)), 0, 42, 'expiry:x'];

  it('may have every key it was made of, and each part added, read back from its text the same, its parts merged past eight', () => {
    let filter = KeyFilter.of(keys);
    const added: string[][] = [];
    for (let fold = 0; fold < 10; fold++) {
      added.push(Array.from({ length: 300 }, () => randomUUID()));
      filter = KeyFilter.parse(filter.with(added.at(-1)!).text());
      expect(filter.text().length, `parts after ${fold + 1} added`).toBe(fold < 7 ? fold + 2 : fold - 6);
    }
    for (const key of [...keys, ...added.flat()]) expect(filter.mayHave(key), String(key)).toBe(true);
    expect(filter.with([])).toBe(filter);
  });

  it('says a key it was not made of is not there, but for about as many in 2^32 as it holds', () => {
    const filter = KeyFilter.parse(KeyFilter.of(keys).text());
    const others = Array.from({ length: 20_000 }, () => randomUUID());
    // 10,003 hashes in 2^32: about 0.05 of 20,000 other keys collide; 5 allows for chance, and fails a filter that says "maybe" to all.
    expect(others.filter((key) => filter.mayHave(key)).length).toBeLessThan(5);
    expect(KeyFilter.parse(KeyFilter.of([]).text()).mayHave('any')).toBe(false);
  });

  it('keeps a few bytes a key: ~2.7 at 100,000 keys, where a hash is 4 (5.3 in base64)', () => {
    for (const n of [1, 2, 3, 1_000, 100_000]) {
      const some = Array.from({ length: n }, (_, i) => `key-${i}`);
      const [text] = KeyFilter.of([...some, some[0]!]).text(); // a key twice: a gap of 0
      const back = KeyFilter.parse([text!]);
      for (const key of some) expect(back.mayHave(key), `${n}: ${key}`).toBe(true);
      if (n === 100_000) expect(text!.length / n).toBeLessThan(3.2);
    }
  });
});
