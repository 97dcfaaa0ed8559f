import type { IncomingMessage } from 'node:http';
import { type Init, sandboxClient } from '../client/api-client.js';

/** The CLI's only way to the sandbox: its HTTP API (the server is the only writer of its database), by the package's one client. */

export type { CallOptions, Query } from '../client/api-client.js';

/** An answer: its status and its body as it streams in (a server-sent event stream never ends by itself). */
export interface HttpResponse {
  status: number;
  body: IncomingMessage;
  text(): Promise<string>;
}

export function createClient(baseUrl: string, apiKey: string) {
  return sandboxClient(baseUrl, apiKey, { fetch: (url, init) => request(baseUrl, url, init) });
}

export type Client = ReturnType<typeof createClient>;

/**
 * One request over node:http(s), which Node has loaded already: the global fetch would first load its own HTTP
 * stack, and a one-shot command pays that (about 150 ms) every time it runs.
 */
async function request(baseUrl: string, target: URL, { method, headers, body, signal }: Init): Promise<HttpResponse> {
  const { request: send } = target.protocol === 'https:' ? await import('node:https') : await import('node:http');
  try {
    return await new Promise<HttpResponse>((resolve, reject) => {
      const outgoing = send(target, { method, headers, signal }, (incoming) =>
        resolve({ status: incoming.statusCode ?? 0, body: incoming, text: () => textOf(incoming) }),
      );
      outgoing.on('error', reject);
      outgoing.end(body);
    });
  } catch (error) {
    throw unreachable(baseUrl, error);
  }
}

async function textOf(incoming: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of incoming) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** No sandbox answers at the URL (nothing listens, or it cannot be reached): exit code 3, as for a NotASandboxError. */
export class UnreachableError extends Error {
  constructor(
    message: string,
    /** The system's code (ECONNREFUSED...): `ui` starts a sandbox when none listens. */
    readonly code?: string,
  ) {
    super(message);
  }
}

function unreachable(baseUrl: string, error: unknown): Error {
  if ((error as Error).name === 'AbortError') return error as Error;
  const fault = error as Error & { code?: string; errors?: { code?: string }[] };
  // `localhost` may resolve to two addresses, refused one after the other: the codes come as an AggregateError.
  const code = fault.code ?? fault.errors?.[0]?.code;
  if (code === 'ECONNREFUSED')
    return new UnreachableError(`no sandbox at ${baseUrl} — start one with \`va-sandbox start\``, code);
  return new UnreachableError(`cannot reach ${baseUrl}: ${fault.message || code}`, code);
}
