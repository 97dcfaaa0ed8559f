import { Command } from 'commander';
import type { Faults } from '../../core/records/state.js';
import { apiAction, example, globalOptions } from '../context.js';
import { milliseconds } from '../options.js';
import { block } from '../render.js';
import { faultsApiCommand } from './faults-api.js';

const PATH = '/sandbox/v1/faults';

const faultsBlock = (faults: Faults) =>
  block([
    ['duplicate', faults.duplicate],
    ['delayMs', faults.delayMs],
    ['shuffle', faults.shuffle],
  ]);

/**
 * `faults show|set|clear`: delivery faults of the account (contract part 4), to test that a callback handler copes
 * with what at-least-once delivery does: duplicates, slowness, events of different payments in any order.
 */
export function faultsCommand(): Command {
  const show = new Command('show')
    .description("Show the account's delivery faults")
    .action(apiAction<Faults>(() => ['GET', PATH], faultsBlock));
  const set = new Command('set')
    .description('Set the delivery faults (what is not given is off)')
    .option(
      '--duplicate',
      'send each attempt that gets 2xx once more, same eventId and body (logged as an attempt marked fault)',
    )
    .option('--delay <ms>', 'wait this long before each attempt: 200, 200ms, 2s (at most 10 s)', milliseconds)
    .option('--shuffle', 'do not hold first attempts of different payments and clients to the order they were raised')
    .action(
      apiAction<Faults>((cmd) => {
        const opts = cmd.opts<{ duplicate?: true; delay?: number; shuffle?: true }>();
        return [
          'PUT',
          PATH,
          { body: { duplicate: opts.duplicate === true, delayMs: opts.delay ?? 0, shuffle: opts.shuffle === true } },
        ];
      }, faultsBlock),
    );
  const clear = new Command('clear')
    .description('Turn every delivery fault off')
    .action(apiAction<Faults>(() => ['PUT', PATH, { body: {} }], faultsBlock));
  const command = new Command('faults')
    .description(
      'Delivery faults, to test callback handlers (duplicates, delays, out of order); `faults api`: faults of the API itself',
    )
    .addCommand(example(globalOptions(show), 'va-sandbox faults show'))
    .addCommand(example(globalOptions(set), 'va-sandbox faults set --duplicate --delay 200ms --shuffle'))
    .addCommand(example(globalOptions(clear), 'va-sandbox faults clear'))
    .addCommand(faultsApiCommand());
  return example(command, 'va-sandbox faults set --duplicate', 'va-sandbox faults clear');
}
