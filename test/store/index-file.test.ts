import { randomUUID } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { emptyAccountState, mulberry32, TABLES, type SandboxState } from '../../src/core/index.js';
import { readLine } from '../../src/sandbox/store/checked-line.js';
import { appendDelta } from '../../src/sandbox/store/delta-file.js';
import { foldedIndexes, partsOf, readIndexFile, writeIndexSections, type IndexesTaken } from '../../src/sandbox/store/index-file.js';
import { hashOf, LazyMap } from '../../src/sandbox/store/lazy-map.js';
import { KeyFilter } from '../../src/sandbox/store/key-filter.js';
import { bucketed, filterOf, Places } from '../../src/sandbox/store/record-places.js';
import { SnapshotFile } from '../../src/sandbox/store/snapshot-file.js';
import { useTmp } from '../helpers.js';

/** Ids like the API's (36 characters), drawn from a seed. */
function uuids(n: number, seed: number): string[] {
  const next = mulberry32(seed);
  const hex = (length: number) => Array.from({ length }, () => Math.floor(next() * 16).toString(16)).join('');
  return Array.from({ length: n }, () => `${hex(8)}-${hex(4)}-4${hex(3)}-a${hex(3)}-${hex(12)}`);
}

/** A snapshot of one account with 1,500 payments and an event each, written as the file store writes it. */
async function snapshotOf() {
  const payments = uuids(1500, 1);
  const events = uuids(1500, 2);
  const account = emptyAccountState() as unknown as Record<string, Record<string, unknown>>;
  account.hubs = { '1': { id: 1 } };
  payments.forEach((id, i) => (account.vaPayments![id] = { id, amount: i, note: 'ñandú'.repeat(i % 3) }));
  events.forEach((id, i) => (account.events![id] = { id, source: payments[i] }));
  const state = { version: 1, generation: 3, accounts: { k: account } } as unknown as SandboxState;
  const file = join(useTmp(), 'state.json');
  const snapshot = new SnapshotFile(file);
  snapshot.locate = true;
  await snapshot.write(state);
  return { file, snapshot, payments, events };
}

describe('the index file names records by their place', () => {
  it('reads back every index exactly as written, whatever its strings look like, with each id written once', async () => {
    const { file, snapshot, payments, events } = await snapshotOf();
    const [p, e] = [payments, events];
    const odd = ['~', '~~', '~1', '~~~x', '1', ':', `:${p[0]}`, `x:${p[1]}:y`, `a:b:${e[2]}`, `~:${p[3]}`, `${p[4]}:`, 'status:waiting', 'ñ~'];
    const indexes: { maps: Record<string, [string | number, unknown][]>; values: Record<string, unknown> } = {
      maps: {
        bySource: p.map((id, i) => [id, [e[i]!]]),
        order: p.map((id, i) => [id, i]),
        groups: [['status:waiting', [...p]], ['odd', odd]],
      },
      values: { due: { pushed: 2, heap: [[1795518235646, `expiry:${p[7]}`, 0], [1795518235650, `retry:${e[8]}`, 1]] }, odd, named: { tilde: '~a', id: p[5]! } },
    };
    // As `KeptIndexes.stored` hands them over: copies, so what changes after does not reach them.
    const taken = (entries: [string | number, unknown][]) => {
      const map = new LazyMap<string | number, unknown>();
      for (const [key, value] of entries) map.set(key, value);
      return map.taken();
    };
    const maps = Object.fromEntries(Object.entries(indexes.maps).map(([name, entries]) => [name, taken(entries)]));
    const stored = { maps, values: structuredClone(indexes.values) };
    const all: IndexesTaken = [['k', { clockOffsetMs: 5 }, stored]];
    (indexes.maps.groups![0]![1] as string[]).push('made after the snapshot');
    const sections = await writeIndexSections(`${file}.index`, all, snapshot.placement!, () => false);
    await sections.finish(file, 3, snapshot.checksum!, null);
    (indexes.maps.groups![0]![1] as string[]).pop();

    const lazy = readIndexFile(`${file}.index`, file, `${file}.delta`)!;
    try {
      const source = lazy.indexes.get('k')!;
      for (const [name, entries] of Object.entries(indexes.maps)) {
        const map = source.map(name)!;
        const read = Array.from({ length: map.buckets }, (_, bucket) => map.read(bucket)).flat();
        expect(new Map(read), name).toEqual(new Map(entries));
      }
      expect(source.value('due')).toEqual(indexes.values.due);
      expect(source.value('odd')).toEqual(odd);
      expect(source.value('named')).toEqual({ tilde: '~a', id: p[5] });
      expect(lazy.state.accounts.k!.clockOffsetMs).toBe(5);
      expect(lazy.state.accounts.k!.vaPayments[p[9]!]).toEqual({ id: p[9], amount: 9, note: '' });
      expect(lazy.state.accounts.k!.events[e[10]!]).toEqual({ id: e[10], source: p[10] });
    } finally {
      lazy.release();
    }
    // Each id once, in its table's places: the indexes name it in a few characters (but those the odd strings hold).
    const text = readFileSync(`${file}.index`, 'utf8');
    expect(text, 'a string that starts with ~ is written escaped, in an object too').toContain('"tilde":"~~a"');
    for (const id of [...p.slice(10), ...e.slice(10)]) expect(text.split(id).length - 1, id).toBe(1);
    // Besides the filters: a few bytes a key (see `KeyFilter`), for each id of each table and each key of each map.
    const line = readLine(Buffer.from(text.slice(text.lastIndexOf('\n', text.length - 2) + 1, -1)));
    const header = (line.kind === 'checked' ? line.value : null) as {
      accounts: [string, { tables: Record<string, { filter: number[][] }>; maps: Record<string, { filter: number[][] }> }][];
    };
    const [, index] = header.accounts[0]!;
    const filters = [...Object.values(index.tables), ...Object.values(index.maps)].flatMap(({ filter }) => filter).reduce((sum, [, length]) => sum + length!, 0);
    expect(filters).toBeGreaterThan(0);
    expect((Buffer.byteLength(text) - filters) / p.length).toBeLessThan(2 * 39 + 60);
  });
});

