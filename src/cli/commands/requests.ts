import { Command } from 'commander';
import { journalNote as note } from '../../client/journal-note.js';
import type { JournalItem } from '../../core/records/request-journal.js';
import type { Client, Query } from '../client.js';
import { apiAction, contextOf, example, globalOptions, optionsOf, pageOptions, pathTo, recordId } from '../context.js';
import { block, type Output, type Pagination, pad, page, paint } from '../render.js';

const PATH = '/sandbox/v1/requests';

/** How often `--follow` asks for requests newer than those it printed, in ms. */
const FOLLOW_EVERY_MS = 500;

type RequestsPage = { data: JournalItem[]; pagination: Pagination };

/** `requests list|show`: the request journal, what the integration sent to `/api/v1` and what it was answered. */
export function requestsCommand(): Command {
  const command = new Command('requests')
    .description(
      'The request journal: every /api/v1 request of the account as sent and answered (list it, follow it, show one)',
    )
    .addCommand(listCommand())
    .addCommand(showCommand());
  return example(
    command,
    'va-sandbox requests list --method POST --path /api/v1/va-payments',
    'va-sandbox requests show 5a6b7c8d',
  );
}

function listCommand(): Command {
  const command = pageOptions(
    new Command('list')
      .description('List requests, newest first; with --follow, then print each new one as it comes until interrupted')
      .option('--method <method>', 'only this method: GET, POST, PATCH, PUT or DELETE')
      .option('--path <pattern>', 'only this path; {id} or * stands for one segment, e.g. /api/v1/va-payments/{id}')
      .option('--status <status>', 'only answers with this HTTP status, e.g. 400'),
  )
    .option('--follow', 'print new requests as they come (with --json: one JSON line per request, and no list)')
    .action(async (_opts, cmd: Command) => {
      const { client, out } = contextOf(cmd);
      const { follow, ...query } = optionsOf(cmd) as Query & { follow?: boolean };
      const list = await listRequests(client, query);
      if (!follow) return out.result(list, requestsPage);
      if (!out.json) out.result(list, requestsPage);
      out.note('following requests (Ctrl-C to stop)');
      await followRequests(client, out, query, new Set(list.data.map((item) => item.id)));
    });
  return example(globalOptions(command), 'va-sandbox requests list --status 400', 'va-sandbox requests list --follow');
}

const listRequests = async (client: Client, query: Query): Promise<RequestsPage> => {
  const { data, pagination } = await client.call<JournalItem[]>('GET', PATH, { query });
  return { data, pagination: pagination! };
};

const requestsPage = ({ data, pagination }: RequestsPage) =>
  page(
    data,
    pagination,
    ['request', 'requests'],
    [
      ['id', (r) => r.id],
      ['at', (r) => r.at],
      ['method', (r) => r.method],
      ['path', (r) => r.path],
      ['status', (r) => r.status ?? 'no answer', 'right'],
      ['ms', (r) => r.durationMs, 'right'],
      ['note', note],
    ],
  );

const requestLine = (r: JournalItem): string =>
  [
    r.at,
    pad(r.method, 6),
    pad(String(r.status ?? 'no answer'), 9),
    pad(r.path, 60),
    `${r.durationMs}ms`,
    note(r),
    paint('dim', r.id),
  ].join('  ');

/**
 * `--follow`: asks for the newest requests every `FOLLOW_EVERY_MS` and prints those it has not printed, oldest first,
 * until Ctrl-C; while the sandbox is away (a restart) it says so once and goes on asking.
 */
async function followRequests(client: Client, out: Output, query: Query, seen: Set<string>): Promise<void> {
  let away = false;
  let stopped = false;
  const stop = () => void (stopped = true);
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  while (!stopped) {
    await new Promise((resolve) => setTimeout(resolve, FOLLOW_EVERY_MS));
    try {
      const { data } = await listRequests(client, { ...query, page: 1, limit: 100 });
      if (away) out.note('the sandbox is back');
      away = false;
      for (const item of data.filter((r) => !seen.has(r.id)).reverse()) {
        seen.add(item.id);
        out.item(item, requestLine);
      }
    } catch (error) {
      if (!away) out.note(`va-sandbox: ${(error as Error).message}; trying again (Ctrl-C to stop)`);
      away = true;
    }
  }
  process.off('SIGINT', stop);
  process.off('SIGTERM', stop);
}

function showCommand(): Command {
  const command = new Command('show')
    .description('One request: its headers and body as sent, and the answer')
    .argument('<id>', 'request id, or its first characters (8 tell it apart)')
    .action(
      apiAction<JournalItem>(
        async (cmd, id) => ['GET', pathTo(PATH, await recordId(cmd, PATH, 'request', id))],
        requestDetail,
      ),
    );
  return example(globalOptions(command), 'va-sandbox requests show 5a6b7c8d');
}

const json = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value, null, 2));

function requestDetail(r: JournalItem): string {
  const headers = Object.entries(r.requestHeaders).map(([name, value]) => `${name}: ${value}`);
  return [
    block([
      ['id', r.id],
      ['at', r.at],
      ['request', `${r.method} ${r.path}${Object.keys(r.query).length ? `?${new URLSearchParams(r.query)}` : ''}`],
      ['status', r.status ?? 'no answer (the connection was closed)'],
      ['duration', `${r.durationMs} ms`],
      ['idempotencyKey', r.idempotencyKey ?? '-'],
      ['note', note(r) || '-'],
    ]),
    paint('bold', 'request headers'),
    ...headers,
    paint('bold', 'request body'),
    r.requestBody === null ? '(none)' : json(r.requestBody),
    paint('bold', 'response body'),
    r.responseBody === null ? '(none)' : json(r.responseBody),
  ].join('\n');
}
