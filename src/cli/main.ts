import { Command, CommanderError } from 'commander';
import { clientsCommand } from './commands/clients.js';
import { clockCommand } from './commands/clock.js';
import { deliveriesCommand } from './commands/deliveries.js';
import { eventsCommand } from './commands/events.js';
import { exportCommand } from './commands/export.js';
import { faultsCommand } from './commands/faults.js';
import { hubCommand } from './commands/hub.js';
import { importCommand } from './commands/import.js';
import { invoicesCommand } from './commands/invoices.js';
import { ledgerCommand } from './commands/ledger.js';
import { listenCommand } from './commands/listen.js';
import { paymentsCommand } from './commands/payments.js';
import { receiverCommand } from './commands/receiver.js';
import { resetCommand } from './commands/reset.js';
import { runCommand } from './commands/run.js';
import { startCommand } from './commands/start.js';
import { transferCommand } from './commands/transfer.js';
import { uiCommand } from './commands/ui.js';
import { example, globalOptions } from './context.js';
import { version } from './version.js';

/** Runs the CLI and returns the exit code: 0 ok, 1 a failure, 2 a usage error. Errors are one line on stderr. */
export async function main(argv: string[]): Promise<number> {
  // A reader that stops early (`va-sandbox events | head -3`) is no error: stop quietly.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    process.exit(process.exitCode ?? 0);
  });
  const program = new Command('va-sandbox')
    .description('Local sandbox of the VA payments and clients API: payments, transfers, a sandbox clock and real callbacks')
    .version(version, '-v, --version')
    // Options belong to the command they follow, so `start --api-key` (accepted keys) and
    // `payments list --api-key` (the key to send) can both exist.
    .enablePositionalOptions();
  globalOptions(program)
    .addCommand(startCommand())
    .addCommand(receiverCommand())
    .addCommand(paymentsCommand())
    .addCommand(transferCommand())
    .addCommand(clientsCommand())
    .addCommand(invoicesCommand())
    .addCommand(ledgerCommand())
    .addCommand(eventsCommand())
    .addCommand(deliveriesCommand())
    .addCommand(listenCommand())
    .addCommand(faultsCommand())
    .addCommand(clockCommand())
    .addCommand(hubCommand())
    .addCommand(resetCommand())
    .addCommand(runCommand())
    .addCommand(exportCommand())
    .addCommand(importCommand())
    .addCommand(uiCommand());
  example(
    program,
    'va-sandbox start',
    'va-sandbox payments create --amount 1500 --lock amount --json',
    'va-sandbox --url http://127.0.0.1:4580 --api-key sk_ci_42 payments list',
  );
  testable(program);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version are "errors" to commander; they are successes here. Commander printed the rest.
      return error.exitCode === 0 ? 0 : 2;
    }
    process.stderr.write(`va-sandbox: ${(error as Error).message}\n`);
    return 1;
  }
}

/**
 * Every command throws instead of exiting (so `main` picks the exit code) and reports a usage error as one line,
 * in the same `va-sandbox: …` form as every other error, pointing at the command's help.
 */
function testable(command: Command): void {
  let name = command.name();
  for (let at = command.parent; at; at = at.parent) name = `${at.name()} ${name}`;
  command
    .exitOverride()
    .configureOutput({
      writeErr: (text) => process.stderr.write(text),
      // Commander puts its suggestion ("Did you mean …?") on a line of its own: the error stays one line.
      outputError: (text, write) => write(`va-sandbox: ${text.trim().replace(/^error: /, '').replace(/\s*\n\s*/g, ' ')} (see ${name} --help)\n`),
    });
  for (const sub of command.commands) testable(sub);
}
