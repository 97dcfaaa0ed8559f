import { mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { Low, Memory } from 'lowdb';
import { DataFile } from 'lowdb/node';
import { emptyState, type SandboxState } from '../core/index.js';

/** Where the server keeps its state: `load` once, then `save` after every acknowledged write. */
export interface Store {
  readonly path: string | null;
  load(): Promise<SandboxState>;
  /** Resolves once the state as it is now is on disk. Calls made during a write share the next one. */
  save(): Promise<void>;
  close(): Promise<void>;
  /** How many times the file was written: concurrent saves share writes. */
  readonly writes: number;
}

export class StoreLockedError extends Error {}

/**
 * lowdb over one JSON file (compact: it is rewritten whole), written atomically by steno (temp file + rename).
 * lowdb is safe with one writer only, so the server takes `<file>.lock` and a second server is refused.
 */
export function fileStore(path: string): Store {
  const file = resolve(path);
  const lock = `${file}.lock`;
  const db = new Low<SandboxState>(new DataFile(file, { parse: JSON.parse, stringify: JSON.stringify }), emptyState());
  let writing: Promise<void> | null = null;
  let next: Promise<void> | null = null;
  let writes = 0;

  const write = (): Promise<void> => {
    writes++;
    writing = db.write().finally(() => {
      writing = null;
    });
    return writing;
  };

  return {
    path: file,
    get writes() {
      return writes;
    },
    async load() {
      mkdirSync(dirname(file), { recursive: true });
      takeLock(lock, file);
      try {
        await db.read();
      } catch (error) {
        releaseLock(lock);
        throw new Error(`cannot read ${file}: ${(error as Error).message}`);
      }
      db.data.accounts ??= {};
      return db.data;
    },
    save() {
      if (next) return next;
      if (!writing) return write();
      // One write is on its way with older state: everything changed since goes in a single next write.
      next = writing.then(
        () => {
          next = null;
          return write();
        },
        () => {
          next = null;
          return write();
        },
      );
      return next;
    },
    async close() {
      while (writing || next) await (next ?? writing);
      releaseLock(lock);
    },
  };
}

export function memoryStore(): Store {
  const db = new Low<SandboxState>(new Memory(), emptyState());
  return {
    path: null,
    writes: 0,
    async load() {
      await db.read();
      return db.data;
    },
    save: () => db.write(),
    close: async () => {},
  };
}

/** The locks this process holds, so a second server in the same process is refused too. */
const held = new Set<string>();

function takeLock(lock: string, file: string): void {
  try {
    writeFileSync(lock, String(process.pid), { flag: 'wx' });
    held.add(lock);
    return;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const owner = Number(readFileSync(lock, 'utf8'));
  if (held.has(lock) || (owner !== process.pid && isAlive(owner))) {
    throw new StoreLockedError(
      `${file} is in use by another va-sandbox server (pid ${owner}); stop it, or start with another --data or --memory`,
    );
  }
  // The owner died without cleaning up (a crash or SIGKILL): the lock is stale, take it over.
  writeFileSync(lock, String(process.pid));
  held.add(lock);
}

function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function releaseLock(lock: string): void {
  held.delete(lock);
  try {
    if (Number(readFileSync(lock, 'utf8')) === process.pid) unlinkSync(lock);
  } catch {
    // Already gone: nothing to release.
  }
}
