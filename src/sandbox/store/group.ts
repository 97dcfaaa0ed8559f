/**
 * Group commit: each write of the core goes at once into the open transaction, which the writes of one turn of the
 * event loop share; `save` resolves once it is committed, so nothing is answered before it is stored. A write or commit
 * that fails (a full disk) rolls the group back whole, and every write and save of the group is refused with
 * `INSUFFICIENT_STORAGE`; writes succeed again as soon as there is room, with no restart. Reads wait for the open group
 * to end (`committed`): they never see its writes before they are stored.
 */
import type { DatabaseSync as Database } from 'node:sqlite';
import { SandboxError } from '../../core/index.js';

/** A group of writes sharing one transaction, and the reads waiting for it to end. */
interface Group {
  promise: Promise<void>;
  failed: SandboxError | null;
  reads: (() => void)[];
}

/** What the store does at the ends of a group: before its COMMIT (its last writes), and after it, stored or undone. */
export interface GroupEnds {
  committing(): void;
  ended(stored: boolean): void;
}

export interface Groups {
  /**
   * Runs a write in the open group's transaction, opened at the group's first write and committed once the turn of
   * the event loop is over. A write that fails fails the group: it is rolled back at once, and that write and every
   * later one of the group are refused with `INSUFFICIENT_STORAGE`.
   */
  write<T>(run: () => T): T;
  /** Resolves once every write so far is committed; rejects with `INSUFFICIENT_STORAGE` if it could not be. */
  save(): Promise<void>;
  /** Runs a read at once when no group is open, else right after the open group ends. */
  committed<T>(read: () => T): Promise<T>;
}

export function groupCommit(db: Database, path: string | null, log: (line: string) => void, ends: GroupEnds): Groups {
  let group: Group | null = null;
  /** Whether the last transaction failed (the log says when writes are refused, and when they are stored again). */
  let refusing = false;

  function begin(): Group {
    db.exec('BEGIN');
    const { promise, settle } = settled();
    const current: Group = { promise, failed: null, reads: [] };
    group = current;
    setImmediate(() => {
      settle(commit(current));
      // A read may write (a hub made on first use): the reads after it then wait for that write's group.
      for (const read of current.reads) {
        if (group) group.reads.push(read);
        else read();
      }
    });
    return current;
  }

  function fail(current: Group, error: unknown): SandboxError {
    if (db.isTransaction) db.exec('ROLLBACK');
    // The WAL may be what filled the disk: copied into the database and cut to nothing, it gives its room back.
    try {
      db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    } catch {
      // no room for that either: the next write tries again
    }
    current.failed ??= storageError(error);
    if (!refusing) log(`writes to ${path ?? 'memory'} are refused with 507: ${current.failed.message}`);
    refusing = true;
    return current.failed;
  }

  function commit(current: Group): Error | null {
    group = null;
    if (!current.failed) {
      try {
        ends.committing();
        db.exec('COMMIT');
      } catch (error) {
        fail(current, error);
      }
    }
    ends.ended(!current.failed);
    if (current.failed) return current.failed;
    if (refusing) log(`writes to ${path ?? 'memory'} are stored again`);
    refusing = false;
    return null;
  }

  return {
    write(run) {
      const current = group ?? begin();
      if (current.failed) throw current.failed;
      try {
        return run();
      } catch (error) {
        throw fail(current, error);
      }
    },
    save: () => group?.promise ?? Promise.resolve(),
    committed: <T>(read: () => T) =>
      new Promise<T>((resolvePromise, reject) => {
        const run = () => {
          try {
            resolvePromise(read());
          } catch (error) {
            reject(error);
          }
        };
        if (group) group.reads.push(run);
        else run();
      }),
  };
}

/** A group's promise, and what settles it: resolved once its writes are stored, or rejected with why they were not. */
function settled(): { promise: Promise<void>; settle: (error: Error | null) => void } {
  let settle!: (error: Error | null) => void;
  const promise = new Promise<void>(
    (resolvePromise, reject) => (settle = (error) => (error ? reject(error) : resolvePromise())),
  );
  promise.catch(() => {}); // a group nobody waits on (due work) still logs why it failed
  return { promise, settle };
}

/** A failed write as the client is told it: `INSUFFICIENT_STORAGE` (507), naming why. */
function storageError(error: unknown): SandboxError {
  const message = (error as Error).message;
  const why = /full|SQLITE_FULL/i.test(message) ? 'no space left on the disk' : message;
  return new SandboxError(
    'INSUFFICIENT_STORAGE',
    `The write could not be stored (${why}): nothing of it was kept. Writes are taken again once they can be stored.`,
    [`(storage): ${message}`],
  );
}
