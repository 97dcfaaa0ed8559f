import { Command, Option } from 'commander';
import { DEFAULT_DATA } from '../../sandbox/runtime/defaults.js';
import { example, globalOptions, outputOf } from '../context.js';

/**
 * `check`: reads a state database through, read-only, beside a running server or not: exit 0 with `ok: N records in
 * FILE`, or 1 with one line per damaged thing on stdout and what to do on stderr (a missing file, or one that is no
 * database: one line, exit 1).
 */
export function checkCommand(): Command {
  const command = new Command('check')
    .description(
      'Check a state database read-only (safe beside a running server): ' +
        "what a start refuses, its structure and every record's CRC-32",
    )
    .addOption(new Option('--data <path>', 'state database').env('VA_SANDBOX_DATA').default(DEFAULT_DATA))
    .option(
      '--full',
      'PRAGMA integrity_check past 16 MiB too, rather than quick_check: ' +
        'also reads every index against its table (slower)',
    )
    .action(async (opts: { data: string; full?: boolean }, cmd: Command) => {
      // Loaded here: the other commands never pay for node:sqlite.
      const { checkDatabase, damagedLine } = await import('../../sandbox/store/check.js');
      const result = checkDatabase(opts.data, opts.full === true);
      outputOf(cmd).result({ file: opts.data, ...result }, ({ records, damaged, note }) =>
        damaged.length > 0 ? damaged.join('\n') : `ok: ${records} records in ${opts.data}${note ? ` (${note})` : ''}`,
      );
      // Exit 1, with what to do on stderr.
      if (result.damaged.length > 0) throw new Error(damagedLine(opts.data, result));
    });
  return example(globalOptions(command, 'output'), 'va-sandbox check', 'va-sandbox check --data ci/state.db --full');
}
