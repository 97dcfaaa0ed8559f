/** `Storage.rows`: an account's rows of one table read whole, a batch at a time, as a data set lists them. */
import type { TableName } from '../../core/index.js';
import type { Row, Where } from '../../core/store/repository.js';
import { BATCH, conditions } from './query-rows.js';
import {
  recordOf,
  rowColumns,
  type Sql,
  type StoredRow,
  TABLE_NAMES,
  UnreadableRecord,
  withAttempts,
} from './records.js';

type Stored = StoredRow & { seq: number; id: string };

/** Whether an id is an array index (0 to 2³²−2, written as such): a JS object lists those first, by value. */
const isIndex = (id: string): boolean => /^(0|[1-9]\d{0,9})$/.test(id) && Number(id) <= 4294967294;

/**
 * `Storage.rows`: an account's rows of one table, the index ids first (by value), then the rest in the order made, a
 * batch at a time, each batch after the last one read (no statement stays open between them). `account` is read again
 * at each batch: an account replaced whole meanwhile fails the read rather than mixing two.
 */
export function* storedRows<T extends TableName>(
  sql: Sql,
  file: string,
  account: () => number | null,
  table: T,
  where: Where = {},
  unreadable?: string[],
): Generator<[string, Row<T>]> {
  const id = account();
  if (id === null) return;
  const [text, values] = conditions(id, table, where);
  const from = `SELECT seq, id, ${rowColumns(table)} FROM ${TABLE_NAMES[table]} WHERE ${text}`;
  const batch = function* (
    after: string,
    order: string,
    last: (row: Stored) => number,
    keep: (row: Stored) => boolean,
  ) {
    for (let at = -1; ; ) {
      if (account() !== id) throw new Error(`the account was replaced while its ${TABLE_NAMES[table]} were read`);
      const rows = sql(`${from} AND ${after} > ? ORDER BY ${order} LIMIT ${BATCH}`).all(
        ...values,
        at,
      ) as unknown as Stored[];
      yield* rows.filter(keep);
      if (rows.length < BATCH) return;
      at = last(rows.at(-1)!);
    }
  };
  const indices = batch(
    `length(id) <= 10 AND id NOT GLOB '*[^0-9]*' AND CAST(id AS INTEGER)`,
    'CAST(id AS INTEGER)',
    (row) => Number(row.id),
    (row) => isIndex(row.id),
  );
  const rest = batch(
    'seq',
    'seq',
    (row) => row.seq,
    (row) => !isIndex(row.id),
  );
  for (const rows of [indices, rest]) {
    for (const row of rows) {
      const record = readable<Row<T>>(
        () => withAttempts(sql, file, table, id, recordOf<Row<T>>(file, table, row.id, row)),
        unreadable,
        `${TABLE_NAMES[table]} ${row.id}`,
      );
      if (record !== undefined) yield [row.id, record];
    }
  }
}

/** A record read, or undefined when it cannot be and `unreadable` is given: then it is named there. */
function readable<T>(read: () => T, unreadable: string[] | undefined, name: string): T | undefined {
  try {
    return read();
  } catch (error) {
    if (!(error instanceof UnreadableRecord) || !unreadable) throw error;
    unreadable.push(name);
    return undefined;
  }
}
