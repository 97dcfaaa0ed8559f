import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Command } from 'commander';
import { DEFAULT_HOST } from '../../sandbox/defaults.js';
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
      let received = 0;
      const server = createServer((req, res) => {
        readBody(req).then((raw) => {
          received++;
          const answer = received <= opts.failFirst ? 500 : opts.status;
          res.writeHead(answer, { 'content-type': 'text/plain' }).end(answer < 300 ? 'ok' : `va-sandbox receiver answers ${answer}`);
          const record = { receivedAt: new Date().toISOString(), method: req.method, path: req.url, status: answer, headers: req.headers, body: parsed(raw) };
          out.item(record, () => callbackText(req, raw, answer, record.receivedAt));
        });
      });
      await new Promise<void>((resolve, reject) => {
        server.once('error', (error: NodeJS.ErrnoException) =>
          reject(error.code === 'EADDRINUSE' ? new Error(`port ${opts.port} on ${opts.host} is already in use; pick another with --port`) : error),
        );
        server.listen(opts.port, opts.host, resolve);
      });
      const { port: bound } = server.address() as AddressInfo;
      const url = `http://${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${bound}`;
      out.note(`receiver listening on ${url}: use ${url}/callbacks (any path works) as a callback URL; Ctrl-C to stop`);
      await new Promise<void>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });
  return example(
    globalOptions(command, 'output'),
    'va-sandbox receiver --port 9000',
    'va-sandbox receiver --port 9000 --fail-first 2      # watch the sandbox retry',
    'va-sandbox receiver --json | jq .body.eventType',
  );
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

function parsed(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

function callbackText(req: IncomingMessage, raw: string, answer: number, receivedAt: string): string {
  const headers: string[] = [];
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i]!;
    if (KEY_HEADER.test(name)) headers.push(`  ${name}: ${req.rawHeaders[i + 1]}`);
  }
  const body = parsed(raw);
  const shown = typeof body === 'string' ? body : JSON.stringify(body, null, 2);
  const status = paint(answer < 300 ? 'green' : 'red', `answered ${answer}`);
  return [`${paint('bold', `${req.method} ${req.url}`)}  ${status}  ${paint('dim', receivedAt)}`, ...headers, shown, ''].join('\n');
}
