import { exportAccount, importAccount, importQuery, type Pause } from '../../core/account-export.js';
import { parse } from '../../core/index.js';
import { recordScenario } from '../../core/scenario-record.js';
import type { RouteKit } from './kit.js';

/** How long a large import works at a stretch before it lets other requests in (ms). */
const IMPORT_SLICE_MS = 20;

/** A `Pause` for one import: after each `IMPORT_SLICE_MS` of work, a turn of the event loop for everyone else. */
function giveWay(): Pause {
  let since = performance.now();
  return () => {
    if (performance.now() - since < IMPORT_SLICE_MS) return undefined;
    return new Promise<void>((resolve) =>
      setImmediate(() => {
        since = performance.now();
        resolve();
      }),
    );
  };
}

/** One account's whole state as one JSON document, handed over then replayed elsewhere; or its story as a scenario. */
export function accountExportRoutes({ get, post }: RouteKit): void {
  get('/sandbox/v1/export', (account) => exportAccount(account));
  post('/sandbox/v1/import', (account, body, c) => importAccount(account, body, parse(importQuery, c.req.query(), 'query').dryRun !== undefined, giveWay()));
  get('/sandbox/v1/scenario', (account, c) => recordScenario(account, c.req.query('name') || `Recorded from account …${account.key.slice(-4)}`));
}
