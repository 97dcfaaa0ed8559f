import { Command } from 'commander';
import { connectionOf, example, globalOptions, hubOf, hubOption, UsageError } from '../context.js';
import { peerRanges, version } from '../version.js';

/** What the dashboard needs beyond the package's dependencies: optional peers, which a plain install leaves out. */
const UI_PACKAGES = ['ink', 'react'];

/** Throws, as a usage error naming the install line, when a package the dashboard needs cannot be found. */
function needUiPackages(): void {
  const missing = UI_PACKAGES.filter((name) => {
    try {
      import.meta.resolve(name);
      return false;
    } catch {
      return true;
    }
  });
  if (missing.length === 0) return;
  const install = UI_PACKAGES.map((name) => `${name}@${peerRanges[name]}`).join(' ');
  const needs = missing.join(' and ');
  throw new UsageError(
    `ui needs ${needs}, which a plain install leaves out: npm install --save-dev va-sandbox ${install}`,
  );
}

/**
 * `ui`: the interactive dashboard. ink, react and zod load inside the action only, so every other command starts
 * without them (ink and react may not be installed at all); the options' zod schema (`uiOptionsSchema`) lives
 * beside the dashboard for the same reason.
 */
export function uiCommand(): Command {
  const command = new Command('ui')
    .description(
      'An interactive dashboard: VA payments, clients and a live feed of events and callback deliveries, with keys to act on them; starts a sandbox here when none answers',
    )
    .action(async (_opts, cmd: Command) => {
      needUiPackages();
      // ink, read as it loads, draws only a last frame where CI is set: this is a terminal, not a CI log.
      delete process.env.CI;
      delete process.env.CONTINUOUS_INTEGRATION;
      const { runUi } = await import('../ui/run.js');
      await runUi({ ...connectionOf(cmd), hubId: hubOf(cmd), version });
    });
  return example(
    hubOption(globalOptions(command, 'connection')),
    'va-sandbox ui',
    'va-sandbox ui --url http://127.0.0.1:4580 --api-key sk_ci_42',
  );
}
