import { closeSync, existsSync, openSync, readSync, renameSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { AccountState } from '../../core/index.js';
import { type ProgressBoard, progressBoard, SERVER } from '../runtime/progress.js';
import { readPreviousRelease } from './previous-release.js';

/** The files of a previous release's data set, beside its data file. */
const SUFFIXES = ['', '.journal', '.journal.next', '.delta', '.index'];

/**
 * The previous release's data file that `--data` names or stands beside: the file itself when it is one (its
 * database is then `<name>.db` beside it), else `<name>.json` for `<name>.db`, else `state.json` in its folder; null
 * when there is none.
 */
export function previousDataFile(data: string): string | null {
  const candidates = [data, data.replace(/\.db$/, '.json'), join(dirname(data), 'state.json')];
  return (
    candidates.find((file) => isPreviousRelease(file) || (!existsSync(file) && existsSync(`${file}.journal`))) ?? null
  );
}

/** Whether a file is a previous release's data file: a JSON document (a database starts with "SQLite format 3"). */
function isPreviousRelease(file: string): boolean {
  if (!existsSync(file)) return false;
  const fd = openSync(file, 'r');
  try {
    const first = Buffer.alloc(1);
    return readSync(fd, first, 0, 1, 0) === 1 && first[0] === 0x7b; // {
  } finally {
    closeSync(fd);
  }
}

/**
 * Copies a data set of the previous release (`state.json`, its journal, delta and index files) into a database that
 * holds no account yet, in one transaction, then renames its files `*.migrated`, and says so in one line. A crash
 * before the rename leaves the files as they were: the next start copies them again (the copy was not committed) or
 * only renames them (it was).
 */
export function migratePreviousRelease(
  previous: string,
  database: string,
  isEmpty: () => boolean,
  copy: (accounts: Record<string, AccountState>, report: (copied: number) => void) => void,
  log: (line: string) => void,
  progress: ProgressBoard = progressBoard(),
): void {
  const files = SUFFIXES.map((suffix) => previous + suffix).filter((file) => existsSync(file));
  let copied = 0;
  if (isEmpty()) {
    // Its total is known once the data set is read.
    const work = progress.start(SERVER, 'migration', 0, 'accounts');
    try {
      const state = readPreviousRelease(previous);
      if (state) {
        copied = Object.keys(state.accounts).length;
        work.report(0, copied);
        copy(state.accounts, (n) => work.report(n));
      }
    } finally {
      work.end();
    }
  }
  for (const file of files) renameSync(file, `${file}.migrated`);
  log(
    `copied the previous release's data set ${previous} into ${database} (${copied} accounts); its files are kept as *.migrated`,
  );
}
