import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { appendDelta, FileRanges, readDelta, type DeltaRecord } from '../../src/sandbox/store/delta-file.js';
import { useTmp } from '../helpers.js';

describe('the delta file', () => {
  it('copies a record’s JSON from where a journal holds it, places it where it copied it, and reads it back', async () => {
    const dir = useTmp();
    const records: DeltaRecord[] = Array.from({ length: 50 }, (_, i) => ['k', 'vaPayments', `p${i}`, { id: `p${i}`, note: i % 7 === 0 ? 'ñ "q" ]' : 'x'.repeat(i) }]);
    records.push(['k', 'vaPayments', 'gone', null]);
    // A journal holding each record's JSON (those after the first ten written in reverse: read back out of order too).
    const texts = records.map(([, , , value]) => JSON.stringify(value));
    const order = [...texts.keys()].slice(0, 10).concat([...texts.keys()].slice(10).reverse());
    const at: number[] = [];
    let journal = '';
    for (const i of order) {
      at[i] = Buffer.byteLength(journal);
      journal += `${texts[i]}\n`;
    }
    writeFileSync(join(dir, 'journal'), journal);
    const ranges = new FileRanges(join(dir, 'journal'));
    // Every other record copied; the rest made again.
    const written = (i: number) => (i % 2 === 0 ? ranges.read(at[i]!, Buffer.byteLength(texts[i]!)) : null);
    const path = join(dir, 'state.json.delta');
    const end = { generation: 2, heads: { k: { clockOffsetMs: 0 } } };
    const appended = await appendDelta(path, records, end, { length: 0, crc: 0 }, () => false, written);
    ranges.close();

    const bytes = readFileSync(path);
    const places = appended.placement.get('k')!.get('vaPayments')!;
    expect(places.ids).toEqual(records.map(([, , id]) => id));
    for (const [i, [, , , value]] of records.entries()) {
      if (value === null) expect(places.lengths[i]).toBe(-1);
      else expect(JSON.parse(bytes.toString('utf8', places.offsets[i]!, places.offsets[i]! + places.lengths[i]!))).toEqual(value);
    }
    expect(readDelta(path, 1)).toEqual({ batches: [{ ...end, records }], length: bytes.length });
  });

  it('reads ranges of a file ahead through a window, and those behind it or larger alone', () => {
    const path = join(useTmp(), 'bytes');
    const content = Buffer.allocUnsafe(9 * 1024 * 1024);
    for (let i = 0; i < content.length; i++) content[i] = i % 251;
    writeFileSync(path, content);
    const ranges = new FileRanges(path);
    for (const [offset, length] of [[10, 100], [5_000, 7], [1_000, 3], [5 * 1024 * 1024, 5 * 1024 * 1024], [9 * 1024 * 1024 - 5, 10]] as const) {
      expect(ranges.read(offset, length).equals(content.subarray(offset, offset + length)), `${offset}+${length}`).toBe(true);
    }
    ranges.close();
  });
});
