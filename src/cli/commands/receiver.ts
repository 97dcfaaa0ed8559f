import { Command } from 'commander';
import type { ReceivedCallback } from '../../sandbox/delivery/index.js';
import { DEFAULT_HOST } from '../../sandbox/runtime/defaults.js';
import { example, globalOptions, outputOf } from '../context.js';
import { httpStatus, port, wholeNumber } from '../options.js';
import { paint } from '../render.js';

const DEFAULT_RECEIVER_PORT = 9000;

/** The headers worth reading in a callback; the rest are transport noise. */
const KEY_HEADER = /^(content-type|user-agent|x-service-.*|idempotency-key)$/i;

/**
 * `receiver`: a callback catcher, so a newcomer can watch the sandbox's callbacks before writing a handler.
 * Each request is printed (with --json, one JSON line each) and answered with --status, or 500 for the first
 * --fail-first requests, to watch the sandbox retry.
 */
export function receiverCommand(): Command {
  const command = new Command('receiver')
    .description('Catch callbacks: print each request received (method, path, key headers, body) and answer it')
    .option('-p, --port <port>', 'port to listen on (0 picks a free one)', port, DEFAULT_RECEIVER_PORT)
    .option('--host <host>', 'address to bind', DEFAULT_HOST)
    .option('--status <code>', 'HTTP status to answer with', httpStatus, 200)
    .option('--fail-first <n>', 'answer the first N requests with 500 (then --status)', wholeNumber, 0)
    .action(async (opts, cmd: Command) => {
      const out = outputOf(cmd);
      const { startReceiver } = await import('../../sandbox/delivery/receiver.js');
      const receiver = await startReceiver({
        host: opts.host,
        port: opts.port,
        status: opts.status,
        onReceive: (request) => {
          const { receivedAt, method, path, status, headers, body } = request;
          out.item({ receivedAt, method, path, status, headers, body }, () => callbackText(request));
        },
      }).catch((error: NodeJS.ErrnoException) => {
        throw error.code === 'EADDRINUSE'
          ? new Error(`port ${opts.port} on ${opts.host} is already in use; pick another with --port`)
          : error;
      });
      if (opts.failFirst > 0) receiver.failNext(opts.failFirst);
      const url = `http://${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${receiver.port}`;
      // Listened for before it says it listens: whoever reads that line may stop it at once.
      const stopped = new Promise<void>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
      out.note(`receiver listening on ${url}: use ${url}/callbacks (any path works) as a callback URL; Ctrl-C to stop`);
      await stopped;
      await receiver.close();
    });
  return example(
    globalOptions(command, 'output'),
    'va-sandbox receiver --port 9000',
    'va-sandbox receiver --port 9000 --fail-first 2      # watch the sandbox retry',
    'va-sandbox receiver --json | jq .body.eventType',
  );
}

function callbackText({ method, path, rawHeaders, body, status, receivedAt }: ReceivedCallback): string {
  const headers = rawHeaders.filter(([name]) => KEY_HEADER.test(name)).map(([name, value]) => `  ${name}: ${value}`);
  const shown = typeof body === 'string' ? body : JSON.stringify(body, null, 2);
  const answered = paint(status < 300 ? 'green' : 'red', `answered ${status}`);
  return [
    `${paint('bold', `${method} ${path}`)}  ${answered}  ${paint('dim', receivedAt)}`,
    ...headers,
    shown,
    '',
  ].join('\n');
}
