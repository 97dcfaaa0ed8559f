import { Command } from 'commander';
import type { forwardingView } from '../../core/callbacks/delivery-settings.js';
import { EVENT_TYPES } from '../../core/records/words.js';
import type { Client } from '../client.js';
import { contextOf, example, globalOptions } from '../context.js';
import { fieldFlags } from '../flags.js';
import { followUntilInterrupted } from '../follow.js';
import { list, url } from '../options.js';
import { type Output, pad, paint } from '../render.js';
import type { LiveMessage } from '../ui/live.js';
import { outcome } from './deliveries.js';

type Forwarding = ReturnType<typeof forwardingView>;
type DeliveryMessage = Extract<LiveMessage, { type: 'delivery' }>;

const PATH = '/sandbox/v1/forwarding';

interface ListenOptions {
  forwardTo: string;
  events?: string[];
  printBody?: boolean;
}

/**
 * `listen --forward-to URL` (after `stripe listen`): every callback of the account (or, with `--events`, those of the
 * event types named) goes to URL while it runs, each printed as it is delivered; Ctrl-C turns forwarding off again.
 * The filter is part of the forwarding setting, so the sandbox never sends the others to URL at all.
 */
export function listenCommand(): Command {
  const command = new Command('listen')
    .description(
      "Forward the account's callbacks to a local URL while this runs, printing each one; Ctrl-C stops forwarding",
    )
    .requiredOption('--forward-to <url>', 'where every callback attempt goes instead of its configured URL', url)
    .option(
      '--events <list>',
      `forward only these event types, comma-separated: ${EVENT_TYPES.join(', ')} (the others still go to their own URLs)`,
      list,
    )
    .option('--print-body', "print each callback's body and the first 2 KiB of the handler's response body too")
    .action(async (opts: ListenOptions, cmd: Command) => {
      const { client, out } = contextOf(cmd);
      let mine = await forward(client, opts);
      const others = mine.events ? '; the others still go to their own URLs' : '';
      const which = mine.events ? `the ${mine.events.join(', ')} callbacks` : 'every callback';
      out.note(`forwarding ${which} of this account to ${mine.url}${others} (Ctrl-C to stop)`);
      try {
        await followUntilInterrupted(client, out, {
          onMessage: (message) => {
            if (message.type !== 'delivery' || !message.attempt) return;
            if (mine.events && !mine.events.includes(message.delivery.eventType)) return;
            out.item(message, (m) => callbackLines(m, opts.printBody === true));
          },
          // A sandbox that restarted in memory forgot it: set it again.
          reconnected: async () => {
            mine = await forward(client, opts);
          },
        });
      } finally {
        await stopForwarding(client, out, mine);
      }
    });
  return example(
    globalOptions(fieldFlags(command, { url: '--forward-to' })),
    'va-sandbox listen --forward-to http://127.0.0.1:3000/webhooks',
    'va-sandbox listen --forward-to http://127.0.0.1:3000/webhooks --print-body',
    'va-sandbox listen --forward-to http://127.0.0.1:3000/webhooks --events created,succeeded,client.cashin',
  );
}

const forward = async (client: Client, { forwardTo, events }: ListenOptions) =>
  (await client.call<Forwarding>('PUT', PATH, { body: { url: forwardTo, ...(events ? { events } : {}) } })).data;

/** Turns forwarding off, unless another `listen` has taken it over since (then it is theirs to end). */
async function stopForwarding(client: Client, out: Output, mine: Forwarding): Promise<void> {
  try {
    const { data: now } = await client.call<Forwarding>('GET', PATH);
    if (now.url !== mine.url || now.since !== mine.since)
      return out.note(`forwarding left to ${now.url ?? 'nobody'}: another listen set it`);
    await client.call<Forwarding>('DELETE', PATH);
    out.note('forwarding off: callbacks go to their own URLs again');
  } catch (error) {
    out.note(`va-sandbox: could not turn forwarding off: ${(error as Error).message}`);
  }
}

/**
 * One attempt: when, the event, whose it is, what the handler answered and how fast; with --print-body, the body sent
 * and the handler's response body (the first 2 KiB, as the sandbox keeps it).
 */
export function callbackLines({ delivery, attempt, event }: DeliveryMessage, printBody: boolean): string {
  const got = paint(attempt!.error === null ? 'green' : 'red', outcome(attempt!));
  const whose = event?.vaPaymentId ? `payment ${event.vaPaymentId}` : event?.clientId ? `client ${event.clientId}` : '';
  const line = [
    attempt!.startedAt,
    pad(delivery.eventType, 16),
    pad(whose, 44),
    pad(got, 10),
    pad(`${attempt!.durationMs} ms`, 7, true),
    attempt!.fault ? paint('yellow', `fault: ${attempt!.fault}`) : `=> ${attempt!.forwardedTo ?? delivery.url}`,
  ].join('  ');
  if (!printBody) return line;
  const sent = event ? [JSON.stringify(event.body, null, 2)] : [];
  return [line, ...sent, `${paint('dim', 'response body:')} ${attempt!.responseBody || '(empty)'}`].join('\n');
}
