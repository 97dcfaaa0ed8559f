import type { ErrorCode } from '../core/conventions/errors.js';
import type { Page, Pagination } from '../core/store/index.js';

/**
 * The requests under the typed client (`api-client.ts`): the key and headers on each, the JSON envelope unwrapped,
 * an error envelope thrown as `SandboxApiError`. Plain `fetch`, or any function that answers like it (the CLI's over
 * node:http).
 */

/** Query values; undefined (and empty) ones are left out, arrays are sent comma-separated. */
export type Query = Record<string, unknown>;

/** An error envelope of the API. */
export class SandboxApiError extends Error {
  override readonly name = 'SandboxApiError';
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    /** The API's message, which `message` gives after the code (`NOT_FOUND: …`). */
    readonly reason: string,
    readonly details: string[],
  ) {
    super(`${code}: ${reason}`);
  }
}

/** An answer without the sandbox's JSON envelope: something else answers at the URL. */
export class NotASandboxError extends Error {
  override readonly name = 'NotASandboxError';
  constructor(
    readonly url: string,
    readonly status: number,
  ) {
    super(`${url} answered HTTP ${status} without the sandbox's JSON envelope: is it a va-sandbox?`);
  }
}

/** What the client needs of an answer; a fetch Response has it. */
export interface Answer {
  status: number;
  text(): Promise<string>;
}

export interface Init {
  method: string;
  headers: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
}

export interface CallOptions {
  body?: unknown;
  query?: Query;
  signal?: AbortSignal;
  /** Sent beside the key and the content type (an `Idempotency-Key`). */
  headers?: Record<string, string>;
}

/** A success envelope: `data`, the `message` cancel adds, and a list's `pagination`. */
export interface Envelope<T> {
  data: T;
  message?: string;
  pagination?: Pagination;
}

export interface SandboxClientOptions<A extends Answer = Response> {
  /** Default: the global fetch (so msw's `setupServer` sees the requests). */
  fetch?: (url: URL, init: Init) => Promise<A>;
  /** Sent with every request, e.g. an `Idempotency-Key`. */
  headers?: Record<string, string>;
}

/** The requests of one key to one sandbox: `send` gives the raw answer, the others the envelope's data. */
export function requests<A extends Answer = Response>(
  baseUrl: string,
  apiKey: string,
  options: SandboxClientOptions<A> = {},
) {
  const base = baseUrl.replace(/\/+$/, '');
  const doFetch = options.fetch ?? ((url: URL, init: Init) => fetch(url, init) as unknown as Promise<A>);

  /** The answer of a 2xx, as it streams in (the live stream, a download); any other answer throws what the API said. */
  async function send(method: string, path: string, request: CallOptions = {}): Promise<A> {
    const { body, query, signal, headers: extra } = request;
    const url = new URL(base + path);
    for (const [name, value] of Object.entries(query ?? {})) {
      if (value !== undefined && value !== '')
        url.searchParams.set(name, Array.isArray(value) ? value.join(',') : String(value));
    }
    const headers: Record<string, string> = { ...options.headers, ...extra, authorization: `Bearer ${apiKey}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const answer = await doFetch(url, {
      method,
      headers,
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      signal,
    });
    if (answer.status >= 200 && answer.status < 300) return answer;
    const fault = (await envelopeOf(answer))?.error;
    if (!fault?.code) throw new NotASandboxError(base, answer.status);
    throw new SandboxApiError(answer.status, fault.code, fault.message ?? '', fault.details ?? []);
  }

  /** The envelope of a 2xx answer. */
  async function call<T>(method: string, path: string, options?: CallOptions): Promise<Envelope<T>> {
    const answer = await send(method, path, options);
    const envelope = await envelopeOf(answer);
    if (envelope?.success !== true) throw new NotASandboxError(base, answer.status);
    return envelope;
  }

  const get = async <T>(path: string, query?: Query) => (await call<T>('GET', path, { query })).data;
  /** One page of a list: `data` and `pagination`, as the API answers it. */
  const list = async <T>(path: string, query?: Query): Promise<Page<T>> => {
    const { data, pagination } = await call<T[]>('GET', path, { query });
    return { data, pagination: pagination! };
  };

  /** Every item of a list, page after page. */
  async function all<T>(path: string, query: Query = {}): Promise<T[]> {
    const items: T[] = [];
    for (let page = 1; ; page++) {
      const answer = await list<T>(path, { ...query, page, limit: 100 });
      items.push(...answer.data);
      if (page >= answer.pagination.totalPages) return items;
    }
  }

  return {
    base,
    apiKey,
    send,
    call,
    get,
    list,
    all,
    post: async <T>(path: string, body?: unknown, query?: Query) => (await call<T>('POST', path, { body, query })).data,
    patch: async <T>(path: string, body: unknown) => (await call<T>('PATCH', path, { body })).data,
    put: async <T>(path: string, body: unknown) => (await call<T>('PUT', path, { body })).data,
    delete: async <T>(path: string) => (await call<T>('DELETE', path)).data,
  };
}

/** What the typed client's groups of calls use. */
export type Requests = ReturnType<typeof requests<Answer>>;

/** A path segment from an id. */
export const at = (id: string | number) => encodeURIComponent(id);

/** The JSON of an answer, or null when it is not JSON. */
// biome-ignore lint/suspicious/noExplicitAny: each caller reads the envelope as the type its path answers
async function envelopeOf(answer: Answer): Promise<any> {
  try {
    return JSON.parse(await answer.text());
  } catch {
    return null;
  }
}
