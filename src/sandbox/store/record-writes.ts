/**
 * How records are written (`records.ts` says how they are read): each with its columns (`COLUMNS`, then the store's
 * own), a state's records in the order made, and a delivery's attempts a row each.
 */
import { type AccountState, type Delivery, TABLES, type TableName } from '../../core/index.js';
import { COLUMNS } from '../../core/records/index.js';
import { ID_FIELDS, type Key } from '../../core/store/repository.js';
import { checksum, type Sql, TABLE_NAMES } from './records.js';

/**
 * Columns the store keeps for itself beside a table's `COLUMNS`: how many of a delivery's attempts are stored, and its
 * state (none: a delivery written whole holds all of it in its JSON).
 */
const STORE_COLUMNS: Partial<Record<TableName, Record<string, (record: never) => Key>>> = {
  deliveries: { attempts: (delivery: Delivery) => delivery.attempts.length, state: () => null, state_crc: () => null },
};

/** Each table's write, made once: its columns (`COLUMNS`, then the store's own) and its statement's text. */
const WRITES = Object.fromEntries(
  TABLES.map((table) => {
    const columns = Object.entries({ ...COLUMNS[table], ...STORE_COLUMNS[table] }) as [
      string,
      (record: never) => Key,
    ][];
    const names = columns.map(([name]) => name);
    const text =
      `INSERT INTO ${TABLE_NAMES[table]} (account, id, data, crc${names.map((c) => `, ${c}`).join('')}) VALUES (?, ?, ?, ?${names.map(() => ', ?').join('')}) ` +
      `ON CONFLICT (account, id) DO UPDATE SET data = excluded.data, crc = excluded.crc${names.map((c) => `, ${c} = excluded.${c}`).join('')}`;
    return [table, { columns, text }];
  }),
) as Record<TableName, { columns: [string, (record: never) => Key][]; text: string }>;

/** Writes a record with its columns (`COLUMNS`), in place if it is there (it keeps its place in the order made). */
export function putRecord(sql: Sql, account: number, table: TableName, id: string, record: unknown): void {
  const { columns, text } = WRITES[table];
  const field = ID_FIELDS[table];
  const kept = table === 'deliveries' ? putAttempts(sql, account, id, record as Delivery) : record;
  const data = JSON.stringify(field === undefined ? kept : { ...(kept as object), [field]: undefined });
  sql(text).run(account, id, data, checksum(data), ...columns.map(([, compute]) => compute(record as never)));
}

/**
 * A state's records as they are written: by table, each in the order made (`createdAt`, ties as given), since the
 * order written (`seq`) is what lists go by.
 */
export function recordsInOrder(state: AccountState): (readonly [TableName, string, unknown])[] {
  const made = (record: unknown) => (record as { createdAt?: string }).createdAt ?? '';
  return TABLES.flatMap((table) =>
    Object.entries(state[table] as Record<string, unknown>)
      .sort(([, a], [, b]) => (made(a) < made(b) ? -1 : made(a) > made(b) ? 1 : 0))
      .map(([id, record]) => [table, id, record] as const),
  );
}

/** Writes every record of a state under a new account (a reset, an import, a migration). */
export function writeRecords(sql: Sql, account: number, state: AccountState): void {
  for (const row of recordsInOrder(state)) putRecord(sql, account, ...row);
}

/*
 * A delivery's attempts, each a row of its own (`delivery_attempts`, keyed by account, delivery and its place): an
 * attempt appends its row, and the delivery's row keeps `attempts: []` in their place and how many are stored
 * (`deliveries.attempts`), so an attempt never rewrites the delivery's history. A read puts them back.
 */
/** Stores the attempts of a delivery that are not stored yet; the delivery as its row keeps it. */
function putAttempts(sql: Sql, account: number, id: string, delivery: Delivery): Delivery {
  const stored =
    (
      sql('SELECT attempts FROM deliveries WHERE account = ? AND id = ?').get(account, id) as
        | { attempts: number }
        | undefined
    )?.attempts ?? 0;
  // Attempts are only ever added; fewer than stored is a record replaced whole (never today), kept exact all the same.
  if (delivery.attempts.length < stored)
    sql('DELETE FROM delivery_attempts WHERE account = ? AND delivery = ? AND n >= ?').run(
      account,
      id,
      delivery.attempts.length,
    );
  for (let n = stored; n < delivery.attempts.length; n++) insertAttempt(sql, account, id, n, delivery.attempts[n]);
  return { ...delivery, attempts: [] };
}

/** Stores a delivery's attempt (its `n`th, from 0) as a row of its own. */
function insertAttempt(sql: Sql, account: number, delivery: string, n: number, attempt: unknown): void {
  const data = JSON.stringify(attempt);
  sql('INSERT INTO delivery_attempts (account, delivery, n, data, crc) VALUES (?, ?, ?, ?, ?)').run(
    account,
    delivery,
    n,
    data,
    checksum(data),
  );
}

/**
 * Stores a delivery's next attempts from the delivery as read (`before`), as `Repository.appendAttempt` says: a row
 * each, and one update of its state (`state`, with its own checksum) and of the columns that follow it; its JSON and
 * its other columns, with their indexes, are left as they are. Only while the stored delivery is still `before` (as
 * many attempts stored, the same status): false, and nothing written, otherwise.
 */
export function putAttempt(sql: Sql, account: number, before: Delivery, next: Delivery): boolean {
  const state = JSON.stringify({ status: next.status, nextAttemptAt: next.nextAttemptAt, updatedAt: next.updatedAt });
  const columns = COLUMNS.deliveries;
  const changed = sql(
    'UPDATE deliveries SET state = ?, state_crc = ?, status = ?, pending_at = ?, retry_at = ?, attempts = ? WHERE account = ? AND id = ? AND attempts = ? AND status = ?',
  ).run(
    state,
    checksum(state),
    next.status,
    columns.pending_at!(next),
    columns.retry_at!(next),
    next.attempts.length,
    account,
    next.id,
    before.attempts.length,
    before.status,
  );
  if (changed.changes !== 1) return false;
  for (let n = before.attempts.length; n < next.attempts.length; n++)
    insertAttempt(sql, account, next.id, n, next.attempts[n]);
  return true;
}
