import { z } from 'zod';
import type { Pause } from '../../core/account-export/account-export.js';

/** A long piece of work as it stands: what it is, how far it got of how much (in `unit`), and for how long it ran. */
export const progressViewSchema = z
  .object({
    what: z.string().describe('`clock advance`, `clock set`, `import`, `retention sweep`, `migration`'),
    done: z.number().describe('How much of `total` is done'),
    total: z.number(),
    unit: z.string().describe('What `done` and `total` count: `sandbox seconds`, `records`, `accounts`'),
    elapsedMs: z.number().int().describe('Real milliseconds since it started'),
  })
  .nullable()
  .describe('The long work under way in the account (a clock move, an import), or null when there is none');

export type ProgressView = NonNullable<z.output<typeof progressViewSchema>>;

/** One piece of work: `report(done)` as it goes (with `total` once it is known), `end()` once it is over (however it ended). */
export interface Work {
  report(done: number, total?: number): void;
  end(): void;
}

/** The server's own work (a migration, a retention sweep over every account), not any account's. */
export const SERVER = '';

/**
 * What long work is under way, by account key (`SERVER`: the server's own): `GET /sandbox/v1/progress` reads an
 * account's, which the CLI polls while a long request runs; `va-sandbox start` is told of the server's own (`onServerWork`).
 */
export function progressBoard(onServerWork: (view: ProgressView | null) => void = () => {}) {
  const works = new Map<string, { what: string; done: number; total: number; unit: string; started: number }>();
  const viewOf = (key: string): ProgressView | null => {
    const work = works.get(key);
    return work
      ? {
          what: work.what,
          done: work.done,
          total: work.total,
          unit: work.unit,
          elapsedMs: Math.round(performance.now() - work.started),
        }
      : null;
  };
  return {
    start(key: string, what: string, total: number, unit: string): Work {
      const work = { what, done: 0, total, unit, started: performance.now() };
      works.set(key, work);
      if (key === SERVER) onServerWork(viewOf(key));
      return {
        report(done, total = work.total) {
          work.total = total;
          work.done = Math.min(done, total);
          if (key === SERVER) onServerWork(viewOf(key));
        },
        end() {
          if (works.get(key) !== work) return;
          works.delete(key);
          if (key === SERVER) onServerWork(null);
        },
      };
    },
    of: viewOf,
  };
}

export type ProgressBoard = ReturnType<typeof progressBoard>;

/** A `Pause` that also counts how many times it was reached: one step of work each. */
export function counted(pause: Pause, work: Work): Pause {
  let done = 0;
  return () => {
    work.report(++done);
    return pause();
  };
}
