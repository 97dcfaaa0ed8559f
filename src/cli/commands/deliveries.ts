import { Command } from 'commander';
import type { Account, LiveEvent } from '../../core/account/account.js';
import type { deliveryView } from '../../core/records/views.js';
import { DELIVERY_STATUSES, EVENT_TYPES } from '../../core/records/words.js';
import type { Client, Query } from '../client.js';
import { apiAction, contextOf, example, globalOptions, optionsOf, pageOptions, pathTo, recordId } from '../context.js';
import { fieldFlags } from '../flags.js';
import { followUntilInterrupted } from '../follow.js';
import { url } from '../options.js';
import { block, count, type Output, type Pagination, pad, page, paint, status } from '../render.js';

type DeliveryView = ReturnType<typeof deliveryView>;
export type DeliveryDetail = ReturnType<Account['deliveries']['getDelivery']>;
type LiveDelivery = Omit<Extract<LiveEvent, { type: 'delivery' }>, 'account'>;
type DeliveriesPage = { data: DeliveryView[]; pagination: Pagination };

const PATH = '/sandbox/v1/deliveries';

/** `deliveries list|show|redeliver|release`: the callback delivery log (contract part 4). */
export function deliveriesCommand(): Command {
  const command = new Command('deliveries')
    .description(
      'The callback delivery log: list it (or follow it live), show a delivery, redeliver one, release held ones',
    )
    .addCommand(listCommand())
    .addCommand(showCommand())
    .addCommand(redeliverCommand())
    .addCommand(releaseCommand());
  return example(
    command,
    'va-sandbox deliveries list --follow',
    'va-sandbox deliveries show 0c5e1f2a-3b4d-4e6f-8a9b-1c2d3e4f5a6b',
  );
}

function listCommand(): Command {
  const command = pageOptions(
    new Command('list')
      .description(
        'List deliveries, newest first; with --follow, then print each new attempt as it happens until interrupted',
      )
      .option('--status <list>', `status, comma-separated: ${DELIVERY_STATUSES.join(', ')}`)
      .option('--event-type <list>', `eventType, comma-separated: ${EVENT_TYPES.join(', ')}`),
  )
    .option('--follow', 'stream new attempts live (with --json: one JSON line per attempt, and no list)')
    .action(async (_opts, cmd: Command) => {
      const { client, out } = contextOf(cmd);
      const { follow, ...query } = optionsOf(cmd);
      if (follow) return followAttempts(client, out, query);
      out.result(await listDeliveries(client, query), deliveriesPage);
    });
  return example(
    globalOptions(command),
    'va-sandbox deliveries list --status failed,retrying',
    'va-sandbox deliveries list --follow',
  );
}

const matches = (list: unknown, value: string) =>
  typeof list !== 'string' ||
  list
    .split(',')
    .map((item) => item.trim())
    .includes(value);

const deliveriesPage = ({ data, pagination }: DeliveriesPage) =>
  page(
    data,
    pagination,
    ['delivery', 'deliveries'],
    [
      ['id', (d) => d.id],
      ['status', (d) => status(d.status)],
      ['eventType', (d) => d.eventType],
      ['for', whose],
      ['attempts', (d) => d.attempts, 'right'],
      ['lastResponseStatus', (d) => d.lastResponseStatus, 'right'],
      ['lastError', (d) => d.lastError],
      ['url', sentTo],
      ['updatedAt', (d) => d.updatedAt],
    ],
  );

/** The VA payment or client a delivery's event is about. */
const whose = (d: Pick<DeliveryView, 'vaPaymentId' | 'clientId'>): string =>
  d.vaPaymentId ? `payment ${d.vaPaymentId}` : d.clientId ? `client ${d.clientId}` : '';

/** Where the delivery's last attempt went (`=> URL` when forwarded or redelivered elsewhere), else its URL or why it has none. */
const sentTo = (d: DeliveryView): string => (d.forwardedTo ? `=> ${d.forwardedTo}` : (d.url ?? d.reason ?? ''));

const listDeliveries = async (client: Client, query: Query): Promise<DeliveriesPage> => {
  const { data, pagination } = await client.call<DeliveryView[]>('GET', PATH, { query });
  return { data, pagination: pagination! };
};

/**
 * `--follow`: the list (people only), then each live delivery attempt (and queued redelivery) from the server's
 * event stream that passes the same filters, until Ctrl-C; through a restart of the server it reconnects.
 */
async function followAttempts(client: Client, out: Output, query: Query): Promise<void> {
  await followUntilInterrupted(client, out, {
    // Subscribed before the list is read, so no attempt falls between the two.
    ready: async () => {
      const list = await listDeliveries(client, query);
      if (!out.json) out.result(list, deliveriesPage);
      out.note('following delivery attempts (Ctrl-C to stop)');
    },
    onMessage: (message) => {
      if (message.type !== 'delivery') return;
      if (matches(query.status, message.delivery.status) && matches(query.eventType, message.delivery.eventType))
        out.item(message, attemptLine);
    },
  });
}

type Attempt = NonNullable<LiveDelivery['attempt']>;

/** What an attempt got: the receiver's HTTP status, or why there was none (timeout, connection_refused...). */
export const outcome = (attempt: Pick<Attempt, 'responseStatus' | 'error'>): string =>
  attempt.responseStatus === null ? (attempt.error ?? '') : `HTTP ${attempt.responseStatus}`;

