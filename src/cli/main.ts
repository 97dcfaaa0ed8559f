import { Command, CommanderError } from 'commander';
import { startCommand } from './commands/start.js';
import { version } from './version.js';

/** Runs the CLI and returns the exit code: 0 ok, 1 a failure, 2 a usage error. Errors are one line on stderr. */
export async function main(argv: string[]): Promise<number> {
  const program = new Command('va-sandbox')
    .description('Local sandbox of the VA payments and clients API: payments, transfers, a sandbox clock and real callbacks')
    .version(version, '-v, --version')
    .exitOverride()
    .configureOutput({ writeErr: (text) => process.stderr.write(text) })
    .addCommand(startCommand());
  for (const command of program.commands) command.exitOverride();
  try {
    await program.parseAsync(argv, { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version are "errors" to commander; they are successes here.
      return error.exitCode === 0 ? 0 : 2;
    }
    process.stderr.write(`va-sandbox: ${(error as Error).message}\n`);
    return 1;
  }
}
