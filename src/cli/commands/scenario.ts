import { writeFile } from 'node:fs/promises';
import { Command } from 'commander';
import { contextOf, example, globalOptions } from '../context.js';

/** `scenario record`: the account's story as a scenario file, to replay with `run` on a fresh account. */
export function scenarioCommand(): Command {
  const record = new Command('record')
    .description(
      "Write the account's story (hubs, creates, transfers, cancellations, clients, clock moves, receivers' answers) as a scenario file that `run` replays, with the outcome as expectations (stdout without --out)",
    )
    .option('-o, --out <file>', 'write it to this file')
    .option('--name <name>', "the scenario's name")
    .action(async (opts: { out?: string; name?: string }, cmd: Command) => {
      const { client, out } = contextOf(cmd);
      const { data } = await client.call<{ steps: unknown[] }>(
        'GET',
        `/sandbox/v1/scenario${opts.name ? `?name=${encodeURIComponent(opts.name)}` : ''}`,
      );
      const text = `${JSON.stringify(data, null, 2)}\n`;
      if (opts.out === undefined) {
        process.stdout.write(text);
        return;
      }
      await writeFile(opts.out, text);
      out.result(
        { file: opts.out, steps: data.steps.length },
        () => `recorded ${data.steps.length} steps to ${opts.out}; replay them with: va-sandbox run ${opts.out}`,
      );
    });
  example(
    globalOptions(record),
    'va-sandbox scenario record --out incident-scenario.json',
    'va-sandbox import incident.json && va-sandbox scenario record > story.json && va-sandbox run story.json',
  );
  const scenario = new Command('scenario')
    .description('Scenario files from an account (see `run` to play them)')
    .addCommand(record);
  return example(scenario, 'va-sandbox scenario record --out story.json && va-sandbox run story.json');
}
