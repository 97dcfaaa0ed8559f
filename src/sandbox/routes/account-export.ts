import { exportAccount, importAccount } from '../../core/account-export.js';
import type { RouteKit } from './kit.js';

/** One account's whole state as one JSON document: handed over, then replayed elsewhere. */
export function accountExportRoutes({ get, post }: RouteKit): void {
  get('/sandbox/v1/export', (account) => exportAccount(account));
  post('/sandbox/v1/import', (account, body) => importAccount(account, body));
}
