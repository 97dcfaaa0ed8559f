import { Argument, Command } from 'commander';
import type { TriggerView } from '../../core/records/index.js';
import type { EventView } from '../../core/records/views.js';
import { EVENT_TYPES } from '../../core/records/words.js';
import type { Client } from '../client.js';
import { contextOf, example, globalOptions, hubOf, hubOption } from '../context.js';
import { fieldFlags } from '../flags.js';
import { followUntilInterrupted } from '../follow.js';
import { money, url } from '../options.js';
import { type Output, paint } from '../render.js';
import type { LiveMessage } from '../ui/live.js';
import { callbackLines } from './listen.js';

const PATH = '/sandbox/v1/triggers';
/** How long the command waits, in real time, for the triggered event's callbacks to reach a final outcome. */
const WAIT_MS = 10_000;
const FINAL = ['delivered', 'failed'];

/**
 * `trigger <event>` (after `stripe trigger`): the sandbox makes the event through the operations a user would call;
 * this prints what it did, then each callback of that payment or client as it is delivered, as `listen` does, until
 * the triggered event's callbacks have a final outcome (or `WAIT_MS`).
 */
export function triggerCommand(): Command {
  const command = new Command('trigger')
    .description(
      'Make one event happen through the operations a user would call, then print its callbacks as they are delivered',
    )
    .addArgument(new Argument('<event>', 'the event to make').choices(EVENT_TYPES))
    .option('--callback-url <url>', 'where the callbacks go (default: the URL `listen` forwards to, else dropped)', url)
    .option('--amount <ars>', "the payment's amount, or what the client's transfer pays (default 1500)", money)
    .action(async function (this: Command, event: string) {
      const { client, out } = contextOf(this);
      const opts = this.opts<{ callbackUrl?: string; amount?: number }>();
      const body = { event, callbackUrl: opts.callbackUrl, amount: opts.amount, paymentHubId: hubOf(this) };
      if (out.json) return out.result((await client.call<TriggerView>('POST', PATH, { body })).data, () => '');
      await triggerAndFollow(client, out, body);
    });
  return example(
    globalOptions(hubOption(fieldFlags(command, { callbackUrl: '--callback-url' }))),
    'va-sandbox trigger succeeded --callback-url http://127.0.0.1:3000/webhooks',
    'va-sandbox trigger underpaid --amount 2000 --callback-url http://127.0.0.1:3000/webhooks',
    'va-sandbox trigger client.cashin --callback-url http://127.0.0.1:3000/webhooks/cashin',
  );
}

/** Subscribes to the live stream first, so no attempt falls between the trigger's answer and the follow. */
async function triggerAndFollow(client: Client, out: Output, body: Record<string, unknown>): Promise<void> {
  const done = new AbortController();
  let made: TriggerView | undefined;
  let timer: NodeJS.Timeout | undefined;
  try {
    await followUntilInterrupted(client, out, {
      signal: done.signal,
      ready: async () => {
        if (made) return;
        made = (await client.call<TriggerView>('POST', PATH, { body })).data;
        out.result(made, stepLines);
        const dropped = await droppedReason(client, made);
        if (dropped !== null) {
          const fix = 'give --callback-url, or run va-sandbox listen';
          out.note(`the ${made.event} callback was dropped: ${dropped} (${fix})`);
          return done.abort();
        }
        timer = setTimeout(() => {
          const rest = 'va-sandbox deliveries list --follow shows the rest';
          out.note(`no final outcome for the ${made!.event} callback after ${WAIT_MS / 1000} s: ${rest}`);
          done.abort();
        }, WAIT_MS);
      },
      onMessage: (message) => {
        if (!made || !isAttemptOf(made, message)) return;
        out.item(message, (m) => callbackLines(m, false));
        if (message.delivery.eventId === made.eventId && FINAL.includes(message.delivery.status)) done.abort();
      },
    });
  } finally {
    clearTimeout(timer);
  }
}

type DeliveryMessage = Extract<LiveMessage, { type: 'delivery' }>;

const isAttemptOf = (made: TriggerView, message: LiveMessage): message is DeliveryMessage =>
  message.type === 'delivery' &&
  message.attempt !== undefined &&
  message.attempt !== null &&
  (message.delivery.vaPaymentId ?? message.delivery.clientId) === (made.vaPaymentId ?? made.clientId);

const stepLines = (made: TriggerView): string =>
  [
    paint('bold', `triggered ${made.event} (event ${made.eventId})`),
    ...made.steps.map((step, i) => `  ${i + 1}. ${step}`),
  ].join('\n');

/** Why the triggered event has no callback to send (no URL to go to), or null when it has one. */
async function droppedReason(client: Client, made: TriggerView): Promise<string | null> {
  const query = made.vaPaymentId ? { vaPaymentId: made.vaPaymentId } : { clientId: made.clientId! };
  const { data } = await client.call<EventView[]>('GET', '/sandbox/v1/events', { query: { ...query, limit: '100' } });
  const event = data.find((raised) => raised.id === made.eventId);
  return event && event.url === null ? (event.droppedReason ?? 'no URL') : null;
}
