import { type Pagination, type Query, SandboxApiError, sandboxClient } from '../client/api-client.js';

/** The sandbox's public and sandbox endpoints, called with the key the user gave, like any client. */

export const DEFAULT_KEY = 'sk_sandbox';
const KEY_STORAGE = 'va-sandbox.apiKey';

const storedKey = (): string | null => localStorage.getItem(KEY_STORAGE);
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

export { type Pagination, SandboxApiError };

export interface ListPage<T> {
  items: T[];
  pagination: Pagination;
}

/**
 * The package's one client on this page's origin, with the key the user gave; `onRefused`: told when the sandbox
 * answers 401 (it was started with --api-key, and this key is not one of them). Beside its typed methods, reads that
 * a page may abort (`signal`) when it moves on.
 */
export function createApi(key: string, onRefused: () => void = () => {}) {
  const client = sandboxClient(location.origin, key, {
    fetch: async (url, init) => {
      const response = await fetch(url, init);
      if (response.status === 401) onRefused();
      return response;
    },
  });
  return {
    ...client,
    key,
    get: async <T>(path: string, query?: Query, signal?: AbortSignal) =>
      (await client.call<T>('GET', path, { query, signal })).data,
    /** A list page: `data` is the items and `pagination` sits beside it; a client's transactions (the one list the
     * contract keeps in its real shape) answer `data: {transactions, pagination}`. */
    async list<T>(path: string, query?: Query, signal?: AbortSignal): Promise<ListPage<T>> {
      const { data, pagination } = await client.call<T[] | { transactions: T[]; pagination: Pagination }>('GET', path, {
        query,
        signal,
      });
      return Array.isArray(data)
        ? { items: data, pagination: pagination! }
        : { items: data.transactions, pagination: data.pagination };
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
