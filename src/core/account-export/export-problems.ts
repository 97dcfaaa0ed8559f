/** What the checks of an account export share: a problem by path, the file's records, whether it holds a record. */
import type { z } from 'zod';
import type { exportedAccount } from './export-records.js';

export type Records = z.output<typeof exportedAccount>;
export type Problem = { path: (string | number)[]; message: string };
/** Whether the file holds a record of `table` under `key`, whether or not it passed its own schema. */
export type Known = (table: keyof Records, key: string) => boolean;
