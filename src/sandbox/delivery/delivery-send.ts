import type { Agent } from 'undici';
import type { Attempt, AttemptError } from '../../core/index.js';

export type AttemptResult = Pick<Attempt, 'responseStatus' | 'responseBody' | 'error' | 'errorMessage'>;

/** One attempt's request: the event's JSON body, as text, and its callback headers. */
export type Transport = (request: {
  url: string;
  headers: Record<string, string>;
  body: string;
}) => Promise<AttemptResult>;

/**
 * One receiver (its origin) gets at most as many attempts at once as it has connections, so none waits in the HTTP
 * client's queue with its timeout running before it is even sent.
 */
export const PER_RECEIVER = 8;

const READ_LIMIT = 64 * 1024;
const KEEP_LIMIT = 2 * 1024;

interface Http {
  request: typeof import('undici').request;
  agent: Agent;
}

/**
 * How attempts are sent: over real HTTP (undici, loaded for the first callback, not at start, where it would be a
 * quarter of the start-up time), or through `transport` (the msw handlers' `onCallback`), each cut at `timeoutMs`.
 */
export function createSender(timeoutMs: number, transport?: Transport) {
  let http: Promise<Http> | null = null;
  const client = (): Promise<Http> =>
    (http ??= import('undici').then(({ Agent, request }) => ({
      request,
      // Each phase gets the attempt's timeout too: undici's own 10 s defaults would cut a longer --callback-timeout.
      agent: new Agent({
        connections: PER_RECEIVER,
        pipelining: 1,
        connectTimeout: timeoutMs,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      }),
    })));
  return {
    async send(url: string, headers: Record<string, string>, body: string): Promise<AttemptResult> {
      return transport
        ? await withTimeout(transport({ url, headers, body }), timeoutMs)
        : await post(await client(), url, headers, body, timeoutMs);
    },
    async close(): Promise<void> {
      if (http) await (await http).agent.destroy();
    },
  };
}

/** A callback URL's receiver, as the HTTP client pools connections: scheme, host and port. */
export function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}

/** One POST: 2xx is success, a redirect is a failure (not followed), at most 64 KiB of the answer is read. */
async function post(
  { request, agent }: Http,
  url: string,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
): Promise<AttemptResult> {
  try {
    const response = await request(url, {
      method: 'POST',
      headers,
      body,
      dispatcher: agent,
      signal: AbortSignal.timeout(timeoutMs),
    });
    const responseBody = await readSome(response.body);
    const status = response.statusCode;
    const error: AttemptError | null =
      status >= 200 && status < 300 ? null : status >= 300 && status < 400 ? 'redirect' : 'http_status';
    const location = response.headers.location;
    return {
      responseStatus: status,
      responseBody,
      error,
      errorMessage:
        error === 'redirect'
          ? `redirect to ${String(location ?? '(no location)')} not followed`
          : error
            ? `HTTP ${status}`
            : null,
    };
  } catch (cause) {
    return { responseStatus: null, responseBody: null, ...classify(cause) };
  }
}

/** Reads up to 64 KiB (keeping the first 2 KiB for the log) and destroys the rest of the stream. */
async function readSome(stream: AsyncIterable<Buffer> & { destroy(): void }): Promise<string> {
  const chunks: Buffer[] = [];
  let read = 0;
  try {
    for await (const chunk of stream) {
      if (read < KEEP_LIMIT) chunks.push(chunk);
      read += chunk.length;
      if (read >= READ_LIMIT) break;
    }
  } finally {
    stream.destroy();
  }
  return Buffer.concat(chunks).subarray(0, KEEP_LIMIT).toString('utf8');
}

/** A transport's attempt, cut at the attempt timeout as an HTTP one is (a handler that never settles holds no slot). */
async function withTimeout(attempt: Promise<AttemptResult>, timeoutMs: number): Promise<AttemptResult> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<AttemptResult>((resolve) => {
    timer = setTimeout(() => resolve({ responseStatus: null, responseBody: null, ...TIMED_OUT }), timeoutMs);
  });
  try {
    return await Promise.race([attempt, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

const TIMED_OUT = { error: 'timeout', errorMessage: 'no answer within the attempt timeout' } as const;

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

function classify(cause: unknown): Pick<Attempt, 'error' | 'errorMessage'> {
  const error = cause as Error & { code?: string; cause?: { code?: string } };
  const code = error.code ?? error.cause?.code ?? '';
  const message = error.message || String(cause);
  if (error.name === 'TimeoutError' || error.name === 'AbortError' || TIMEOUT_CODES.has(code)) {
    return TIMED_OUT;
  }
  if (code === 'ECONNREFUSED') return { error: 'connection_refused', errorMessage: message };
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' || code === 'EPIPE')
    return { error: 'connection_reset', errorMessage: message };
  return { error: 'network', errorMessage: `${code ? `${code}: ` : ''}${message}` };
}
