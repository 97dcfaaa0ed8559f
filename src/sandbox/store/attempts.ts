/**
 * A delivery's attempts, each a row of its own (`delivery_attempts`, keyed by account, delivery and its place): an
 * attempt appends its row, and the delivery's row keeps `attempts: []` in their place and how many are stored
 * (`deliveries.attempts`), so an attempt never rewrites the delivery's history. A read puts them back.
 */
import type { Delivery, TableName } from '../../core/index.js';
import { checksum, objectOf, type Sql } from './records.js';

/** Stores the attempts of a delivery that are not stored yet; the delivery as its row keeps it. */
export function putAttempts(sql: Sql, account: number, id: string, delivery: Delivery): Delivery {
  const stored = (sql('SELECT attempts FROM deliveries WHERE account = ? AND id = ?').get(account, id) as { attempts: number } | undefined)?.attempts ?? 0;
  // Attempts are only ever added; fewer than stored is a record replaced whole (never today), kept exact all the same.
  if (delivery.attempts.length < stored) sql('DELETE FROM delivery_attempts WHERE account = ? AND delivery = ? AND n >= ?').run(account, id, delivery.attempts.length);
  for (let n = stored; n < delivery.attempts.length; n++) {
    const data = JSON.stringify(delivery.attempts[n]);
    sql('INSERT INTO delivery_attempts (account, delivery, n, data, crc) VALUES (?, ?, ?, ?, ?)').run(account, id, n, data, checksum(data));
  }
  return { ...delivery, attempts: [] };
}

/** A record as read, a delivery with its attempts put back (each checked against its `crc`). */
export function withAttempts<T>(sql: Sql, file: string, table: TableName, account: number, record: T): T {
  if (table !== 'deliveries') return record;
  const delivery = record as Delivery;
  const rows = sql('SELECT n, data, crc FROM delivery_attempts WHERE account = ? AND delivery = ? ORDER BY n').all(account, delivery.id) as { n: number; data: string; crc: number }[];
  return { ...delivery, attempts: rows.map((row) => objectOf(file, 'delivery_attempts', `${delivery.id} #${row.n + 1}`, row)) } as T;
}
