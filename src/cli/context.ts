import { type Command, type InvalidArgumentError, Option } from 'commander';
import { idsStartingWith, isShortId, isTooShortId, shortIdProblem } from '../client/short-id.js';
import { DEFAULT_HOST, DEFAULT_PORT } from '../sandbox/runtime/defaults.js';
import { type CallOptions, type Client, createClient } from './client.js';
import { fieldFlags } from './flags.js';
import { baseUrl, positiveInt } from './options.js';
import { createOutput, type Output, type Pagination } from './render.js';

const DEFAULT_URL = `http://${DEFAULT_HOST}:${DEFAULT_PORT}`;
export const DEFAULT_API_KEY = 'sk_sandbox';
const DEFAULT_HUB = 1;

const GLOBAL = 'Global options:';

/**
 * The global options. The program takes them before a command, and every command that uses them takes them after
 * it too (`va-sandbox payments list --json`). Options are positional, so `start` keeps its own `--api-key`.
 */
export function globalOptions(command: Command, which: 'api' | 'connection' | 'output' = 'api'): Command {
  if (which !== 'output') {
    command
      .addOption(
        new Option('--url <url>', `sandbox URL (env VA_SANDBOX_URL, default ${DEFAULT_URL})`)
          .argParser(baseUrl)
          .helpGroup(GLOBAL),
      )
      .addOption(
        new Option(
          '--api-key <key>',
          `API key: each key is its own account (env VA_SANDBOX_API_KEY, default ${DEFAULT_API_KEY})`,
        ).helpGroup(GLOBAL),
      );
  }
  // `connection`: an interactive command (`ui`) prints no JSON.
  if (which === 'connection') return command;
  return command.addOption(
    new Option('--json', "print only the JSON of the response's data on stdout").helpGroup(GLOBAL),
  );
}

/**
 * `--hub`, on the commands that send a paymentHubId or name a hub: the integrator's hub id, filled in for them. One of
 * the command's own options, not a global one: the program does not take it before a command (`VA_SANDBOX_HUB_ID` is
 * the way to set it for every command).
 */
export const hubOption = (command: Command): Command =>
  fieldFlags(command, { paymentHubId: '--hub' }).addOption(
    new Option('--hub <id>', `paymentHubId to use (env VA_SANDBOX_HUB_ID, default ${DEFAULT_HUB})`).argParser(
      positiveInt,
    ),
  );

/** `--idempotency-key`, on the commands that POST to `/api/v1` (contract part 9), as the Stripe CLI has it. */
export const idempotencyOption = (command: Command): Command =>
  command.option(
    '--idempotency-key <key>',
    'sent as the Idempotency-Key header: the same key and body again replays the first answer and makes nothing twice',
  );

/** The Idempotency-Key header of a command given `--idempotency-key`, as call options. */
export function idempotencyOf(command: Command): { headers?: Record<string, string> } {
  const key = command.getOptionValue('idempotencyKey') as string | undefined;
  return key === undefined ? {} : { headers: { 'idempotency-key': key } };
}

/** The command's hub: `--hub`, then VA_SANDBOX_HUB_ID, then 1. */
export function hubOf(command: Command): number {
  const hub = given<number>(command, 'hub');
  if (hub !== undefined) return hub;
  const fromEnv = env('VA_SANDBOX_HUB_ID');
  if (fromEnv === undefined) return DEFAULT_HUB;
  try {
    return positiveInt(fromEnv);
  } catch (error) {
    return command.error(`VA_SANDBOX_HUB_ID ${(error as InvalidArgumentError).message}`);
  }
}

/** An option's value given on the command, else before it (on the program). */
export function given<T>(command: Command, name: string): T | undefined {
  for (let at: Command | null = command; at; at = at.parent) {
    const value = at.getOptionValue(name);
    if (value !== undefined) return value as T;
  }
  return undefined;
}

const env = (name: string): string | undefined => process.env[name] || undefined;

/** The sandbox URL and API key of a command: options first, then the environment, then the defaults. */
export function connectionOf(command: Command): { url: string; apiKey: string } {
  let url = given<string>(command, 'url');
  if (url === undefined) {
    try {
      url = baseUrl(env('VA_SANDBOX_URL') ?? DEFAULT_URL);
    } catch (error) {
      command.error(`VA_SANDBOX_URL ${(error as InvalidArgumentError).message}`);
    }
  }
  const apiKey = given<string>(command, 'apiKey') ?? env('VA_SANDBOX_API_KEY') ?? DEFAULT_API_KEY;
  return { url: url!, apiKey };
}

