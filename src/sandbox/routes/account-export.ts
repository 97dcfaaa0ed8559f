import { exportAccount, importAccount, importQuery } from '../../core/account-export.js';
import { parse } from '../../core/index.js';
import type { RouteKit } from './kit.js';

/** One account's whole state as one JSON document: handed over, then replayed elsewhere. */
export function accountExportRoutes({ get, post }: RouteKit): void {
  get('/sandbox/v1/export', (account) => exportAccount(account));
  post('/sandbox/v1/import', (account, body, c) => importAccount(account, body, parse(importQuery, c.req.query(), 'query').dryRun !== undefined));
}
