import type { Command } from 'commander';
import { SandboxApiError } from '../client/api-client.js';

/**
 * API errors in the words the user typed: a detail about a request field (`total: Too small…`) names the flag that
 * filled it (`--amount: Too small…`). An option whose name is the field's (`--callback-url`, callbackUrl) is found by
 * itself; a command whose options fill fields of other names says so with `fieldFlags`.
 */
const renamed = new WeakMap<Command, Record<string, string>>();

/** The request fields (or field paths, `from.cbu`) this command's flags fill under another name: `{total: '--amount'}`. */
export function fieldFlags<C extends Command>(command: C, flags: Record<string, string>): C {
  renamed.set(command, { ...renamed.get(command), ...flags });
  return command;
}

/** The flag for an API field path (`total`, `from.cbu`, `events.1`, `metadata.order`): its own, else its parent's. */
function flagOf(command: Command, path: string): string | undefined {
  const segments = path.split('.');
  for (let n = segments.length; n > 0; n--) {
    const field = segments.slice(0, n).join('.');
    const flag =
      renamed.get(command)?.[field] ?? command.options.find((option) => option.attributeName() === field)?.long;
    if (flag) return flag;
  }
  return undefined;
}

/** A problem's text with the renamed fields it mentions as their flags ("must be less than total": `--amount`). */
function inFlags(command: Command, problem: string): string {
  let text = problem;
  for (const [field, flag] of Object.entries(renamed.get(command) ?? {}))
    text = text.replace(new RegExp(`(?<![\\w.-])${field.replaceAll('.', '\\.')}(?![\\w.])`, 'g'), flag);
  return text;
}

/**
 * The error with each detail's field path replaced by the flag the command took it from, where the message quotes
 * the detail; else the flags are named after it. `details` stay the API's own (field paths, for scripts).
 */
export function namingFlags(error: SandboxApiError, command: Command): SandboxApiError {
  let reason = error.reason;
  const unquoted = new Set<string>();
  for (const detail of error.details) {
    const at = detail.indexOf(': ');
    const flag = at > 0 ? flagOf(command, detail.slice(0, at)) : undefined;
    if (!flag) continue;
    if (reason.includes(detail)) reason = reason.replace(detail, `${flag}: ${inFlags(command, detail.slice(at + 2))}`);
    else unquoted.add(flag);
  }
  if (unquoted.size > 0) reason = `${reason} (${[...unquoted].join(', ')})`;
  return reason === error.reason ? error : new SandboxApiError(error.status, error.code, reason, error.details);
}
