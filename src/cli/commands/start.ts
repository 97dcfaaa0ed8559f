import { Command, InvalidArgumentError, Option } from 'commander';
import { DEFAULT_DATA, DEFAULT_HOST, DEFAULT_PORT } from '../../sandbox/defaults.js';
import { jsonLine, lineWriter, logLine, type LogEntry } from '../../sandbox/server-log.js';
import { DEFAULT_API_KEY, example, given } from '../context.js';
import { port, positiveInt, wholeNumber } from '../options.js';
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

/** A repeatable option's values, each occurrence possibly several separated by commas (as its variable gives them). */
const list = (value: string, previous: string[] = []): string[] => [...previous, ...value.split(',').map((item) => item.trim()).filter(Boolean)];

/**
 * Every option of `start`, each with its `VA_SANDBOX_*` variable (a compose file, a CI job or a dev container sets
 * those rather than spell out flags); a flag wins over its variable. A switch's variable turns it on unless it is
 * `0`, `false` or `no`.
 */
function startOptions(): Option[] {
  const option = (flags: string, description: string, env: string) => new Option(flags, description).env(`VA_SANDBOX_${env}`);
  return [
    option('-p, --port <port>', 'port to listen on (0 picks a free one)', 'PORT').argParser(port).default(DEFAULT_PORT),
    option('--host <host>', 'address to bind', 'HOST').default(DEFAULT_HOST),
    option('--allowed-host <name>', 'also serve requests whose Host is this name (repeatable, or comma-separated); loopback names and --host always are', 'ALLOWED_HOSTS').argParser(list),
    option('--data <path>', 'state database (SQLite)', 'DATA').default(DEFAULT_DATA),
    option('--memory', 'keep state in memory only (nothing written)', 'MEMORY'),
    option('--fsync', 'sync each group of writes to disk before answering it (survives a machine crash; slower)', 'FSYNC'),
    option('--api-key <key>', 'accept only this API key (repeatable, or comma-separated); default: any key, each its own account', 'API_KEYS').argParser(list),
    option('--rate-limit <n>', '/api/v1 requests per minute per API key (0 turns it off)', 'RATE_LIMIT').argParser(wholeNumber).default(6000),
    option('--hubs <ids>', 'accept only these paymentHubIds, comma-separated (default: any positive id, each made on first use)', 'HUBS').argParser(hubList),
    option('--retry-delays <seconds>', 'sandbox seconds before each callback retry', 'RETRY_DELAYS').argParser(delays).default([5, 25]),
    option('--callback-timeout <seconds>', 'seconds each callback attempt may take', 'CALLBACK_TIMEOUT').argParser(positiveInt).default(10),
    option('--keep <days>', 'remove ended payments, their events, deliveries and transfers after this many days of sandbox clock (clients, ledger and invoices stay); default: keep everything', 'KEEP').argParser(positiveInt),
    option('--strict-tax-id', 'check the CUIT check digit of client taxIds (off: the real examples fail it)', 'STRICT_TAX_ID'),
    option('--quiet', 'no log line per request and per callback attempt', 'QUIET'),
    option('--log <format>', 'the log of requests and callback attempts on stdout: text, or json (one object per line)', 'LOG').choices(['text', 'json']).default('text'),
  ];
}

/** A switch set by its variable to `0`, `false` or `no` is off (commander turns it on for any value). */
function switchesOff(cmd: Command, opts: Record<string, unknown>): void {
  for (const option of cmd.options) {
    const name = option.attributeName();
    if (option.isBoolean() && option.envVar && cmd.getOptionValueSource(name) === 'env' && /^(0|false|no)$/i.test(process.env[option.envVar] ?? '')) {
      opts[name] = undefined;
    }
  }
}

export function startCommand(): Command {
  const command = new Command('start').description('Start the sandbox server (the only writer of its state database)');
  for (const option of startOptions()) command.addOption(option);
  command
    .action(async (opts, cmd: Command) => {
      switchesOff(cmd, opts);
      // Loaded here, so the other commands never pay for the server's modules (hono, node:sqlite, undici).
      const { startServer } = await import('../../sandbox/server.js');
      // `va-sandbox --api-key K start` means the same as `va-sandbox start --api-key K`.
      const programKey = given<string>(cmd.parent!, 'apiKey');
      const apiKeys: string[] | undefined = opts.apiKey ?? (programKey === undefined ? undefined : [programKey]);
      const requestLog = lineWriter(process.stdout);
      // Listened for before the server listens: whoever sees it answer may stop it at once, and is not killed mid-start.
      const stopped = new Promise<void>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
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
        keepDays: opts.keep,
        log: (line) => process.stderr.write(`${line}\n`),
        ...(opts.quiet ? {} : { onLog: (entry: LogEntry) => requestLog.write(opts.log === 'json' ? jsonLine(entry) : logLine(entry)) }),
        version,
        ownsProcess: true,
      });
      const key = apiKeys?.[0] ?? DEFAULT_API_KEY;
      // With --log json, stdout holds only the log's JSON lines.
      const banner = opts.log === 'json' && !opts.quiet ? process.stderr : process.stdout;
      banner.write(
        [
          `va-sandbox ${version} listening on ${server.url}`,
          `  data:    ${server.dataPath ?? '(memory only)'}${opts.keep ? ` (ended payments kept ${opts.keep} days of sandbox clock)` : ''}`,
          `  API key: ${key}${apiKeys ? '' : '  (any Bearer key works; each key is its own account)'}`,
          `  try:     curl -s ${server.url}/api/v1/va-payments -H 'Authorization: Bearer ${key}'`,
          '',
        ].join('\n'),
      );
      // The callback client, loaded now rather than at the first callback (the deliverer's import then finds it loaded):
      // no module can be read once the process is out of file descriptors (EMFILE), and callbacks and the stop would fail.
      import('undici').catch(() => {});
      // A large database is checked while the server answers: found damaged, the server stops with a start's line.
      const damaged = server.checked.then(() => new Promise<never>(() => {}), (error: Error) => error);
      const refused = await Promise.race([stopped.then(() => null), damaged]);
      await server.close();
      requestLog.flush();
      if (refused) throw refused;
      banner.write(server.dataPath === null ? 'va-sandbox stopped; it kept nothing (--memory)\n' : `va-sandbox stopped; state saved in ${server.dataPath}\n`);
    });
  return example(command, 'va-sandbox start --port 4580 --data ./.va-sandbox/state.db', 'va-sandbox start --memory --api-key sk_ci_1 --api-key sk_ci_2');
}
