import { Command } from 'commander';
import type { entryView } from '../../core/records/views.js';
import { apiAction, example, globalOptions, optionsOf, pathTo } from '../context.js';
import { money, signedMoney } from '../options.js';
import { ars, block } from '../render.js';

type EntryView = ReturnType<typeof entryView>;

const CLIENT = 'f3b1c9d2-8e7a-4b6c-9d0e-1a2b3c4d5e6f';

/** `ledger credit|debit|adjust|reverse`: the sandbox's ledger movements of a client (contract parts 3 and 5). */
export function ledgerCommand(): Command {
  const command = new Command('ledger')
    .description(
      "Record a movement in a client's ledger (sandbox): a credit, a debit, an adjustment, or the reversal of a credited operation",
    )
    .addCommand(
      movementCommand(
        'credit',
        'credit',
        'A credit of --amount (it does not count as cash in: see the balance formula)',
        money,
      ),
    )
    .addCommand(
      movementCommand('debit', 'debit', 'A debit of --amount: stored negative, counted in totalCashOut', money),
    )
    .addCommand(
      movementCommand(
        'adjust',
        'adjustment',
        'An adjustment of a signed --amount: a negative one counts in totalCashOut',
        signedMoney,
      ),
    )
    .addCommand(reverseCommand());
  return example(
    command,
    `va-sandbox ledger debit ${CLIENT} --amount 1500 --description "Monthly fee"`,
    `va-sandbox ledger reverse ${CLIENT} --operation-id op_123`,
  );
}

function movementCommand(
  name: string,
  entryType: string,
  description: string,
  amount: (value: string) => number,
): Command {
  const command = new Command(name)
    .description(description)
    .argument('<client-id>', 'client id')
    .requiredOption('--amount <ars>', 'amount in ARS', amount)
    .option('--description <text>', 'description')
    .option('--operation-id <id>', 'operationId: names the operation (a credit with one can be reversed)')
    .action(
      apiAction<EntryView>(
        (cmd, clientId) => ['POST', ledgerPath(clientId), { body: { entryType, ...optionsOf(cmd) } }],
        entryBlock,
      ),
    );
  return example(
    globalOptions(command),
    `va-sandbox ledger ${name} ${CLIENT} --amount ${name === 'adjust' ? '-250' : '1500'}`,
  );
}

function reverseCommand(): Command {
  const command = new Command('reverse')
    .description(
      'The bank returns a credited operation (a cash_in or a credit): a reversal entry taking back its whole amount',
    )
    .argument('<client-id>', 'client id')
    .requiredOption('--operation-id <id>', 'operationId of the credited operation')
    .option('--amount <ars>', "the operation's amount (checked when given)", money)
    .option('--description <text>', 'description')
    .action(
      apiAction<EntryView>(
        (cmd, clientId) => ['POST', ledgerPath(clientId), { body: { entryType: 'reversal', ...optionsOf(cmd) } }],
        entryBlock,
      ),
    );
  return example(globalOptions(command), `va-sandbox ledger reverse ${CLIENT} --operation-id op_123`);
}

const ledgerPath = (clientId: string) => pathTo('/sandbox/v1/clients', clientId, 'ledger');

function entryBlock(e: EntryView): string {
  return block([
    ['id', e.id],
    ['entryType', e.entryType],
    ['amount', ars(e.amount)],
    ['description', e.description],
    ['operationId', e.operationId],
    ['paymentId', e.paymentId],
    ['createdAt', e.createdAt],
  ]);
}
