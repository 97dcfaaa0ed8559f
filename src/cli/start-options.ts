import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { type Command, InvalidArgumentError, Option } from 'commander';
import {
  DEFAULT_BUFFER_BUDGET,
  DEFAULT_DATA,
  DEFAULT_HOST,
  DEFAULT_JOURNAL,
  DEFAULT_PORT,
} from '../sandbox/runtime/defaults.js';
import { notAFile } from '../sandbox/store/file-kind.js';
import { port, positiveInt, size, wholeNumber } from './options.js';

const delays = (value: string): number[] => {
  const list = value.split(',').map(Number);
  if (list.length === 0 || list.some((n) => !Number.isInteger(n) || n < 0)) {
    throw new InvalidArgumentError('must be whole seconds separated by commas, e.g. 5,25');
  }
  return list;
};

const hubList = (value: string): number[] => {
  const ids = value.split(',').map((id) => id.trim());
  if (ids.some((id) => !/^[1-9]\d{0,15}$/.test(id)))
    throw new InvalidArgumentError('must be positive whole numbers separated by commas, e.g. 123,4');
  return ids.map(Number);
};

/** A repeatable option's values, each occurrence possibly several separated by commas (as its variable gives them). */
const list = (value: string, previous: string[] = []): string[] => [
  ...previous,
  ...value
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean),
];

/**
 * Why the server could never match this accepted key, if it could not: a request sends it as `Authorization: Bearer
 * <key>`, one token of visible ASCII, so a key with a space (`sk ci`, `Bearer sk_x`) would refuse every request.
 */
export function apiKeyProblem(key: string): string | undefined {
  if (/^bearer\s/i.test(key)) return `"${key}" is not a key: give the key alone, without "Bearer "`;
  if (!/^[\x21-\x7e]+$/.test(key))
    return `"${key}" is not a key a request could send: a key is visible ASCII, no spaces`;
  return undefined;
}

/** The accepted API keys, each checked as a token (see `apiKeyProblem`). */
const apiKeyList = (value: string, previous: string[] = []): string[] => {
  const keys = list(value, previous);
  const problem = keys.map(apiKeyProblem).find(Boolean);
  if (problem) throw new InvalidArgumentError(problem);
  return keys;
};

type JsonSchema = Record<string, unknown>;

interface StartOption {
  flags: string;
  description: string;
  /** Its variable is `VA_SANDBOX_<env>`; its key in a config file is the same words in camelCase (`allowedHosts`). */
  env: string;
  /** The JSON its config key takes; the value is then checked by `parse`, as the flag's is. */
  json: JsonSchema;
  parse?: (value: string, previous?: never) => unknown;
  default?: unknown;
  choices?: string[];
}

const integer = (minimum: number, maximum?: number): JsonSchema => ({
  type: 'integer',
  minimum,
  ...(maximum === undefined ? {} : { maximum }),
});
const SWITCH: JsonSchema = { type: 'boolean' };
/** A size: a number of bytes, or text with a unit (`size`). */
const SIZE: JsonSchema = { type: ['integer', 'string'], minimum: 1, pattern: '^[0-9]+(B|KiB|MiB|GiB)?$' };

/**
 * Every option of `start`, declared once: its flag, its `VA_SANDBOX_*` variable (a compose file, a CI job or a dev
 * container sets those rather than spell out flags) and its key in a `--config` file, whose JSON Schema
 * (`config.schema.json`) is made from this list too. A flag wins over its variable, which wins over the file.
 */
