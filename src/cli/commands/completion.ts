import { Argument, Command } from 'commander';
import { example } from '../context.js';

const SHELLS = ['bash', 'zsh', 'fish'];
const NAMES = ['completion', 'complete'];

/**
 * `completion <shell>`: a completion script for the shell, written by @bomb.sh/tab. The script asks the CLI itself
 * what completes a line, through the hidden `complete -- <words>`. Both read the commands, subcommands and options
 * from the program as it is, so a command added later completes too. The library loads inside the action only.
 */
export function completionCommand(): Command {
  const command = new Command('completion')
    .description('Print a shell completion script: commands, subcommands and options complete with Tab')
    .addArgument(new Argument('<shell>', 'the shell').choices(SHELLS))
    .action(async (shell: string, _opts, cmd: Command) =>
      (await completer(cmd)).setup('va-sandbox', 'va-sandbox', shell),
    );
  return example(
    command,
    'va-sandbox completion bash >> ~/.bashrc',
    'va-sandbox completion zsh > "${fpath[1]}/_va-sandbox"',
    'va-sandbox completion fish > ~/.config/fish/completions/va-sandbox.fish',
  );
}

/** `complete -- <words>`: what completes the last word, one per line, as the completion scripts ask. Hidden. */
export function completeCommand(): Command {
  const command = new Command('complete')
    .description('What completes a command line, for the completion scripts')
    .usage('-- [words...]')
    .argument('[words...]', 'the words typed after va-sandbox, the last one being completed')
    .allowUnknownOption()
    .action(async (words: string[], _opts, cmd: Command) => (await completer(cmd)).parse(words));
  return example(command, 'va-sandbox complete -- payments cr');
}

/** The library's completions of the program: its commander adapter, given the program without these two commands. */
async function completer(command: Command) {
  const { default: tab } = await import('@bomb.sh/tab/commander');
  const program = command.parent!;
  // The adapter adds its own `completion` and `complete` (run here by hand instead): ours make way, as the
  // process ends with this command.
  const commands = program.commands as Command[];
  commands.splice(0, commands.length, ...commands.filter((sub) => !NAMES.includes(sub.name())));
  const completion = tab(program, { completionCommandName: 'completion' });
  // Completed as this command is: its description, and no powershell (which the adapter offers).
  const own = completion.commands.get('completion');
  if (own)
    own.description = command.name() === 'completion' ? command.description() : completionCommand().description();
  const shell = own?.arguments.get('shell');
  if (shell) shell.handler = (complete) => SHELLS.forEach((name) => void complete(name, ''));
  return completion;
}
