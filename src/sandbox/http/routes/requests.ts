import { parse, pathMatches, SandboxError } from '../../../core/index.js';
import { listRequestsQuery } from '../../../core/records/request-journal.js';
import { journalItem } from '../journal.js';
import { param, type RouteKit } from './kit.js';

/** Contract part 9: the request journal of an account, newest first, filtered, one by id, and cleared. */
export function requestRoutes({ runtime, get, list, delete: del }: RouteKit): void {
  const { journal } = runtime.store;
  list('/sandbox/v1/requests', (account, query) => {
    const { page, limit, method, path, status, since } = parse(listRequestsQuery, query, 'query');
    const filter = {
      method,
      status,
      since: since === undefined ? undefined : Date.parse(since),
      path: path === undefined ? undefined : (requested: string) => pathMatches(path, requested),
    };
    const { rows, total } = journal.page(account.key, filter, (page - 1) * limit, limit);
    return { data: rows.map(journalItem), pagination: { page, limit, total, totalPages: Math.ceil(total / limit) } };
  });
  get('/sandbox/v1/requests/:id', (account, c) => {
    const row = journal.get(account.key, param(c, 'id'));
    if (!row) throw new SandboxError('NOT_FOUND', `Request ${param(c, 'id')} not found`);
    return journalItem(row);
  });
  del('/sandbox/v1/requests', (account) => ({ deleted: journal.clear(account.key) }), { body: 'none' });
}
