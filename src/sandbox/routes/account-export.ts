import { exportAccount, importAccount, importQuery } from '../../core/account-export.js';
import { parse } from '../../core/index.js';
import { recordScenario } from '../../core/scenario-record.js';
import { giveWay } from '../give-way.js';
import type { RouteKit } from './kit.js';

/** One account's whole state as one JSON document, handed over then replayed elsewhere; or its story as a scenario. */
export function accountExportRoutes({ get, post }: RouteKit): void {
  get('/sandbox/v1/export', (account, _c, beside) => {
    const unreadable: string[] = [];
    const doc = exportAccount(account, unreadable);
    // A damaged database: what could be read, and which records could not, rather than a 500 for the whole account.
    if (unreadable.length > 0) beside.unreadable = unreadable;
    return doc;
  });
  post('/sandbox/v1/import', (account, body, c) => importAccount(account, body, parse(importQuery, c.req.query(), 'query').dryRun !== undefined, giveWay()));
  get('/sandbox/v1/scenario', (account, c) => recordScenario(account, c.req.query('name') || `Recorded from account …${account.key.slice(-4)}`));
}
