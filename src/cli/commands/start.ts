import { Command, InvalidArgumentError, Option } from 'commander';
import { DEFAULT_DATA, DEFAULT_HOST, DEFAULT_PORT } from '../../sandbox/defaults.js';
import { lineWriter, logLine, type LogEntry } from '../../sandbox/server-log.js';
import { DEFAULT_API_KEY, example, given } from '../context.js';
import { collect, port, positiveInt, wholeNumber } from '../options.js';
import { version } from '../version.js';

const delays = (value: string): number[] => {
  const list = value.split(',').map(Number);
  if (list.length === 0 || list.some((n) => !Number.isInteger(n) || n < 0)) {
    throw new InvalidArgumentError('must be whole seconds separated by commas, e.g. 5,25');
  }
  return list;
};

const hubList = (value: string): number[] => {
  const ids = value.split(',').map((id) => id.trim());
  if (ids.some((id) => !/^[1-9]\d{0,15}$/.test(id))) throw new InvalidArgumentError('must be positive whole numbers separated by commas, e.g. 123,4');
  return ids.map(Number);
};

export function startCommand(): Command {
  const command = new Command('start')
    .description('Start the sandbox server (the only writer of its state database)')
    .option('-p, --port <port>', 'port to listen on (0 picks a free one)', port, DEFAULT_PORT)
    .option('--host <host>', 'address to bind', DEFAULT_HOST)
    .option('--allowed-host <name>', 'also serve requests whose Host is this name (repeatable); loopback names and --host always are', collect)
    .option('--data <path>', 'state database (SQLite)', DEFAULT_DATA)
    .option('--memory', 'keep state in memory only (nothing written)')
    .option('--fsync', 'sync each group of writes to disk before answering it (survives a machine crash; slower)')
    .option('--api-key <key>', 'accept only this API key (repeatable); default: any key, each its own account', collect)
    .option('--rate-limit <n>', '/api/v1 requests per minute per API key (0 turns it off)', wholeNumber, 6000)
    .option('--hubs <ids>', 'accept only these paymentHubIds, comma-separated (default: any positive id, each made on first use)', hubList)
    .option('--retry-delays <seconds>', 'sandbox seconds before each callback retry', delays, [5, 25])
    .option('--callback-timeout <seconds>', 'seconds each callback attempt may take', positiveInt, 10)
    .option('--strict-tax-id', 'check the CUIT check digit of client taxIds (off: the real examples fail it)')
    .option('--quiet', 'no log line per request and per callback attempt')
    .addOption(new Option('--log <format>', 'the log of requests and callback attempts on stdout: text, or json (one object per line)').choices(['text', 'json']).default('text'))
    .action(async (opts, cmd: Command) => {
      // Loaded here, so the other commands never pay for the server's modules (hono, node:sqlite, undici).
      const { startServer } = await import('../../sandbox/server.js');
      // `va-sandbox --api-key K start` means the same as `va-sandbox start --api-key K`.
      const programKey = given<string>(cmd.parent!, 'apiKey');
      const apiKeys: string[] | undefined = opts.apiKey ?? (programKey === undefined ? undefined : [programKey]);
      const requestLog = lineWriter(process.stdout);
      const server = await startServer({
        port: opts.port,
        host: opts.host,
        allowedHosts: opts.allowedHost,
        data: opts.data,
        memory: opts.memory,
        fsync: opts.fsync,
        apiKeys,
        rateLimit: opts.rateLimit,
        retryDelays: opts.retryDelays,
        callbackTimeoutMs: opts.callbackTimeout * 1000,
        strictTaxId: opts.strictTaxId,
        hubIds: opts.hubs,
        log: (line) => process.stderr.write(`${line}\n`),
        ...(opts.quiet ? {} : { onLog: (entry: LogEntry) => requestLog.write(opts.log === 'json' ? JSON.stringify(entry) : logLine(entry)) }),
        version,
        ownsProcess: true,
      });
      const key = apiKeys?.[0] ?? DEFAULT_API_KEY;
      // With --log json, stdout holds only the log's JSON lines.
      const banner = opts.log === 'json' && !opts.quiet ? process.stderr : process.stdout;
      banner.write(
        [
          `va-sandbox ${version} listening on ${server.url}`,
          `  data:    ${server.dataPath ?? '(memory only)'}`,
          `  API key: ${key}${apiKeys ? '' : '  (any Bearer key works; each key is its own account)'}`,
          `  try:     curl -s ${server.url}/api/v1/va-payments -H 'Authorization: Bearer ${key}'`,
          '',
        ].join('\n'),
      );
      // The callback client, loaded now rather than at the first callback (the deliverer's import then finds it loaded):
      // no module can be read once the process is out of file descriptors (EMFILE), and callbacks and the stop would fail.
      import('undici').catch(() => {});
      await new Promise<void>((resolve) => {
        const stop = () => resolve();
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
      await server.close();
      requestLog.flush();
      banner.write(server.dataPath === null ? 'va-sandbox stopped; it kept nothing (--memory)\n' : `va-sandbox stopped; state saved in ${server.dataPath}\n`);
    });
  return example(command, 'va-sandbox start --port 4580 --data ./.va-sandbox/state.db', 'va-sandbox start --memory --api-key sk_ci_1 --api-key sk_ci_2');
}
