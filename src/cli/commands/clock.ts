import { Command } from 'commander';
import { apiAction, example, globalOptions } from '../context.js';
import { duration, isoTime } from '../options.js';
import { block } from '../render.js';

interface Clock {
  now: string;
  offsetSeconds: number;
}

const clockBlock = (clock: Clock) =>
  block([
    ['now', clock.now],
    ['offsetSeconds', clock.offsetSeconds],
  ]);

/**
 * `clock` shows the account's sandbox clock; `clock advance` and `clock set` move it, doing what falls due on the way
 * at its own instant, in time order (expiries, delayed CVUs, callback retries), before they answer.
 */
export function clockCommand(): Command {
  const advance = new Command('advance')
    .description('Move the sandbox clock forward; expiries and callback retries that fall due run in time order before it answers')
    .argument('<duration>', 'seconds, or 90s, 15m, 2h, 1h30m, 1d', duration)
    .action(apiAction<Clock>((cmd) => ['POST', '/sandbox/v1/clock/advance', { body: { seconds: cmd.processedArgs[0] } }], clockBlock));
  const set = new Command('set')
    .description('Move the sandbox clock forward to a time (an earlier one is refused); what falls due runs in time order before it answers')
    .argument('<time>', 'ISO 8601 with its zone, e.g. 2026-03-01T12:00:00Z', isoTime)
    .action(apiAction<Clock>((cmd) => ['POST', '/sandbox/v1/clock/set', { body: { at: cmd.processedArgs[0] } }], clockBlock));
  const command = new Command('clock')
    .description("Show the account's sandbox clock (or move it with `clock advance` or `clock set`)")
    .addCommand(example(globalOptions(advance), 'va-sandbox clock advance 30m', 'va-sandbox clock advance 1h30m'))
    .addCommand(example(globalOptions(set), 'va-sandbox clock set 2026-03-01T12:00:00Z'))
    .action(apiAction<Clock>(() => ['GET', '/sandbox/v1/clock'], clockBlock));
  return example(globalOptions(command), 'va-sandbox clock', 'va-sandbox clock advance 90s');
}
