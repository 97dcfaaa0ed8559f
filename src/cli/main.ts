import { Command, CommanderError } from 'commander';
import { NotASandboxError, SandboxApiError } from '../client/api-client.js';
import { UnreachableError } from './client.js';
import { checkCommand } from './commands/check.js';
import { clientsCommand } from './commands/clients.js';
import { clockCommand } from './commands/clock.js';
import { completeCommand, completionCommand } from './commands/completion.js';
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
import { requestsCommand } from './commands/requests.js';
import { resetCommand } from './commands/reset.js';
import { runCommand } from './commands/run.js';
import { scenarioCommand } from './commands/scenario.js';
import { startCommand } from './commands/start.js';
import { transferCommand } from './commands/transfer.js';
import { triggerCommand } from './commands/trigger.js';
import { uiCommand } from './commands/ui.js';
import { example, globalOptions, UsageError } from './context.js';
import { namingFlags } from './flags.js';
import { version } from './version.js';

/**
 * Runs the CLI and returns the exit code: 0 done, 1 refused by the sandbox (or a run that failed), 2 a usage error,
 * 3 no sandbox reachable. An error is one line on stderr: `va-sandbox: …`, or with `--json` one JSON object
 * (`code`, `message`, `details`, `status`) for scripts.
 */
export async function main(argv: string[]): Promise<number> {
  // A reader that stops early (`va-sandbox events | head -3`) is no error: stop quietly.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    process.exit(process.exitCode ?? 0);
  });
  const program = new Command('va-sandbox')
    .description(
      'Local sandbox of the VA payments and clients API: payments, transfers, a sandbox clock and real callbacks',
    )
    .version(version, '-v, --version')
    // Options belong to the command they follow, so `start --api-key` (accepted keys) and
    // `payments list --api-key` (the key to send) can both exist.
    .enablePositionalOptions();
  globalOptions(program)
    .addCommand(startCommand())
    .addCommand(receiverCommand())
    .addCommand(paymentsCommand())
    .addCommand(transferCommand())
    .addCommand(triggerCommand())
    .addCommand(clientsCommand())
    .addCommand(invoicesCommand())
    .addCommand(ledgerCommand())
    .addCommand(eventsCommand())
    .addCommand(deliveriesCommand())
    .addCommand(requestsCommand())
    .addCommand(listenCommand())
    .addCommand(faultsCommand())
    .addCommand(clockCommand())
    .addCommand(hubCommand())
    .addCommand(resetCommand())
    .addCommand(runCommand())
    .addCommand(exportCommand())
    .addCommand(importCommand())
    .addCommand(checkCommand())
    .addCommand(scenarioCommand())
    .addCommand(uiCommand())
    .addCommand(completionCommand())
    .addCommand(completeCommand(), { hidden: true });
  example(
    program,
    'va-sandbox start',
    'va-sandbox payments create --amount 1500 --lock amount --json',
    'va-sandbox --url http://127.0.0.1:4580 --api-key sk_ci_42 payments list',
  );
  const json = argv.includes('--json');
  testable(program, json);
  let ran: Command = program;
  program.hook('preAction', (_program, command) => {
    ran = command;
  });
  try {
    await program.parseAsync(argv, { from: 'user' });
    return 0;
  } catch (thrown) {
    const error = thrown instanceof SandboxApiError ? namingFlags(thrown, ran) : thrown;
    if (error instanceof CommanderError) {
      // Help and version are "errors" to commander; they are successes here. Commander printed the rest.
      return error.exitCode === 0 ? 0 : 2;
    }
    const { code, status, details, exit } =
      error instanceof SandboxApiError
        ? { code: error.code as string, status: error.status as number | null, details: error.details, exit: 1 }
        : error instanceof UnreachableError || error instanceof NotASandboxError
          ? { code: 'NO_SANDBOX', status: null, details: [], exit: 3 }
          : error instanceof UsageError
            ? { code: 'USAGE', status: null, details: [], exit: 2 }
            : { code: 'FAILED', status: null, details: [], exit: 1 };
    const message = oneLine((error as Error).message);
    // The API's own message, without the code it is shown with to people (`NOT_FOUND: …`).
    const own = error instanceof SandboxApiError ? oneLine(error.reason) : message;
    process.stderr.write(
      json ? `${JSON.stringify({ code, message: own, details, status })}\n` : `va-sandbox: ${message}\n`,
    );
    return exit;
  }
}

/** A message on one line, however it was written (a JSON parser's error spans two). */
const oneLine = (text: string): string => text.trim().replace(/\s*\n\s*/g, ' ');

/**
 * Commander suggests a command for a typo (a few letters off), never for the start of one (`pay`, too many letters
 * short of `payments`): an unknown command with no suggestion gets the commands it starts, in commander's words.
 */
function withCommandsStarting(command: Command, text: string): string {
  const typed = /^error: unknown command '(.+)'$/.exec(text.trim())?.[1];
  if (typed === undefined) return text;
  const names = command
    .createHelp()
    .visibleCommands(command)
    .map((sub) => sub.name())
    .filter((sub) => sub.startsWith(typed));
  if (names.length === 0) return text;
  return `${text.trimEnd()}\n(Did you mean ${names.length > 1 ? `one of ${names.join(', ')}` : names[0]}?)`;
}

/**
 * Every command throws instead of exiting (so `main` picks the exit code) and reports a usage error as one line,
 * in the same `va-sandbox: …` form as every other error, pointing at the command's help.
 */
function testable(command: Command, json: boolean): void {
  let name = command.name();
  for (let at = command.parent; at; at = at.parent) name = `${at.name()} ${name}`;
  command.exitOverride().configureOutput({
    writeErr: (text) => process.stderr.write(text),
    // Commander puts its suggestion ("Did you mean …?") on a line of its own: the error stays one line.
    outputError: (text, write) => {
      const message = `${oneLine(withCommandsStarting(command, text)).replace(/^error: /, '')} (see ${name} --help)`;
      write(
        json
          ? `${JSON.stringify({ code: 'USAGE', message, details: [], status: null })}\n`
          : `va-sandbox: ${message}\n`,
      );
    },
  });
  for (const sub of command.commands) testable(sub, json);
}
