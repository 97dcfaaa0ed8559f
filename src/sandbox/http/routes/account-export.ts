import {
  EXPORT_FORMAT,
  EXPORT_VERSION,
  exportAccount,
  importAccount,
  importQuery,
} from '../../../core/account-export/account-export.js';
import { exportText } from '../../../core/account-export/export-text.js';
import { type Account, parse } from '../../../core/index.js';
import { recordScenario } from '../../../core/scenarios/scenario-record.js';
import { giveWay } from '../../runtime/give-way.js';
import { counted } from '../../runtime/progress.js';
import { streamAnswer } from '../answer-stream.js';
import type { RouteKit } from './kit.js';

/** One account's whole state as one JSON document, handed over then replayed elsewhere; or its story as a scenario. */
export function accountExportRoutes({ app, runtime, get, post }: RouteKit): void {
  // Under the Node server the export is streamed from the store as the client reads it, never held whole.
  app.get('/sandbox/v1/export', async (c, next) => {
    const res = c.env?.outgoing;
    // HEAD has no body to stream: Hono answers it from the route below.
    if (!res || c.req.method === 'HEAD') return next();
    const failed = (error: unknown) => runtime.log(`GET /sandbox/v1/export: cut short: ${(error as Error).message}`);
    await streamAnswer(res, runtime.store.committed, exportAnswer(c.get('account')), failed);
    // Already written: the Node adapter leaves an answer marked so alone.
    return new Response(null, { headers: { 'x-hono-already-sent': 'true' } });
  });
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
  get('/sandbox/v1/scenario', (account, c) =>
    recordScenario(account, c.req.query('name') || `Recorded from account …${account.key.slice(-4)}`),
  );
}

/** The export's answer in the envelope `ok` gives any read (`{success, data, unreadable?, timestamp}`), as text. */
function* exportAnswer(account: Account): Generator<string> {
  const unreadable: string[] = [];
  yield '{"success":true,"data":';
  yield* exportText(account, EXPORT_FORMAT, EXPORT_VERSION, unreadable);
  if (unreadable.length > 0) yield `,"unreadable":${JSON.stringify(unreadable)}`;
  yield `,"timestamp":${JSON.stringify(account.now())}}`;
}

/** How many times an import gives way (`counted`): once per record checked, per check across them, per event stored. */
function importSteps(body: unknown): number {
  const tables = (body as { account?: unknown } | null)?.account;
  if (typeof tables !== 'object' || tables === null) return 0;
  const size = (table: unknown) => (typeof table === 'object' && table !== null ? Object.keys(table).length : 0);
  return (
    Object.values(tables).reduce((sum: number, table) => sum + size(table), 3) +
    size((tables as { events?: unknown }).events)
  );
}
