/**
 * The request journal's rows (`requests`, migration 0004): every `/api/v1` request of an account, written a turn of
 * the event loop at a time into a group commit (one insert each, one commit for them all), after the request is over:
 * so a key that only read is not yet an account when its request lets it go, and leaves memory at once. Each account
 * written is then held to its bound, one statement per account.
 */
import { NEW_HEAD } from './accounts.js';
import { checksum, JOURNAL_TABLE, type Sql } from './records.js';

/** A journaled request as stored: its small fields as JSON (`data`), the bodies as text. */
export interface JournalRow {
  id: string;
  /** The account's clock when it came, ms. */
  at: number;
  method: string;
  path: string;
  /** Null when no answer was sent (an API fault that closed the connection). */
  status: number | null;
  data: string;
  requestBody: string | null;
  responseBody: string | null;
}

/** What a page of the journal is filtered by; `path` is a pattern's test. */
interface JournalFilter {
  method?: string;
  status?: number;
  /** The account's clock, ms: requests that came at or after it. */
  since?: number;
  path?: (path: string) => boolean;
}

export interface JournalStore {
  /** Whether it keeps anything (`--journal 0` keeps none): a request then costs it nothing at all. */
  readonly on: boolean;
  /** Keeps a request: written at the end of the turn (its account's row made if it has none); nothing with a bound of 0. */
  record(key: string, row: JournalRow): void;
  /** A page, newest first, and how many match. */
  page(key: string, filter: JournalFilter, skip: number, limit: number): { rows: JournalRow[]; total: number };
  get(key: string, id: string): JournalRow | undefined;
  /** Removes every request of the account; how many there were. */
  clear(key: string): number;
  /** Retention: removes the requests that came before `before` (the account's clock, ms). */
  prune(key: string, before: number): void;
}

const COLUMNS = 'id, at, method, path, status, data, request_body AS requestBody, response_body AS responseBody';

/**
 * The journal over a store's connection: `write` runs in the open group; `keep` is the bound. An account's id is read
 * by its key each time, not cached: a group rolled back may take the row it made with it.
 */
export function journalRows(sql: Sql, write: <T>(run: () => T) => T, keep: number): JournalStore {
  /** The requests of this turn, not written yet. */
  let pending: [string, JournalRow][] = [];
  function flush(): void {
    if (pending.length === 0) return;
    const rows = pending;
    pending = [];
    write(() => insertRows(sql, rows, keep));
  }
  /** A group that cannot be stored (a full disk) refuses its writes, these too: the store's log said why. */
  const flushQuietly = () => {
    try {
      flush();
    } catch {
      // lost with the group, as the requests that were refused
    }
  };
  return {
    on: keep > 0,
    record(key, row) {
      if (keep === 0) return;
      if (pending.length === 0) setImmediate(flushQuietly);
      pending.push([key, row]);
    },
    page(key, filter, skip, limit) {
      flush();
      const account = idOf(sql, key);
      return account === null ? { rows: [], total: 0 } : pageOf(sql, account, filter, skip, limit);
    },
    get(key, id) {
      flush();
      const account = idOf(sql, key);
      return account === null
        ? undefined
        : (sql(`SELECT ${COLUMNS} FROM ${JOURNAL_TABLE} WHERE account = ? AND id = ?`).get(account, id) as
            | JournalRow
            | undefined);
    },
    clear(key) {
      flush();
      const account = idOf(sql, key);
      return account === null
        ? 0
        : write(() => Number(sql(`DELETE FROM ${JOURNAL_TABLE} WHERE account = ?`).run(account).changes));
    },
    prune(key, before) {
      flush();
      const account = idOf(sql, key);
      if (account !== null)
        write(() => sql(`DELETE FROM ${JOURNAL_TABLE} WHERE account = ? AND at < ?`).run(account, before));
    },
  };
}

/** An account's id by its key, or null while it has none. */
const idOf = (sql: Sql, key: string) =>
  (sql('SELECT id FROM accounts WHERE key = ?').get(key) as { id: number } | undefined)?.id ?? null;

/** The key's account row, made with a new head if it has none (a key that only read has none); its id. */
function ensure(sql: Sql, key: string): number {
  sql('INSERT INTO accounts (key, head, crc) VALUES (?, ?, ?) ON CONFLICT (key) DO NOTHING').run(
    key,
    NEW_HEAD,
    checksum(NEW_HEAD),
  );
  return idOf(sql, key)!;
}

/** Writes a turn's requests (in the open group), then holds each account written to its bound (`keep`). */
function insertRows(sql: Sql, rows: [string, JournalRow][], keep: number): void {
  const insert = () =>
    sql(
      `INSERT INTO ${JOURNAL_TABLE} (id, at, method, path, status, data, request_body, response_body, account) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
  const written = new Set<number>();
  for (const [key, row] of rows) {
    const account = ensure(sql, key);
    insert().run(
      row.id,
      row.at,
      row.method,
      row.path,
      row.status,
      row.data,
      row.requestBody,
      row.responseBody,
      account,
    );
    written.add(account);
  }
  // Each account keeps its newest `keep`: the oldest past it go, in one statement.
  for (const account of written) {
    const over = count(sql, account) - keep;
    if (over > 0)
      sql(
        `DELETE FROM ${JOURNAL_TABLE} WHERE seq IN (SELECT seq FROM ${JOURNAL_TABLE} WHERE account = ? ORDER BY seq LIMIT ?)`,
      ).run(account, over);
  }
}

/** A page of an account's requests, newest first, and how many match. */
function pageOf(
  sql: Sql,
  account: number,
  filter: JournalFilter,
  skip: number,
  limit: number,
): { rows: JournalRow[]; total: number } {
  const [where, values] = conditions(account, filter);
  if (where.length === 1 && !filter.path) {
    const rows = sql(
      `SELECT ${COLUMNS} FROM ${JOURNAL_TABLE} WHERE account = ? ORDER BY seq DESC LIMIT ? OFFSET ?`,
    ).all(account, limit, skip);
    return { rows: rows as unknown as JournalRow[], total: count(sql, account) };
  }
  // At most the bound's rows of one account: read by their path, filtered, then only the page read whole.
  const matching = (
    sql(`SELECT seq, path FROM ${JOURNAL_TABLE} WHERE ${where.join(' AND ')} ORDER BY seq DESC`).all(...values) as {
      seq: number;
      path: string;
    }[]
  ).filter((row) => !filter.path || filter.path(row.path));
  const seqs = matching.slice(skip, skip + limit).map((row) => row.seq);
  const rows =
    seqs.length === 0
      ? []
      : sql(
          `SELECT ${COLUMNS} FROM ${JOURNAL_TABLE} WHERE seq IN (${seqs.map(() => '?').join(', ')}) ORDER BY seq DESC`,
        ).all(...seqs);
  return { rows: rows as unknown as JournalRow[], total: matching.length };
}

/** How many requests an account's journal holds (`counts`, kept by the table's triggers). */
const count = (sql: Sql, account: number) =>
  (sql("SELECT n FROM counts WHERE account = ? AND list = 'requests'").get(account) as { n: number } | undefined)?.n ??
  0;

/** A filter's conditions (all but the path's) as SQL, and their values. */
function conditions(account: number, filter: JournalFilter): [string[], (string | number)[]] {
  const where = ['account = ?'];
  const values: (string | number)[] = [account];
  if (filter.method !== undefined) where.push('method = ?') && values.push(filter.method);
  if (filter.status !== undefined) where.push('status = ?') && values.push(filter.status);
  if (filter.since !== undefined) where.push('at >= ?') && values.push(filter.since);
  return [where, values];
}
