// Reading a `start --config` file and applying its values to the options no flag or variable gave.
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import type { Command } from 'commander';
import { notAFile } from '../sandbox/store/file-kind.js';
import { configKey, type JsonSchema, SIZE, START_OPTIONS, type StartOption } from './start-options.js';

/** The most a config file may hold: a few hundred bytes in practice; a larger one is not a config file. */
export const CONFIG_MAX_BYTES = 1024 * 1024;

/**
 * A config file's text, read only from a regular file of at most `CONFIG_MAX_BYTES`: opened without waiting (a FIFO
 * would block the open until a writer came) and looked at before a byte is read (a device such as /dev/zero never
 * ends). Throws the problem in words.
 */
function readConfig(file: string): string {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    throw new Error(`cannot read it (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  try {
    const stat = fstatSync(fd);
    const what = notAFile(stat);
    if (what !== null) throw new Error(`not a regular file (${what})`);
    if (stat.size > CONFIG_MAX_BYTES) {
      throw new Error(`${stat.size} bytes, over the ${CONFIG_MAX_BYTES} a config file may hold`);
    }
    // One byte past the cap: a file that grew since its size was read is refused too.
    const bytes = Buffer.alloc(CONFIG_MAX_BYTES + 1);
    let length = 0;
    let read = -1;
    while (read !== 0 && length < bytes.length) {
      read = readSync(fd, bytes, length, bytes.length - length, null);
      length += read;
    }
    if (length > CONFIG_MAX_BYTES) throw new Error(`over the ${CONFIG_MAX_BYTES} bytes a config file may hold`);
    return bytes.toString('utf8', 0, length);
  } finally {
    closeSync(fd);
  }
}

/**
 * Applies a `--config` file to the options neither a flag nor a variable gave (their value is the default, or none).
 * An unreadable file, an unknown key or a value of the wrong kind is a usage error (exit 2) naming it.
 */
export function applyConfig(cmd: Command, file: string): void {
  const fail = (problem: string): never => cmd.error(`config ${file}: ${problem}`);
  let text = '';
  try {
    text = readConfig(file);
  } catch (error) {
    fail((error as Error).message);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (error) {
    fail(`not JSON: ${(error as Error).message}`);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
    fail('must be a JSON object of start options, e.g. {"port": 4580}');
  const byKey = new Map(START_OPTIONS.map((spec) => [configKey(spec), spec]));
  for (const [key, value] of Object.entries(doc as Record<string, unknown>)) {
    if (key === '$schema') continue;
    const spec = byKey.get(key);
    if (!spec) fail(`unknown key "${key}" (the keys are ${[...byKey.keys()].join(', ')})`);
    const option = cmd.options.find((o) => o.envVar === `VA_SANDBOX_${spec!.env}`)!;
    const name = option.attributeName();
    const source = cmd.getOptionValueSource(name);
    let parsed: unknown;
    try {
      parsed = configValue(spec!, value);
    } catch (error) {
      fail(`${key} ${(error as Error).message}`);
    }
    if (source === undefined || source === 'default') cmd.setOptionValueWithSource(name, parsed, 'config');
  }
}

/** A config value as its flag would give it: checked for its JSON kind, then by the flag's own parser. */
function configValue(spec: StartOption, value: unknown): unknown {
  if (spec.json === SIZE) {
    if (!Number.isInteger(value) && typeof value !== 'string')
      throw new Error('must be a number of bytes or a size such as "256MiB"');
    return spec.parse!(String(value));
  }
  const kind = spec.json.type ?? 'string';
  if (kind === 'boolean') {
    if (typeof value !== 'boolean') throw new Error('must be true or false');
    return value || undefined;
  }
  const items = kind === 'array' ? value : [value];
  const itemKind = kind === 'array' ? (spec.json.items as JsonSchema).type : kind;
  if (
    !Array.isArray(items) ||
    items.some((item) => (itemKind === 'integer' ? !Number.isInteger(item) : typeof item !== 'string'))
  ) {
    throw new Error(
      kind === 'array'
        ? `must be a list of ${itemKind === 'integer' ? 'whole numbers' : 'strings'}`
        : `must be ${itemKind === 'integer' ? 'a whole number' : 'a string'}`,
    );
  }
  if (kind === 'array' && spec.json.minItems && (value as unknown[]).length === 0) throw new Error('must not be empty');
  if (spec.choices && !spec.choices.includes(value as string))
    throw new Error(`must be one of ${spec.choices.map((c) => `"${c}"`).join(', ')}`);
  // The flag's parser takes the text a flag or variable would hold: a list as comma-separated items.
  return spec.parse ? spec.parse(items.join(',')) : value;
}
