import { describe, expect, it } from 'vitest';
import { idsStartingWith, isShortId, type ListPage, SHORT_ID_SCAN } from '../../src/client/short-id.js';

/** A list of `total` records, newest first, whose ids are `n` in hex padded as a UUID's first block; counts the pages read. */
function list(total: number) {
  const ids = Array.from({ length: total }, (_, n) => `${n.toString(16).padStart(8, '0')}-0000-4000-8000-000000000000`);
  const read: number[] = [];
  const page: ListPage = async (page, limit) => {
    read.push(page);
    return {
      data: ids.slice((page - 1) * limit, page * limit).map((id) => ({ id })),
      pagination: { totalPages: Math.ceil(total / limit) },
    };
  };
  return { ids, read, page };
}

describe('short ids', () => {
  it('a prefix of 4 to 35 characters is one; a whole UUID, a shorter prefix or other text is not', () => {
    expect(isShortId('abcd1234')).toBe(true);
    expect(isShortId('ABCD')).toBe(true);
    expect(isShortId('abc')).toBe(false);
    expect(isShortId('0c5e1f2a-3b4d-4e6f-8a9b-1c2d3e4f5a6b')).toBe(false);
    expect(isShortId('not-an-id')).toBe(false);
  });

  it('finds the one record a prefix names, and stops at two', async () => {
    const { ids, page } = list(300);
    expect(await idsStartingWith(page, ids[150]!.slice(0, 8))).toEqual([ids[150]]);
    expect(await idsStartingWith(page, '0000000')).toHaveLength(2);
  });

  it(`reads at most the newest ${SHORT_ID_SCAN} records, a page of 100 at a time`, async () => {
    const { ids, read, page } = list(SHORT_ID_SCAN + 500);
    expect(await idsStartingWith(page, ids[SHORT_ID_SCAN + 10]!.slice(0, 8))).toEqual([]);
    expect(read).toEqual(Array.from({ length: SHORT_ID_SCAN / 100 }, (_, n) => n + 1));
  });
});
