import type { IncomingMessage } from 'node:http';
import type { Context } from 'hono';
import { SandboxError } from '../../core/index.js';
import { type Env, type Fail, header } from './routes/kit.js';

export const MIB = 1024 * 1024;
const IMPORT_PATH = '/sandbox/v1/import';
/** The contract's body limit, and the larger one of an imported account (a whole incident, handed over). */
const bodyLimit = (path: string): number => (path === IMPORT_PATH ? 512 * MIB : MIB);

/**
 * The middleware that reads a request's body (`c.get('body')`) before its route runs. An import holds its whole body,
 * parsed, several times its size: one at a time per server (per app), the next is told to wait.
 */
export function requestBodies(fail: Fail) {
  let importBusy = false;
  return async (c: Context<Env>, next: () => Promise<void>) => {
    const importing = c.req.path === IMPORT_PATH && c.req.method === 'POST';
    if (importing && importBusy) {
      const error = new SandboxError(
        'RATE_LIMIT_EXCEEDED',
        'Another import is in progress on this server; imports run one at a time',
        ['(request): another import is in progress'],
      );
      // Its body is not read, so the connection cannot carry another request.
      return fail(c, error, { 'Retry-After': '1', Connection: 'close' });
    }
    importBusy ||= importing;
    try {
      c.set('body', await readBody(c.req.raw, bodyLimit(c.req.path), header(c, 'content-length'), c.env?.incoming));
      await next();
    } finally {
      if (importing) importBusy = false;
    }
  };
}

/**
 * The raw body as text, refused with 413 past the limit (by its Content-Length, or as it streams in). Under the
 * Node server it is read from the incoming message itself: asking the Request for its body makes the adapter
 * build a whole fetch Request (streams, abort signal), the largest cost of a small POST.
 */
async function readBody(
  request: Request,
  limit: number,
  length: string | undefined,
  incoming?: IncomingMessage,
): Promise<string> {
  if (Number(length ?? 0) > limit) throw tooLarge(limit);
  if (request.method === 'GET' || request.method === 'HEAD') return '';
  if (incoming) return (await readIncoming(incoming, limit)).toString('utf8');
  if (!request.body) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of request.body) {
    size += chunk.length;
    if (size > limit) throw tooLarge(limit);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The client closed the connection before the body it announced arrived. */
export class ClientGone extends Error {}

const tooLarge = (limit: number) => new SandboxError('PAYLOAD_TOO_LARGE', `Request body is over ${limit / MIB} MiB`);

/**
 * An incoming message's body, by its events: an async iterator over it (a promise per chunk, and the listeners that
 * watch for its end) cost a create more than the rest of reading it.
 */
export function readIncoming(incoming: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const data = (chunk: Buffer) => {
      size += chunk.length;
      chunks.push(chunk);
      if (size <= limit) return;
      // The rest is not kept: after the answer (which closes the connection) the adapter reads it to its end.
      incoming.off('data', data);
      chunks.length = 0;
      reject(tooLarge(limit));
    };
    incoming.on('data', data);
    incoming.on('end', () => resolve(Buffer.concat(chunks, size)));
    // An incoming message errs only when its connection is gone (aborted, reset) before its body ended.
    incoming.on('error', () => reject(new ClientGone()));
    // Closed before its end: the client went away.
    incoming.on('close', () => {
      if (!incoming.readableEnded) reject(new ClientGone());
    });
  });
}
