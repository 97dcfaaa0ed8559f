import { exportAccount, importAccount, importQuery } from '../../core/account-export/account-export.js';
import { parse } from '../../core/index.js';
import { recordScenario } from '../../core/scenarios/scenario-record.js';
import { giveWay } from '../give-way.js';
import { counted } from '../progress.js';
import type { RouteKit } from './kit.js';

/** One account's whole state as one JSON document, handed over then replayed elsewhere; or its story as a scenario. */
export function accountExportRoutes({ runtime, get, post }: RouteKit): void {
  get('/sandbox/v1/export', (account, _c, beside) => {
    const unreadable: string[] = [];
    const doc = exportAccount(account, unreadable);
    // A damaged database: what could be read, and which records could not, rather than a 500 for the whole account.
    if (unreadable.length > 0) beside.unreadable = unreadable;
    return doc;
  });
  post('/sandbox/v1/import', async (account, body, c) => {
    const dryRun = parse(importQuery, c.req.query(), 'query').dryRun !== undefined;
    const work = runtime.progress.start(account.key, 'import', importSteps(body), 'steps');
    try {
      return await importAccount(account, body, dryRun, counted(giveWay(), work));
    } finally {
      work.end();
    }
  });
  get('/sandbox/v1/scenario', (account, c) => recordScenario(account, c.req.query('name') || `Recorded from account …${account.key.slice(-4)}`));
}

/** How many times an import gives way (`counted`): once per record checked, per check across them, per event stored. */
function importSteps(body: unknown): number {
  const tables = (body as { account?: unknown } | null)?.account;
  if (typeof tables !== 'object' || tables === null) return 0;
  const size = (table: unknown) => (typeof table === 'object' && table !== null ? Object.keys(table).length : 0);
  return Object.values(tables).reduce((sum: number, table) => sum + size(table), 3) + size((tables as { events?: unknown }).events);
}
