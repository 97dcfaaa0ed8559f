import { Command } from 'commander';
import type { eventView } from '../../core/records/views.js';
import { example, globalOptions, listAction, optionsOf, pageOptions } from '../context.js';
import { page, status } from '../render.js';

type EventView = ReturnType<typeof eventView>;

/** `events`: every event raised, newest first, with where it went (contract part 4). */
export function eventsCommand(): Command {
  const command = pageOptions(
    new Command('events').description(
      'List the events raised (VA payment and client cash-in), newest first, with their routing and deliveries',
    ),
  ).action(
    listAction<EventView>(
      (cmd) => ['GET', '/sandbox/v1/events', { query: optionsOf(cmd) }],
      (items, pagination) =>
        page(
          items,
          pagination,
          ['event', 'events'],
          [
            ['createdAt', (e) => e.createdAt],
            ['eventType', (e) => e.eventType],
            ['delivery', (e) => e.deliveries.map((d) => status(d.status)).join(', ')],
            ['vaPaymentId/clientId', (e) => e.vaPaymentId ?? e.clientId],
            ['url', (e) => e.url ?? e.droppedReason],
          ],
        ),
    ),
  );
  return example(
    globalOptions(command),
    'va-sandbox events --limit 10',
    'va-sandbox events --json | jq -r ".data[] | .eventType"',
  );
}
