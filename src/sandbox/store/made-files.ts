import { existsSync, rmSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/**
 * What opening a database at `path` would make that is not there now: the file (with its WAL and shared memory) and
 * the folders it goes in. `remove()` takes them away again, for a start that fails after opening it (its port taken),
 * so a failed start leaves nothing behind. Call it once the store is closed (its lock file is gone then).
 */
export function filesMadeFor(path: string): { remove(): void } {
  const file = resolve(path);
  let folder: string | null = null;
  for (let at = dirname(file); !existsSync(at); at = dirname(at)) folder = at;
  const fileIsNew = !existsSync(file);
  return {
    remove() {
      if (folder) return rmSync(folder, { recursive: true, force: true });
      if (fileIsNew) for (const made of [file, `${file}-wal`, `${file}-shm`]) rmSync(made, { force: true });
    },
  };
}