const START_OPTIONS: StartOption[] = [
  {
    flags: '-p, --port <port>',
    description: 'port to listen on (0 picks a free one)',
    env: 'PORT',
    json: integer(0, 65535),
    parse: port,
    default: DEFAULT_PORT,
  },
  {
    flags: '--host <host>',
    description: 'address to bind',
    env: 'HOST',
    json: { type: 'string', minLength: 1 },
    default: DEFAULT_HOST,
  },
  {
    flags: '--allowed-host <name>',
    description:
      'also serve requests whose Host is this name (repeatable, or comma-separated); loopback names and --host always are',
    env: 'ALLOWED_HOSTS',
    json: { type: 'array', items: { type: 'string', minLength: 1 } },
    parse: list,
  },
  {
    flags: '--data <path>',
    description: 'state database (SQLite)',
    env: 'DATA',
    json: { type: 'string', minLength: 1 },
    default: DEFAULT_DATA,
  },
  { flags: '--memory', description: 'keep state in memory only (nothing written)', env: 'MEMORY', json: SWITCH },
  {
    flags: '--fsync',
    description: 'sync each group of writes to disk before answering it (survives a machine crash; slower)',
    env: 'FSYNC',
    json: SWITCH,
  },
  {
    flags: '--api-key <key>',
    description: 'accept only this API key (repeatable, or comma-separated); default: any key, each its own account',
    env: 'API_KEYS',
    json: { type: 'array', items: { type: 'string', pattern: '^[\\x21-\\x7e]+$' }, minItems: 1 },
    parse: apiKeyList,
  },
  {
    flags: '--rate-limit <n>',
    description: '/api/v1 requests per minute per API key (0 turns it off)',
    env: 'RATE_LIMIT',
    json: integer(0),
    parse: wholeNumber,
    default: 6000,
  },
  {
    flags: '--hubs <ids>',
    description: 'accept only these paymentHubIds, comma-separated (default: any positive id, each made on first use)',
    env: 'HUBS',
    json: { type: 'array', items: integer(1), minItems: 1 },
    parse: hubList,
  },
  {
    flags: '--retry-delays <seconds>',
    description: 'sandbox seconds before each callback retry',
    env: 'RETRY_DELAYS',
    json: { type: 'array', items: integer(0), minItems: 1 },
    parse: delays,
    default: [5, 25],
  },
  {
    flags: '--callback-timeout <seconds>',
    description: 'seconds each callback attempt may take',
    env: 'CALLBACK_TIMEOUT',
    json: integer(1),
    parse: positiveInt,
    default: 10,
  },
  {
    flags: '--keep <days>',
    description:
      'remove ended payments, their events, deliveries and transfers after this many days of sandbox clock (clients, ledger and invoices stay); default: keep everything',
    env: 'KEEP',
    json: integer(1),
    parse: positiveInt,
  },
  {
    flags: '--journal <n>',
    description: 'the newest /api/v1 requests kept per API key in the request journal (0 keeps none)',
    env: 'JOURNAL',
    json: integer(0),
    parse: wholeNumber,
    default: DEFAULT_JOURNAL,
  },
  {
    flags: '--buffer-budget <size>',
    description:
      'bytes the server may hold for slow clients, all connections together (unread answers, bodies held by API faults), e.g. 512MiB; past it, requests that would add to it get 503 (default 256MiB)',
    env: 'BUFFER_BUDGET',
    json: SIZE,
    parse: size,
    default: DEFAULT_BUFFER_BUDGET,
  },
  {
    flags: '--strict-tax-id',
    description: 'check the CUIT check digit of client taxIds (off: the real examples fail it)',
    env: 'STRICT_TAX_ID',
    json: SWITCH,
  },
  { flags: '--quiet', description: 'no log line per request and per callback attempt', env: 'QUIET', json: SWITCH },
  {
    flags: '--log <format>',
    description: 'the log of requests and callback attempts on stdout: text, or json (one object per line)',
    env: 'LOG',
    json: { enum: ['text', 'json'] },
    choices: ['text', 'json'],
    default: 'text',
  },
];

/** `ALLOWED_HOSTS` → `allowedHosts`. */
const configKey = (option: StartOption): string =>
  option.env.toLowerCase().replace(/_(\w)/g, (_, letter: string) => letter.toUpperCase());

export function startOptions(): Option[] {
  const options = START_OPTIONS.map((spec) => {
    const option = new Option(spec.flags, spec.description).env(`VA_SANDBOX_${spec.env}`);
    if (spec.parse) option.argParser(spec.parse as (value: string, previous: unknown) => unknown);
    if (spec.choices) option.choices(spec.choices);
    return spec.default === undefined ? option : option.default(spec.default);
  });
  return [
    ...options,
    new Option(
      '--config <file>',
      'read these options from a JSON file (see config.schema.json); a flag or variable wins over it',
    ).env('VA_SANDBOX_CONFIG'),
  ];
}

/** The JSON Schema of a `--config` file, shipped as config.schema.json (`node scripts/config-schema.js` writes it). */
export function configJsonSchema(): JsonSchema {
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    title: 'va-sandbox start options',
    description:
      'The options of `va-sandbox start --config FILE`, by their long names in camelCase. A flag or a VA_SANDBOX_* variable wins over the file.',
    type: 'object',
    additionalProperties: false,
    properties: {
      $schema: { type: 'string' },
      ...Object.fromEntries(
        START_OPTIONS.map((spec) => [
          configKey(spec),
          { description: `${new Option(spec.flags).long}: ${spec.description}`, ...spec.json },
        ]),
      ),
    },
  };
}

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
