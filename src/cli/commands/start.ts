import { Command, InvalidArgumentError } from 'commander';
import { DEFAULT_DATA, DEFAULT_HOST, DEFAULT_PORT, startServer } from '../../sandbox/server.js';
import { version } from '../version.js';

export const DEFAULT_API_KEY = 'sk_sandbox';

export const port = (value: string): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError('must be a port number from 0 to 65535');
  return n;
};

const positiveInt = (value: string): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be a whole number of 1 or more');
  return n;
};

const delays = (value: string): number[] => {
  const list = value.split(',').map(Number);
  if (list.length === 0 || list.some((n) => !Number.isInteger(n) || n < 0)) {
    throw new InvalidArgumentError('must be whole seconds separated by commas, e.g. 5,25');
  }
  return list;
};

const collect = (value: string, previous: string[] = []) => [...previous, value];

export function startCommand(): Command {
  return new Command('start')
    .description('Start the sandbox server (the only writer of its data file)')
    .option('-p, --port <port>', 'port to listen on (0 picks a free one)', port, DEFAULT_PORT)
    .option('--host <host>', 'address to bind', DEFAULT_HOST)
    .option('--data <path>', 'state file', DEFAULT_DATA)
    .option('--memory', 'keep state in memory only (nothing written)')
    .option('--api-key <key>', 'accept only this API key (repeatable); default: any key, each its own account', collect)
    .option('--rate-limit <n>', 'requests per second per API key (off by default)', positiveInt)
    .option('--retry-delays <seconds>', 'sandbox seconds before each callback retry', delays, [5, 25])
    .option('--callback-timeout <seconds>', 'seconds each callback attempt may take', positiveInt, 10)
    .addHelpText('after', '\nExample:\n  $ va-sandbox start --port 4580 --data ./.va-sandbox/state.json')
    .action(async (opts) => {
      const server = await startServer({
        port: opts.port,
        host: opts.host,
        data: opts.data,
        memory: opts.memory,
        apiKeys: opts.apiKey,
        rateLimit: opts.rateLimit,
        retryDelays: opts.retryDelays,
        callbackTimeoutMs: opts.callbackTimeout * 1000,
        log: (line) => process.stderr.write(`${line}\n`),
        version,
      });
      const key = opts.apiKey?.[0] ?? DEFAULT_API_KEY;
      process.stdout.write(
        [
          `va-sandbox ${version} listening on ${server.url}`,
          `  data:    ${server.dataPath ?? '(memory only)'}`,
          `  API key: ${key}${opts.apiKey ? '' : '  (any Bearer key works; each key is its own account)'}`,
          `  try:     curl -s ${server.url}/api/v1/va-payments -H 'Authorization: Bearer ${key}'`,
          '',
        ].join('\n'),
      );
      await new Promise<void>((resolve) => {
        const stop = () => resolve();
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
      await server.close();
      process.stdout.write('va-sandbox stopped; state saved\n');
    });
}
