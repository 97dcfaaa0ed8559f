import { Command } from 'commander';
import { apiAction, example, globalOptions } from '../context.js';
import { duration } from '../options.js';
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

/** `clock` shows the account's sandbox clock; `clock advance` moves it, running due expiries and retries. */
export function clockCommand(): Command {
  const advance = new Command('advance')
    .description('Move the sandbox clock forward; expiries and callback retries that fall due run before it answers')
    .argument('<duration>', 'seconds, or 90s, 15m, 2h, 1h30m, 1d', duration)
    .action(apiAction<Clock>((cmd) => ['POST', '/sandbox/v1/clock/advance', { body: { seconds: cmd.processedArgs[0] } }], clockBlock));
  const command = new Command('clock')
    .description("Show the account's sandbox clock (or move it with `clock advance`)")
    .addCommand(example(globalOptions(advance), 'va-sandbox clock advance 30m', 'va-sandbox clock advance 1h30m'))
    .action(apiAction<Clock>(() => ['GET', '/sandbox/v1/clock'], clockBlock));
  return example(globalOptions(command), 'va-sandbox clock', 'va-sandbox clock advance 90s');
}