describe('an index file that folds add their changes to', () => {
  /** How many deltas each bucket of each map holds after its base. */
  const deltasOf = (index: string): Record<string, number[]> => {
    const bytes = readFileSync(index);
    const line = bytes.subarray(bytes.lastIndexOf(10, bytes.length - 2) + 1).toString();
    const header = JSON.parse(line) as { accounts: [string, { maps: Record<string, { sections: unknown[][] }> }][] };
    return Object.fromEntries(Object.entries(header.accounts[0]![1].maps).map(([name, map]) => [name, map.sections.map((s) => s.length - 1)]));
  };

  it('reads back as the maps are after each fold’s changes; a bucket whose deltas outgrew its base is merged into one', async () => {
    const { file, snapshot, payments: p, events: e } = await snapshotOf();
    const names = ['bySource', 'order', 'groups'] as const;
    // The maps as they are, plain, and as an account holds them over the index file (none before the first fold).
    const plain = {
      bySource: new Map<string | number, unknown>(p.map((id, i) => [id, [e[i]!]])),
      order: new Map<string | number, unknown>(p.map((id, i) => [id, i])),
      groups: new Map<string | number, unknown>([['status:waiting', p.slice(0, 700)], ['~odd', ['~', '~~x', `x:${p[3]}`]], [7, 'number key']]),
    };
    let live = Object.fromEntries(names.map((name) => [name, new LazyMap<string | number, unknown>()]));
    for (const name of names) for (const [key, value] of plain[name]) live[name]!.set(key, structuredClone(value));
    /** A fold: what each map took, written beside the snapshot; then the maps read from what it wrote. */
    const fold = async () => {
      const maps = Object.fromEntries(names.map((name) => [name, live[name]!.taken()]));
      const sections = await writeIndexSections(`${file}.index`, [['k', {}, { maps, values: {} }]], snapshot.placement!, () => false);
      await sections.finish(file, 3, snapshot.checksum!, null);
      const source = foldedIndexes(`${file}.index`, partsOf(snapshot.placement!)).indexes.get('k')!;
      for (const name of names) live[name]!.folded(source.map(name));
    };
    /** The maps a start reads back from the index file, against the plain ones. */
    const readBack = () => {
      const lazy = readIndexFile(`${file}.index`, file, `${file}.delta`)!;
      try {
        const source = lazy.indexes.get('k')!;
        for (const name of names) expect(new Map(new LazyMap(source.map(name)).entries()), name).toEqual(plain[name]);
        return source;
      } finally {
        lazy.release();
      }
    };
    /** The same change to both. */
    const change = (name: (typeof names)[number], key: string | number, how: 'set' | 'append' | 'delete', value?: unknown) => {
      const map = live[name]!;
      if (how === 'delete') {
        map.delete(key);
        plain[name].delete(key);
      } else if (how === 'append') {
        map.append(key, value);
        plain[name].set(key, [...((plain[name].get(key) as unknown[] | undefined) ?? []), value]);
      } else {
        map.set(key, structuredClone(value));
        plain[name].set(key, value);
      }
    };

    await fold();
    expect(Object.values(deltasOf(`${file}.index`)).flat().every((n) => n === 0), 'written whole').toBe(true);
    // A start: the maps over the index file, nothing read.
    const source = readBack();
    live = Object.fromEntries(names.map((name) => [name, new LazyMap(source.map(name))]));
    change('bySource', p[0]!, 'append', e[1]); // a list in a bucket not read
    change('bySource', p[2]!, 'set', [e[5], '~tilde']);
    change('bySource', p[4]!, 'delete');
    change('bySource', 'not a record', 'append', '~first');
    expect(live.groups!.get('status:waiting')).toHaveLength(700); // read, then changed in place and set again
    const waiting = live.groups!.get('status:waiting') as string[];
    waiting.splice(10, 1);
    live.groups!.set('status:waiting', waiting);
    plain.groups.set('status:waiting', [...waiting]);
    change('groups', '~odd', 'append', `~:${p[6]}`);
    change('groups', 7, 'delete');
    change('order', p[8]!, 'set', 10_000);
    await fold();
    const first = deltasOf(`${file}.index`);
    expect(first.bySource!.filter((n) => n === 1).length, 'a delta in each bucket changed').toBeGreaterThan(0);
    readBack();

    change('bySource', p[0]!, 'append', e[2]);
    change('bySource', p[2]!, 'delete');
    await fold();
    const second = deltasOf(`${file}.index`);
    expect(Math.max(...second.bySource!), 'added to the deltas before').toBe(2);
    readBack();

    // Far more bytes of changes than the bases hold: every bucket of the map merged into a new base.
    for (const [i, id] of p.entries()) change('order', id, 'set', { long: 'x'.repeat(40), i });
    await fold();
    expect(deltasOf(`${file}.index`).order!.every((n) => n === 0)).toBe(true);
    readBack();
  });
});

