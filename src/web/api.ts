/** The sandbox's public and sandbox endpoints, called with the key the user gave, like any client. */

export const DEFAULT_KEY = 'sk_sandbox';
const KEY_STORAGE = 'va-sandbox.apiKey';

export const storedKey = (): string | null => localStorage.getItem(KEY_STORAGE);
export const storeKey = (key: string): void => localStorage.setItem(KEY_STORAGE, key);

/**
 * The key a shared link carries (`?key=sk_...`): kept as this browser's key, then taken out of the address bar so
 * it is not shared further by accident (nor left in the history). The key the page starts with: that one, else the
 * one kept, else the CLI's default (a sandbox started without --api-key takes any key).
 */
export function startingKey(): string {
  const url = new URL(location.href);
  const linked = url.searchParams.get('key')?.trim();
  if (linked) {
    storeKey(linked);
    url.searchParams.delete('key');
    history.replaceState(history.state, '', url.pathname + url.search + url.hash);
  }
  return storedKey() ?? DEFAULT_KEY;
}

export interface Pagination {
  page: number;
  limit: number;
  total: number;
  totalPages: number;
}

export interface ListPage<T> {
  items: T[];
  pagination: Pagination;
}

/** The contract's error envelope, thrown for any answer that is not 2xx. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: string[] = [],
  ) {
    super(message);
  }
}

type Query = Record<string, string | number | undefined>;

export interface CallOptions {
  query?: Query;
  body?: unknown;
  signal?: AbortSignal;
}

export function queryString(query: Query = {}): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined && value !== '') params.set(name, String(value));
  const text = params.toString();
  return text ? `?${text}` : '';
}

/** `onRefused`: told when the sandbox answers 401 (it was started with --api-key, and this key is not one of them). */
export function createApi(key: string, onRefused: () => void = () => {}) {
  /** The raw response, for the live stream and the export download. */
  const send = async (method: string, path: string, options: CallOptions = {}) => {
    const response = await fetch(path + queryString(options.query), {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body),
      signal: options.signal,
    });
    if (response.status === 401) onRefused();
    return response;
  };

  /** `data` of a 2xx answer; an ApiError with the envelope's code, message and details otherwise. */
  async function call<T>(method: string, path: string, options: CallOptions = {}): Promise<T> {
    const response = await send(method, path, options);
    const text = await response.text();
    let body: any = null;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      throw new ApiError(response.status, 'INVALID_RESPONSE', `${method} ${path} answered ${response.status} with a body that is not JSON`);
    }
    if (!response.ok || body?.success !== true) {
      const error = body?.error ?? {};
      throw new ApiError(response.status, error.code ?? `HTTP_${response.status}`, error.message ?? `${method} ${path} answered ${response.status}`, error.details ?? []);
    }
    return body as T;
  }

  return {
    key,
    send,
    get: async <T>(path: string, query?: Query, signal?: AbortSignal) => (await call<{ data: T }>('GET', path, { query, signal })).data,
    post: async <T>(path: string, body?: unknown, query?: Query) => (await call<{ data: T }>('POST', path, { body, query })).data,
    patch: async <T>(path: string, body?: unknown) => (await call<{ data: T }>('PATCH', path, { body })).data,
    /** A list page: `data` is the items and `pagination` sits beside it; a client's transactions (the one list the
     * contract keeps in its real shape) answer `data: {transactions, pagination}`. */
    async list<T>(path: string, query?: Query, signal?: AbortSignal): Promise<ListPage<T>> {
      const body = await call<{ data: T[] | { transactions: T[]; pagination: Pagination }; pagination?: Pagination }>('GET', path, { query, signal });
      return Array.isArray(body.data) ? { items: body.data, pagination: body.pagination! } : { items: body.data.transactions, pagination: body.data.pagination };
    },
  };
}

export type Api = ReturnType<typeof createApi>;

/** "path: problem" details (the API's and the form's own, from the same zod schemas) by their first path segment. */
export function fieldErrors(details: string[]): Record<string, string> {
  const errors: Record<string, string> = {};
  for (const detail of details) {
    const cut = detail.indexOf(': ');
    const field = cut < 0 ? '(body)' : detail.slice(0, cut).split('.')[0]!;
    const problem = cut < 0 ? detail : detail.slice(cut + 2);
    errors[field] = errors[field] ? `${errors[field]}; ${problem}` : problem;
  }
  return errors;
}
