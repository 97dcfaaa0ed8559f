/** The CLI's only way to the sandbox: its HTTP API, through the global fetch (the server is the only writer). */

/** Query parameters; undefined ones are left out, arrays are sent comma-separated. */
export type Query = Record<string, unknown>;

export interface CallOptions {
  body?: unknown;
  query?: Query;
  signal?: AbortSignal;
}

/** A success envelope: `data`, and the `message` some endpoints (cancel) add. */
export interface Envelope<T> {
  data: T;
  message?: string;
}

/** An error envelope of the API: shown as its code and message. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: string[] = [],
  ) {
    super(`${code}: ${message}`);
  }
}

export function createClient(baseUrl: string, apiKey: string) {
  /** The raw response of a 2xx answer; any other answer throws what the API said. */
  async function send(method: string, path: string, options: CallOptions = {}): Promise<Response> {
    const target = new URL(baseUrl + path);
    for (const [name, value] of Object.entries(options.query ?? {})) {
      if (value !== undefined) target.searchParams.set(name, Array.isArray(value) ? value.join(',') : String(value));
    }
    const headers: Record<string, string> = { authorization: `Bearer ${apiKey}` };
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    let response: Response;
    try {
      response = await fetch(target, {
        method,
        headers,
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
        signal: options.signal,
      });
    } catch (error) {
      throw unreachable(baseUrl, error);
    }
    if (response.ok) return response;
    const envelope = await readJson(response);
    const fault = envelope?.error;
    if (!fault?.code) throw notASandbox(baseUrl, response);
    throw new ApiError(response.status, fault.code, fault.message ?? '', fault.details ?? []);
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

async function readJson(response: Response): Promise<any> {
  try {
    return await response.json();
  } catch {
    return null;
  }
}

function unreachable(baseUrl: string, error: unknown): Error {
  if ((error as Error).name === 'AbortError') return error as Error;
  const cause = (error as { cause?: { code?: string; errors?: { code?: string }[]; message?: string } }).cause;
  // `localhost` may resolve to two addresses, refused one after the other: the codes come as an AggregateError.
  const code = cause?.code ?? cause?.errors?.[0]?.code;
  // The code stays on the error: `ui` starts a sandbox when none listens.
  if (code === 'ECONNREFUSED') return Object.assign(new Error(`no sandbox at ${baseUrl} — start one with \`va-sandbox start\``), { code });
  return new Error(`cannot reach ${baseUrl}: ${cause?.message ?? (error as Error).message}`);
}

const notASandbox = (baseUrl: string, response: Response) =>
  new Error(`${baseUrl} answered HTTP ${response.status} without the sandbox's JSON envelope: is it a va-sandbox?`);
