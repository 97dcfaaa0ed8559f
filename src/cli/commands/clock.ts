import { Command } from 'commander';
import { apiAction, type Call, contextOf, example, given, globalOptions } from '../context.js';
import { duration, isoTime } from '../options.js';
import { progressWanted, sandboxProgress, withProgress } from '../progress.js';
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

/** A clock move, with a progress line on a terminal while it walks through more than a second of due work. */
const move = (call: (command: Command) => Call) =>
  async function action(this: Command): Promise<void> {
    const { client, out } = contextOf(this);
    const [method, path, options] = call(this);
    const { data } = await withProgress(
      progressWanted(given<boolean>(this, 'json') === true),
      sandboxProgress(client),
      client.call<Clock>(method, path, options),
    );
    out.result(data, clockBlock);
  };

/**
 * `clock` shows the account's sandbox clock; `clock advance` and `clock set` move it, doing what falls due on the way
 * at its own instant, in time order (expiries, delayed CVUs, callback retries), before they answer.
 */
export function clockCommand(): Command {
  const advance = new Command('advance')
    .description(
      'Move the sandbox clock forward; expiries and callback retries that fall due run in time order before it answers',
    )
    .argument('<duration>', 'seconds, or 90s, 15m, 2h, 1h30m, 1d', duration)
    .action(move((cmd) => ['POST', '/sandbox/v1/clock/advance', { body: { seconds: cmd.processedArgs[0] } }]));
  const set = new Command('set')
    .description(
      'Move the sandbox clock forward to a time (an earlier one is refused); what falls due runs in time order before it answers',
    )
    .argument('<time>', 'ISO 8601 with its zone, e.g. 2026-03-01T12:00:00Z', isoTime)
    .action(move((cmd) => ['POST', '/sandbox/v1/clock/set', { body: { at: cmd.processedArgs[0] } }]));
  const command = new Command('clock')
    .description("Show the account's sandbox clock (or move it with `clock advance` or `clock set`)")
    .addCommand(example(globalOptions(advance), 'va-sandbox clock advance 30m', 'va-sandbox clock advance 1h30m'))
    .addCommand(example(globalOptions(set), 'va-sandbox clock set 2026-03-01T12:00:00Z'))
    .action(apiAction<Clock>(() => ['GET', '/sandbox/v1/clock'], clockBlock));
  return example(globalOptions(command), 'va-sandbox clock', 'va-sandbox clock advance 90s');
}
