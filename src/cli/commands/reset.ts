import { Command } from 'commander';
import { apiAction, example, globalOptions } from '../context.js';

/** `reset`: clears the account of the API key (contract part 5); other keys' accounts are untouched. */
export function resetCommand(): Command {
  const command = new Command('reset')
    .description('Clear the account of this API key: payments, clients, transfers, events, deliveries, clock and hubs')
    .action(
      apiAction<{ reset: boolean }>(
        () => ['POST', '/sandbox/v1/reset'],
        () => 'account reset',
      ),
    );
  return example(globalOptions(command), 'va-sandbox reset', 'VA_SANDBOX_API_KEY=sk_ci_42 va-sandbox reset');
}
