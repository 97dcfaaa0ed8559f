// The options of `start`, declared once: their flags, variables and the JSON Schema of a config file.
import { InvalidArgumentError, Option } from 'commander';
import {
  DEFAULT_BUFFER_BUDGET,
  DEFAULT_DATA,
  DEFAULT_HOST,
  DEFAULT_JOURNAL,
  DEFAULT_PORT,
} from '../sandbox/runtime/defaults.js';
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

export type JsonSchema = Record<string, unknown>;

export interface StartOption {
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
export const SIZE: JsonSchema = { type: ['integer', 'string'], minimum: 1, pattern: '^[0-9]+(B|KiB|MiB|GiB)?$' };

/**
 * Every option of `start`, declared once: its flag, its `VA_SANDBOX_*` variable (a compose file, a CI job or a dev
 * container sets those rather than spell out flags) and its key in a `--config` file, whose JSON Schema
 * (`config.schema.json`) is made from this list too. A flag wins over its variable, which wins over the file.
 */
export const START_OPTIONS: StartOption[] = [
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
export const configKey = (option: StartOption): string =>
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