describe('a table’s places', () => {
  it('read the bucket of the id asked, once; name each record by its position; list them in file order', async () => {
    const { snapshot } = await snapshotOf();
    const placement = snapshot.placement!.get('k')!.get('vaPayments')!;
    const split = bucketed(placement);
    const reads: number[] = [];
    const places = new Places(split.length, (bucket) => (reads.push(bucket), split[bucket]!), filterOf(placement));
    expect(split.length).toBe(4);
    const i = 700;
    expect(places.get(placement.ids[i]!)).toEqual([placement.offsets[i], placement.lengths[i]]);
    expect(places.get(placement.ids[i]!)).toEqual([placement.offsets[i], placement.lengths[i]]);
    expect(reads).toHaveLength(1);
    // A new id: its filter says it is not there, no bucket read.
    expect([places.has(randomUUID()), places.get(randomUUID()), places.position(randomUUID())]).toEqual([false, undefined, -1]);
    expect(reads).toHaveLength(1);
    expect([places.has('nope'), places.get('nope')]).toEqual([false, undefined]);
    const positions = placement.ids.map((id) => places.position(id, hashOf(id)));
    expect(new Set(positions).size).toBe(placement.ids.length);
    positions.forEach((position, at) => expect(places.id(position)).toBe(placement.ids[at]));
    expect(places.position('nope')).toBe(-1);
    expect([...places.inOrder()]).toEqual(placement.ids.map((id, at) => [id, placement.offsets[at], placement.lengths[at]]));
    expect(new Set(reads).size).toBe(reads.length); // no bucket read twice
    expect(places.readNext()).toBe(false);
  });

  it('read the buckets not read yet from a newer source once told (`readFrom`), keeping those read', async () => {
    const { snapshot } = await snapshotOf();
    const placement = snapshot.placement!.get('k')!.get('vaPayments')!;
    const split = bucketed(placement);
    const reads: string[] = [];
    const places = new Places(split.length, (bucket) => (reads.push(`old ${bucket}`), split[bucket]!), filterOf(placement));
    const [one, other] = [placement.ids[0]!, placement.ids.find((id) => hashOf(id) % split.length !== hashOf(placement.ids[0]!) % split.length)!];
    places.get(one);
    places.readFrom((bucket) => (reads.push(`new ${bucket}`), split[bucket]!));
    expect([places.has(one), places.has(other)]).toEqual([true, true]);
    expect(reads).toEqual([`old ${hashOf(one) % split.length}`, `new ${hashOf(other) % split.length}`]);
  });

  it('lists records in file order even where an offset and a place do not fit one number', () => {
    const far = 2 ** 51; // times 4 (the places, rounded up to a power of two): 2 ** 53, past what a double holds exactly
    const places = new Places(1, () => ({ ids: ['c', 'a', 'b'], offsets: [far + 30, far + 10, far + 20], lengths: [3, 1, 2] }), KeyFilter.of(['a', 'b', 'c']));
    expect([...places.inOrder()]).toEqual([['a', far + 10, 1], ['b', far + 20, 2], ['c', far + 30, 3]]);
  });
});

