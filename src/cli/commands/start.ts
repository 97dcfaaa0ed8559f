import { Command } from 'commander';
import { jsonLine, type LogEntry, lineWriter, logLine } from '../../sandbox/http/server-log.js';
import { applyConfig } from '../config-file.js';
import { DEFAULT_API_KEY, example, given } from '../context.js';
import { progressWanted, serverWorkLine } from '../progress.js';
import { apiKeyProblem, startOptions } from '../start-options.js';
import { version } from '../version.js';

/** A switch set by its variable to `0`, `false` or `no` is off (commander turns it on for any value). */
function switchesOff(cmd: Command, opts: Record<string, unknown>): void {
  for (const option of cmd.options) {
    const name = option.attributeName();
    if (
      option.isBoolean() &&
      option.envVar &&
      cmd.getOptionValueSource(name) === 'env' &&
      /^(0|false|no)$/i.test(process.env[option.envVar] ?? '')
    ) {
      opts[name] = undefined;
    }
  }
}

/**
 * The server's URL as one can connect to it: bound to every interface (0.0.0.0, ::, as in the container), it is
 * reached on loopback, which the Host guard always lets in.
 */
function reachable(url: string): string {
  const parsed = new URL(url);
  if (parsed.hostname === '0.0.0.0') parsed.hostname = '127.0.0.1';
  if (parsed.hostname === '[::]') parsed.hostname = 'localhost';
  return parsed.origin;
}

/**
 * The API keys the server accepts: `va-sandbox --api-key K start` means the same as `va-sandbox start --api-key K`
 * (a flag, over a config file's keys). Undefined: any key.
 */
function acceptedKeys(cmd: Command, opts: Record<string, unknown>): string[] | undefined {
  const programKey = given<string>(cmd.parent!, 'apiKey');
  const programKeyProblem = programKey === undefined ? undefined : apiKeyProblem(programKey);
  if (programKeyProblem) cmd.error(`option '--api-key <key>' ${programKeyProblem}`);
  const ownKeys = cmd.getOptionValueSource('apiKey') === 'config' && programKey !== undefined ? undefined : opts.apiKey;
  return (ownKeys as string[] | undefined) ?? (programKey === undefined ? undefined : [programKey]);
}

/** The lines a started server prints: where it listens, where its state is, the key to use and a request to try. */
function startBanner(
  server: { url: string; dataPath: string | null },
  keep: number | undefined,
  apiKeys: string[] | undefined,
): string {
  const key = apiKeys?.[0] ?? DEFAULT_API_KEY;
  return [
    `va-sandbox ${version} listening on ${server.url}`,
    `  data:    ${server.dataPath ?? '(memory only)'}${keep ? ` (ended payments kept ${keep} days of sandbox clock)` : ''}`,
    `  API key: ${key}${apiKeys ? '' : '  (any Bearer key works; each key is its own account)'}`,
    `  try:     curl -s ${reachable(server.url)}/api/v1/va-payments -H 'Authorization: Bearer ${key}'`,
    '',
  ].join('\n');
}

/**
 * Null once the server is told to stop; the error if its database is found damaged first (a large database is
 * checked while the server answers: found damaged, the server stops with a start's line).
 */
function stoppedOrDamaged(stopped: Promise<void>, checked: Promise<unknown>): Promise<Error | null> {
  const damaged = checked.then(
    () => new Promise<never>(() => {}),
    (error: Error) => error,
  );
  return Promise.race([stopped.then(() => null), damaged]);
}

export function startCommand(): Command {
  const command = new Command('start').description('Start the sandbox server (the only writer of its state database)');
  for (const option of startOptions()) command.addOption(option);
  command.action(async (flags: { config?: string }, cmd: Command) => {
    if (flags.config !== undefined) applyConfig(cmd, flags.config);
    const opts = cmd.opts();
    switchesOff(cmd, opts);
    // Loaded here, so the other commands never pay for the server's modules (hono, node:sqlite, undici).
    const { startServer } = await import('../../sandbox/http/server.js');
    const apiKeys = acceptedKeys(cmd, opts);
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
      journal: opts.journal,
      bufferBudget: opts.bufferBudget,
      log: (line) => process.stderr.write(`${line}\n`),
      ...(opts.quiet
        ? {}
        : { onLog: (entry: LogEntry) => requestLog.write(opts.log === 'json' ? jsonLine(entry) : logLine(entry)) }),
      version,
      ownsProcess: true,
      onServerWork: serverWorkLine(progressWanted(opts.quiet === true)),
    });
    // With --log json, stdout holds only the log's JSON lines.
    const banner = opts.log === 'json' && !opts.quiet ? process.stderr : process.stdout;
    banner.write(startBanner(server, opts.keep, apiKeys));
    // The callback client, loaded now rather than at the first callback (the deliverer's import then finds it loaded):
    // no module can be read once the process is out of file descriptors (EMFILE), and callbacks and the stop would fail.
    import('undici').catch(() => {});
    const refused = await stoppedOrDamaged(stopped, server.checked);
    await server.close();
    requestLog.flush();
    if (refused) throw refused;
    banner.write(
      server.dataPath === null
        ? 'va-sandbox stopped; it kept nothing (--memory)\n'
        : `va-sandbox stopped; state saved in ${server.dataPath}\n`,
    );
  });
  return example(
    command,
    'va-sandbox start --port 4580 --data ./.va-sandbox/state.db',
    'va-sandbox start --memory --api-key sk_ci_1 --api-key sk_ci_2',
    'va-sandbox start --config va-sandbox.json',
  );
}
