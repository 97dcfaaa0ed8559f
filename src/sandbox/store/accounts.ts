/**
 * Accounts' rows (`accounts`: key, head, wake) and what is done to an account whole: a replace (a reset, an import)
 * under a staged id swapped in at the end, the sweep of retired ids' records, a copy of the previous release's accounts.
 */
import type { DatabaseSync as Database } from 'node:sqlite';
import { type AccountState, accountHead, emptyAccountState, normalizeAccount } from '../../core/index.js';
import type { AccountHead } from '../../core/store/repository.js';
import { SLICE_MS } from '../runtime/give-way.js';
import { putRecord, recordsInOrder, writeRecords } from './record-writes.js';
import { checksum, JOURNAL_TABLE, type Sql, TABLE_NAMES } from './records.js';

export type Write = <T>(key: string | null, run: (account: number) => T) => T;

/**
 * Writes an account's new state under a staged id of its own, a slice per group commit (other requests in between),
 * then swaps it in for the key's in one write; the old id is retired. A slice that cannot be stored retires the staged
 * id. (A staged account's row has no wake: nothing of it is due or sent before the swap.)
 */
export async function replaceAccount(
  sql: Sql,
  write: Write,
  save: () => Promise<void>,
  retire: (account: number) => void,
  key: string,
  state: AccountState,
  swapped: (id: number) => void,
) {
  const staged = write(null, () => newAccount(sql, `${key}${STAGED}`, accountHead(state), 0));
  const rows = recordsInOrder(state);
  try {
    for (let at = 0; at < rows.length; ) {
      write(null, () => {
        const until = performance.now() + SLICE_MS;
        for (; at < rows.length && performance.now() < until; at++) putRecord(sql, staged, ...rows[at]!);
      });
      await save();
    }
    write(key, (old) => {
      retire(old);
      sql('UPDATE accounts SET key = ? WHERE id = ?').run(key, staged);
      swapped(staged);
    });
    await save();
  } catch (error) {
    write(null, () => retire(staged));
    throw error;
  }
}

/**
 * Retired account ids (a reset's, an import's, a replace that failed): `retire` deletes the account's row at once, and
 * `sweep` its records after, a slice per turn of the event loop.
 */
export function sweeper(sql: Sql, write: Write) {
  let sweeping = false;
  /** Whether retired ids may be left to sweep (known after a start only by looking): commits do not look otherwise. */
  let left = true;
  let closed = false;
  function sweep(): void {
    if (sweeping || closed || !left) return;
    const retired = sql('SELECT account FROM retired LIMIT 1').get() as { account: number } | undefined;
    left = retired !== undefined;
    if (!retired) return;
    sweeping = true;
    setImmediate(() => {
      sweeping = false;
      if (closed) return;
      write(null, () => {
        let slice = SWEEP_SLICE;
        for (const name of [...Object.values(TABLE_NAMES), JOURNAL_TABLE]) {
          if (slice > 0)
            slice -= Number(
              sql(`DELETE FROM ${name} WHERE seq IN (SELECT seq FROM ${name} WHERE account = ? LIMIT ?)`).run(
                retired.account,
                slice,
              ).changes,
            );
        }
        if (slice > 0) {
          sql('DELETE FROM counts WHERE account = ?').run(retired.account);
          sql('DELETE FROM retired WHERE account = ?').run(retired.account);
        }
      });
    });
  }
  return {
    sweep,
    retire(account: number): void {
      sql('INSERT INTO retired (account) VALUES (?)').run(account);
      sql('DELETE FROM accounts WHERE id = ?').run(account);
      left = true;
    },
    close: () => void (closed = true),
  };
}

/**
 * Each account's id by its key, once read or made (a key that only read has none), and an epoch that a rollback of a
 * group or a replace moves on: what a repository knew of an account's whole orders (`repository`'s `empty`) is then
 * forgotten, every account's at once (rare: a full disk, a reset, an import). The database stays the truth.
 */
export function accountIds(sql: Sql) {
  const ids = new Map<string, number>();
  let epoch = 0;
  return {
    of(key: string): number | null {
      const known = ids.get(key);
      if (known !== undefined) return known;
      const row = sql('SELECT id FROM accounts WHERE key = ?').get(key) as { id: number } | undefined;
      if (row) ids.set(key, row.id);
      return row?.id ?? null;
    },
    epoch: () => epoch,
    set(key: string, id: number): void {
      ids.set(key, id);
      epoch++;
    },
    forget(key: string): void {
      ids.delete(key);
      epoch++;
    },
  };
}

/** How many rows of a retired account a sweep deletes at a time. */
const SWEEP_SLICE = 2000;

/** Marks the key of a staged account: a newline, which no API key (an HTTP header's value) can hold. */
export const STAGED = '\nstaged';

/** The head of an account first written by a record. */
export const NEW_HEAD = JSON.stringify(accountHead(emptyAccountState()));

/** Writes an account whole under a new id (a reset, an import, a migration); its id. */
function writeAccount(sql: Sql, key: string, state: AccountState, sending: 0 | 1): number {
  const normalized = normalizeAccount(state);
  const account = newAccount(sql, key, accountHead(normalized), sending);
  writeRecords(sql, account, normalized);
  return account;
}

/** A new account's row, with its head; its id. */
function newAccount(sql: Sql, key: string, head: AccountHead, sending: 0 | 1): number {
  const text = JSON.stringify(head);
  return Number(
    sql('INSERT INTO accounts (key, head, crc, sending) VALUES (?, ?, ?, ?)').run(key, text, checksum(text), sending)
      .lastInsertRowid,
  );
}

/** Replaces an account's head. */
export function writeHeadOf(sql: Sql, account: number, head: AccountHead): void {
  const text = JSON.stringify(head);
  sql('UPDATE accounts SET head = ?, crc = ? WHERE id = ?').run(text, checksum(text), account);
}

/** Copies whole accounts into the database in one transaction (a migration). */
export function importAll(
  db: Database,
  accounts: Record<string, AccountState>,
  report: (copied: number) => void,
): void {
  const sql = (text: string) => db.prepare(text);
  db.exec('BEGIN');
  try {
    for (const [i, [key, state]] of Object.entries(accounts).entries()) {
      writeAccount(sql, key, state, 1);
      report(i + 1);
    }
    db.exec('COMMIT');
  } catch (error) {
    if (db.isTransaction) db.exec('ROLLBACK');
    throw error;
  }
}