describe('the places of the delta file’s records', () => {
  it('each batch a fold appends has places of its own, those before copied as written; a record reads from the latest', async () => {
    const { file, snapshot, payments: p } = await snapshotOf();
    const deltaPath = `${file}.delta`;
    const index = `${file}.index`;
    const none: IndexesTaken = [['k', {}, { maps: {}, values: {} }]];
    // The state as a plain object, to read back against; the index file the snapshot's write came with.
    const plain: Record<string, unknown> = Object.fromEntries(p.map((id, i) => [id, { id, amount: i, note: 'ñandú'.repeat(i % 3) }]));
    let sections = await writeIndexSections(index, none, snapshot.placement!, () => false);
    await sections.finish(file, 3, snapshot.checksum!, null);
    let parts = partsOf(snapshot.placement!);
    let tables = foldedIndexes(index, parts).tables;
    let at = { length: 0, crc: 0 };
    /** A fold that leaves the snapshot as it is: a batch appended, an index file naming it beside the ones before. */
    const fold = async (batch: [string, unknown][]) => {
      for (const [id, value] of batch) if (value === null) delete plain[id];
      else plain[id] = value;
      const appended = await appendDelta(deltaPath, batch.map(([id, value]) => ['k', 'vaPayments', id, value]), { generation: 3, heads: { k: {} } }, at, () => false);
      at = { length: appended.length, crc: appended.crc };
      sections = await writeIndexSections(index, none, new Map(), () => false, { tables, placement: appended.placement });
      const stat = statSync(deltaPath);
      await sections.finish(file, 3, snapshot.checksum!, { ...at, mtimeMs: stat.mtimeMs, ino: stat.ino, ctimeMs: stat.ctimeMs });
      const batchPlaces = appended.placement.get('k')?.get('vaPayments');
      parts = new Map([['k', parts.get('k')!.map((table, t) => ({ ...table, deltas: [...table.deltas, ...(TABLES[t] === 'vaPayments' && batchPlaces ? [Places.of(batchPlaces)] : [])] }))]]);
      tables = foldedIndexes(index, parts).tables;
    };
    /** The delta file's places of the payments as the index file's header names them, and their bytes there. */
    const deltas = () => {
      const bytes = readFileSync(index);
      const header = JSON.parse(bytes.subarray(bytes.lastIndexOf(10, bytes.length - 2) + 1).toString()) as {
        accounts: [string, { tables: Record<string, { deltas: { sections: [number, number][] }[] } > }][];
      };
      return header.accounts[0]![1].tables.vaPayments!.deltas.map(({ sections }) => sections.map(([from, length]) => bytes.toString('utf8', from, from + length)));
    };
    const readBack = () => {
      const lazy = readIndexFile(index, file, deltaPath)!;
      try {
        const table = lazy.state.accounts.k!.vaPayments as Record<string, unknown>;
        for (const id of [p[0]!, p[1]!, p[2]!, p[3]!, 'n1', 'n2', 'n3']) expect(table[id], id).toEqual(plain[id]);
        expect(JSON.stringify(Object.entries(table)), 'every record, in the order first written').toBe(JSON.stringify(Object.entries(plain)));
      } finally {
        lazy.release();
      }
    };

    await fold([['n1', { id: 'n1', note: 'new' }], [p[0]!, { id: p[0], note: 'changed' }], [p[1]!, null], ['n2', { id: 'n2' }]]);
    const first = deltas();
    expect(first).toHaveLength(1);
    readBack();
    await fold([[p[0]!, { id: p[0], note: 'again' }], ['n2', null], ['n3', { id: 'n3' }], ['n1', { id: 'n1', note: 'changed' }], [p[2]!, null]]);
    const second = deltas();
    expect(second, 'a second batch').toHaveLength(2);
    expect(second[0], 'the first as written').toEqual(first[0]);
    readBack();
  });
});