function attemptLine({ delivery, attempt }: LiveDelivery): string {
  const what = attempt
    ? `attempt ${attempt.n}  ${outcome(attempt)}`
    : `queued${delivery.redeliveryOf ? ` (redelivery of ${delivery.redeliveryOf})` : ''}`;
  const to = attempt ? (attempt.forwardedTo ?? delivery.url) : (delivery.forwardedTo ?? delivery.url);
  return [
    attempt?.startedAt ?? delivery.updatedAt,
    pad(status(delivery.status), 9),
    pad(delivery.eventType, 16),
    pad(whose(delivery), 44),
    pad(what, 29),
    to,
    delivery.id,
  ].join('  ');
}

const deliveryId = (command: Command, id: string) => recordId(command, PATH, 'delivery', id);

function showCommand(): Command {
  const command = new Command('show')
    .description('One delivery: the request exactly as sent, and every attempt with its response')
    .argument('<id>', 'delivery id, or its first characters (8 tell it apart)')
    .action(
      apiAction<DeliveryDetail>(async (cmd, id) => ['GET', pathTo(PATH, await deliveryId(cmd, id))], deliveryDetail),
    );
  return example(globalOptions(command), 'va-sandbox deliveries show 0c5e1f2a-3b4d-4e6f-8a9b-1c2d3e4f5a6b');
}

function redeliverCommand(): Command {
  const command = new Command('redeliver')
    .description('Send a delivery again: a new delivery of the same event, with the same eventId')
    .argument('<id>', 'delivery id, or its first characters (8 tell it apart)')
    .option('--to <url>', 'send this one delivery to another URL (e.g. your laptop) instead of its own', url)
    .action(
      apiAction<DeliveryDetail>(
        async (cmd, id) => [
          'POST',
          pathTo(PATH, await deliveryId(cmd, id), 'redeliver'),
          cmd.opts().to === undefined ? {} : { body: { url: cmd.opts().to } },
        ],
        (d) => `redelivery ${d.id} of ${d.redeliveryOf} queued\n${deliveryDetail(d)}`,
      ),
    );
  return example(
    globalOptions(fieldFlags(command, { url: '--to' })),
    'va-sandbox deliveries redeliver 0c5e1f2a-3b4d-4e6f-8a9b-1c2d3e4f5a6b',
    'va-sandbox deliveries redeliver 0c5e1f2a-3b4d-4e6f-8a9b-1c2d3e4f5a6b --to http://127.0.0.1:3000/webhooks',
  );
}

/** `release [id]`: held deliveries (an imported account's, never sent on their own) go out now, as first attempts. */
function releaseCommand(): Command {
  const command = new Command('release')
    .description(
      "Send held deliveries (an imported account's, never sent until released): all of them, which ends the hold, or the one given",
    )
    .argument('[id]', 'delivery id (default: every held delivery)')
    .option('--to <url>', 'send this one delivery to another URL instead of the forwarding URL or its own', url)
    .action(async function (this: Command, id: string | undefined) {
      const { client, out } = contextOf(this);
      const to: string | undefined = this.opts().to;
      if (id === undefined) {
        if (to !== undefined) this.error('--to sends one delivery: give its id');
        const { data } = await client.call<{ released: number }>('POST', `${PATH}/release`);
        return out.result(data, ({ released }) => `released ${count(released, ['held delivery', 'held deliveries'])}`);
      }
      const { data } = await client.call<DeliveryDetail>(
        'POST',
        pathTo(PATH, id, 'release'),
        to === undefined ? {} : { body: { url: to } },
      );
      out.result(data, (d) => `delivery ${d.id} released\n${deliveryDetail(d)}`);
    });
  return example(
    globalOptions(fieldFlags(command, { url: '--to' })),
    'va-sandbox deliveries release',
    'va-sandbox deliveries release 0c5e1f2a-3b4d-4e6f-8a9b-1c2d3e4f5a6b --to http://127.0.0.1:3000/webhooks',
  );
}

export function deliveryDetail(d: DeliveryDetail): string {
  const summary = block([
    ['id', d.id],
    ['status', status(d.status)],
    ['reason', d.reason],
    ['eventId', d.eventId],
    ['eventType', d.eventType],
    ['vaPaymentId', d.event.vaPaymentId],
    ['clientId', d.event.clientId],
    ['url', d.url],
    ['forwardedTo', d.forwardedTo],
    ['attempts', d.attempts.length],
    ['nextAttemptAt', d.nextAttemptAt],
    ['redeliveryOf', d.redeliveryOf],
    ['createdAt', d.createdAt],
    ['updatedAt', d.updatedAt],
  ]);
  // The body is printed as the JSON text the sandbox sends, byte for byte, not re-indented.
  const request = [
    `${d.request.method} ${d.request.url ?? '(no URL: dropped)'}`,
    ...Object.entries(d.request.headers).map(([name, value]) => `${name}: ${value}`),
    '',
    JSON.stringify(d.request.body),
  ].join('\n');
  const attempts = d.attempts.map((a) => {
    const got = paint(
      a.error === null ? 'green' : 'red',
      [outcome(a), a.responseStatus === null ? a.errorMessage : null].filter(Boolean).join(': '),
    );
    const where = [`=> ${a.request.url}`, a.fault ? paint('yellow', `fault: ${a.fault}`) : null]
      .filter(Boolean)
      .join('  ');
    return `${paint('bold', `attempt ${a.n}`)}  ${a.startedAt}  ${got}  ${a.durationMs} ms${where ? `  ${where}` : ''}${a.responseBody ? `\n${a.responseBody}` : ''}`;
  });
  return [
    summary,
    '',
    paint('bold', 'request (as sent)'),
    request,
    ...attempts.flatMap((attempt) => ['', attempt]),
  ].join('\n');
}
