import { closeSync, fstatSync, openSync, readFileSync, rmSync, statSync, unlinkSync, writeSync } from 'node:fs';

/** The lock file, held open until released. */
export interface Lock {
  release(): void;
}

/** The locks this process holds, so a second server in the same process is refused too. */
const held = new Set<string>();

/**
 * Takes `<database>.lock` for this process, holding it open, with its pid inside: a second server on the same database
 * is refused (`refuse`, with one line naming the lock file); a lock whose owner died (a crash or SIGKILL) is stale and
 * taken over, which the log says, naming the lock file.
 */
export function takeLock(
  lock: string,
  file: string,
  refuse: (message: string) => Error,
  log: (line: string) => void,
): Lock {
  let fd = create(lock);
  if (fd < 0) {
    const owner = Number(readFileSync(lock, 'utf8'));
    if (held.has(lock) || (owner !== process.pid && isAlive(owner))) {
      throw refuse(
        `${file} is in use by another va-sandbox server (pid ${owner}, lock file ${lock}); stop it, or start with another --data or --memory`,
      );
    }
    log(`took over the lock file ${lock}, left by a va-sandbox server that is no longer running (pid ${owner})`);
    rmSync(lock, { force: true });
    fd = create(lock);
    if (fd < 0)
      throw refuse(
        `${file} was just taken by another va-sandbox server (lock file ${lock}); stop it, or start with another --data`,
      );
  }
  held.add(lock);
  const { ino, dev } = fstatSync(fd);
  // Removed only if it is still the file this server made (someone may have removed it and started another).
  const ours = () => {
    const now = statSync(lock, { throwIfNoEntry: false });
    return now?.ino === ino && now.dev === dev;
  };
  return {
    release() {
      held.delete(lock);
      if (ours()) unlinkSync(lock);
      closeSync(fd);
    },
  };
}

/** Creates the lock file with this process's id, held open; -1 if it exists. */
function create(lock: string): number {
  let fd: number;
  try {
    fd = openSync(lock, 'wx');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return -1;
    throw error;
  }
  writeSync(fd, String(process.pid));
  return fd;
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
