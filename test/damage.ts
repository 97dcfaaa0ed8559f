import { readFileSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { startServer } from '../src/sandbox/http/server.js';
import { api, eventually, freePort, PAYMENT } from './helpers.js';

/** Damaged databases for the tests of a start (`faults-damage.test.ts`) and of `check` (`check-damage.test.ts`). */

export const KEY = 'sk_damage';
const PAGE = 4096;

/** A database written by a server that then stopped: payments, a client, and callbacks a closed port refused (to retry at start). */
export async function written(data: string): Promise<void> {
  const server = await startServer({ port: 0, host: '127.0.0.1', data });
  const client = api(server.url, KEY);
  for (let i = 0; i < 20; i++)
    await client.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 100 + i, externalReference: `r${i}` });
  const port = await freePort(); // nothing listens there
  for (let i = 0; i < 3; i++)
    await client.data('POST', '/api/v1/va-payments', {
      ...PAYMENT,
      amount: 500 + i,
      callbackUrl: `http://127.0.0.1:${port}/hook`,
    });
  await client.data('POST', '/api/v1/clients', { paymentHubId: 1, name: 'Ana', taxId: '20-1' });
  await eventually(
    async () => (await client.list('/sandbox/v1/deliveries?status=retrying')).pagination.total === 3,
    10_000,
    'the first attempts',
  );
  await server.close();
}

export interface Flip {
  what: string;
  at: number;
  mask: number;
}

/** The header's fields (page size, format versions, page count, freelist, schema cookie and format, user version…), each flipped twice. */
export const HEADER: Flip[] = [16, 18, 19, 21, 28, 32, 40, 44, 52, 56, 60, 63, 68].flatMap((at) =>
  [0x02, 0x80].map((mask) => ({ what: `header byte ${at}`, at, mask })),
);

/**
 * Flips in the pages of the file's b-trees: of each table's first leaf, a byte of its page header, of its cell pointers
 * and of its first cell's header (its sizes and rowid); of each index with keys, a byte of its first cell (a key).
 */
export function pageFlips(file: string): Flip[] {
  const bytes = readFileSync(file);
  const db = new DatabaseSync(file, { readOnly: true });
  const pages = db
    .prepare(
      "SELECT name, min(pageno) AS pageno, (SELECT type FROM sqlite_schema s WHERE s.name = d.name) AS type FROM dbstat d WHERE pagetype = 'leaf' AND ncell > 0 GROUP BY name ORDER BY pageno",
    )
    .all() as { name: string; pageno: number; type: string }[];
  db.close();
  return pages.flatMap(({ name, pageno, type }) => {
    const start = (pageno - 1) * PAGE;
    const cells = bytes.readUInt16BE(start + 3);
    const firstCell = start + bytes.readUInt16BE(start + 8);
    const what = `${type} ${name} (page ${pageno})`;
    if (type === 'index') return [{ what: `${what} key`, at: firstCell + 3, mask: 0x04 }];
    return [
      { what: `${what} page header`, at: start + 3, mask: 0x01 }, // the count of cells
      { what: `${what} cell pointer`, at: start + 8 + 2 * (cells - 1) + 1, mask: 0x10 },
      { what: `${what} cell header`, at: firstCell + 1, mask: 0x01 },
    ];
  });
}
