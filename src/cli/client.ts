import type { ErrorCode } from '../core/errors.js';
import type { Pagination } from '../core/pagination.js';
import { SandboxApiError } from '../sandbox/api-client.js';

/** The CLI's only way to the sandbox: its HTTP API (the server is the only writer of its database). */

/** Query parameters; undefined ones are left out, arrays are sent comma-separated. */
export type Query = Record<string, unknown>;

export interface CallOptions {
  body?: unknown;
  query?: Query;
  signal?: AbortSignal;
}

/** A success envelope: `data`, the `message` some endpoints (cancel) add, and a list's `pagination`. */
export interface Envelope<T> {
  data: T;
  message?: string;
  pagination?: Pagination;
}

/** An answer: its status and its body as it streams in (a server-sent event stream never ends by itself). */
export interface HttpResponse {
  status: number;
  body: AsyncIterable<Uint8Array>;
}

export function createClient(baseUrl: string, apiKey: string) {
  /** The raw response of a 2xx answer; any other answer throws what the API said. */
  async function send(method: string, path: string, options: CallOptions = {}): Promise<HttpResponse> {
    const target = new URL(baseUrl + path);
    for (const [name, value] of Object.entries(options.query ?? {})) {
      if (value !== undefined) target.searchParams.set(name, Array.isArray(value) ? value.join(',') : String(value));
    }
    const headers: Record<string, string> = { authorization: `Bearer ${apiKey}` };
    const body = options.body === undefined ? undefined : JSON.stringify(options.body);
    if (body !== undefined) headers['content-type'] = 'application/json';
    let response: HttpResponse;
    try {
      response = await request(target, method, headers, body, options.signal);
    } catch (error) {
      throw unreachable(baseUrl, error);
    }
    if (response.status >= 200 && response.status < 300) return response;
    const envelope = await readJson(response);
    const fault = envelope?.error;
    if (!fault?.code) throw notASandbox(baseUrl, response);
    throw new SandboxApiError(response.status, fault.code as ErrorCode, fault.message ?? '', fault.details ?? []);
  }

  return {
    url: baseUrl,
    send,
    async call<T>(method: string, path: string, options?: CallOptions): Promise<Envelope<T>> {
      const response = await send(method, path, options);
      const envelope = await readJson(response);
      if (envelope?.success !== true) throw notASandbox(baseUrl, response);
      return envelope;
    },
  };
}

export type Client = ReturnType<typeof createClient>;

/**
 * One request over node:http(s), which Node has loaded already: the global fetch would first load its own HTTP
 * stack, and a one-shot command pays that (about 150 ms) every time it runs.
 */
async function request(target: URL, method: string, headers: Record<string, string>, body: string | undefined, signal?: AbortSignal) {
  const { request: send } = target.protocol === 'https:' ? await import('node:https') : await import('node:http');
  return new Promise<HttpResponse>((resolve, reject) => {
    const outgoing = send(target, { method, headers, signal }, (incoming) => resolve({ status: incoming.statusCode ?? 0, body: incoming }));
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

async function readJson(response: HttpResponse): Promise<any> {
  const chunks: Uint8Array[] = [];
  try {
    for await (const chunk of response.body) chunks.push(chunk);
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    return null;
  }
}

/** No sandbox answers at the URL (nothing listens, or something else does): exit code 3. */
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
  if (code === 'ECONNREFUSED') return new UnreachableError(`no sandbox at ${baseUrl} — start one with \`va-sandbox start\``, code);
  return new UnreachableError(`cannot reach ${baseUrl}: ${fault.message || code}`, code);
}

const notASandbox = (baseUrl: string, response: HttpResponse) =>
  new UnreachableError(`${baseUrl} answered HTTP ${response.status} without the sandbox's JSON envelope: is it a va-sandbox?`);