/** What a command needs to talk to the sandbox and print. */
export function contextOf(command: Command): { client: Client; out: Output } {
  const { url, apiKey } = connectionOf(command);
  return { client: createClient(url, apiKey), out: outputOf(command) };
}

/** One API call: method, path and what it sends. */
export type Call = [method: string, path: string, options?: CallOptions];

/**
 * The action of a command that is one API call: `call` builds it from the command's arguments and options,
 * `render` prints the answer's data for people (with `--json`, the data itself is printed).
 */
export function apiAction<T>(
  call: (command: Command, ...args: string[]) => Call | Promise<Call>,
  render: (data: T, message?: string) => string,
) {
  return async function action(this: Command): Promise<void> {
    const { client, out } = contextOf(this);
    const [method, path, options] = await call(this, ...(this.processedArgs as string[]));
    const { data, message } = await client.call<T>(method, path, { ...options, ...idempotencyOf(this) });
    out.result(data, (value) => render(value, message));
  };
}

/**
 * The action of a list command: one page as a table. With `--json` it prints `{data, pagination}`, the list as the
 * API answers it (the page's items and where the page stands).
 */
export function listAction<T>(
  call: (command: Command, ...args: string[]) => Call,
  render: (items: T[], pagination: Pagination) => string,
) {
  return async function action(this: Command): Promise<void> {
    const { client, out } = contextOf(this);
    const [method, path, options] = call(this, ...(this.processedArgs as string[]));
    const { data, pagination } = await client.call<T[]>(method, path, options);
    out.result({ data, pagination: pagination! }, (list) => render(list.data, list.pagination));
  };
}

/** A wrong argument found only by asking the sandbox (a short id that names several records): exit 2, as a usage error. */
export class UsageError extends Error {}

/**
 * The record's id from what the user typed: a full id as it is; a short one (the first characters, as lists print
 * them) resolved by listing `listPath` when it names exactly one record. None found: the short id goes to the API,
 * which answers 404 NOT_FOUND. Under 4 characters it is refused before anything is sent.
 */
export async function recordId(command: Command, listPath: string, noun: string, id: string): Promise<string> {
  if (isTooShortId(id)) throw new UsageError(shortIdProblem(id, [], noun));
  if (!isShortId(id)) return id;
  const { client } = contextOf(command);
  const ids = await idsStartingWith(async (page, limit) => {
    const { data, pagination } = await client.call<{ id: string }[]>('GET', listPath, { query: { page, limit } });
    return { data, pagination: pagination! };
  }, id);
  if (ids.length === 0) return id;
  if (ids.length === 1) return ids[0]!;
  throw new UsageError(shortIdProblem(id, ids, noun));
}

/** A path under `base` with each id escaped: `pathTo('/api/v1/clients', id, 'balance')`. */
export const pathTo = (base: string, ...segments: string[]): string =>
  [base, ...segments.map(encodeURIComponent)].join('/');

/** The command's own options, without the global ones: what becomes a query or a body. */
export function optionsOf(command: Command): Record<string, unknown> {
  const { url: _url, apiKey: _apiKey, json: _json, hub: _hub, idempotencyKey: _key, ...own } = command.opts();
  return own;
}

/** A change with nothing in it is a usage error, not a request. */
export function someOf(command: Command, body: Record<string, unknown>, verb: string): Record<string, unknown> {
  if (Object.values(body).every((value) => value === undefined))
    command.error(`nothing to ${verb}: give at least one option`);
  return body;
}

export const outputOf = (command: Command): Output => createOutput(given<boolean>(command, 'json') === true);

/** The `--page` and `--limit` of every list. */
export const pageOptions = (command: Command): Command =>
  command
    .option('--page <n>', 'page, from 1', positiveInt)
    .option('--limit <n>', 'items per page, 1 to 100 (default 20)', positiveInt);

/** Every command's help ends with examples. */
export const example = (command: Command, ...lines: string[]): Command =>
  command.addHelpText('after', `\nExample:\n${lines.map((line) => `  $ ${line}`).join('\n')}`);
