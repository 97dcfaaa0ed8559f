import type { z } from 'zod';
import type { AccountExport } from '../core/account-export.js';
import type { apiFaultRuleSchema, ApiFaultRuleView } from '../core/api-fault-rules.js';
import type { faultsSchema } from '../core/delivery-settings.js';
import type { ErrorCode } from '../core/errors.js';
import type { Scenario } from '../core/scenario.js';
import type { Faults } from '../core/state.js';
import type { Page, Pagination } from '../core/pagination.js';
import type {
  clientCvuSchema,
  createClientSchema,
  createInvoiceSchema,
  createVaPaymentSchema,
  debitSchema,
  ledgerEntrySchema,
  allocationSchema,
  hubPatchSchema,
  transferSchema,
  updateClientSchema,
  updateInvoiceSchema,
} from '../core/schemas.js';
import type {
  BalanceView,
  ClientView,
  ClockView,
  DeliveryDetail,
  DeliveryView,
  EntryView,
  EventView,
  ForwardingView,
  HubView,
  ImportResult,
  InvoiceView,
  TransactionsView,
  TransferView,
  VaPaymentView,
} from '../core/views.js';

/**
 * The one client of the sandbox's HTTP API: test suites (`startSandbox().client`), the scenario runner, the CLI and
 * the web page. Bodies take what the API takes; answers are typed by the zod view schemas the OpenAPI document is
 * made from. Plain `fetch`, or any function that answers like it (the CLI's over node:http).
 */

export type CreateVaPaymentBody = z.input<typeof createVaPaymentSchema>;
export type CreateClientBody = z.input<typeof createClientSchema>;
export type UpdateClientBody = z.input<typeof updateClientSchema>;
export type TransferBody = z.input<typeof transferSchema>;
export type CreateInvoiceBody = z.input<typeof createInvoiceSchema>;
export type UpdateInvoiceBody = z.input<typeof updateInvoiceSchema>;
export type DebitBody = z.input<typeof debitSchema>;
export type LedgerEntryBody = z.input<typeof ledgerEntrySchema>;
export type AllocationBody = z.input<typeof allocationSchema>;
export type HubPatchBody = z.input<typeof hubPatchSchema>;
export type CvuStatusBody = z.input<typeof clientCvuSchema>;
export type FaultsBody = z.input<typeof faultsSchema>;
export type ApiFaultRuleBody = z.input<typeof apiFaultRuleSchema>;

export type * from '../core/views.js';
export type { AccountExport, ApiFaultRuleView, Faults, Scenario };

export type { Page, Pagination };
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

export function sandboxClient<A extends Answer = Response>(baseUrl: string, apiKey: string, options: SandboxClientOptions<A> = {}) {
  const base = baseUrl.replace(/\/+$/, '');
  const doFetch = options.fetch ?? ((url: URL, init: Init) => fetch(url, init) as unknown as Promise<A>);

  /** The answer of a 2xx, as it streams in (the live stream, a download); any other answer throws what the API said. */
  async function send(method: string, path: string, { body, query, signal }: CallOptions = {}): Promise<A> {
    const url = new URL(base + path);
    for (const [name, value] of Object.entries(query ?? {})) {
      if (value !== undefined && value !== '') url.searchParams.set(name, Array.isArray(value) ? value.join(',') : String(value));
    }
    const headers: Record<string, string> = { ...options.headers, authorization: `Bearer ${apiKey}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const answer = await doFetch(url, { method, headers, body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body), signal });
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
  const post = async <T>(path: string, body?: unknown, query?: Query) => (await call<T>('POST', path, { body, query })).data;
  const patch = async <T>(path: string, body: unknown) => (await call<T>('PATCH', path, { body })).data;
  const at = (id: string | number) => encodeURIComponent(id);

  /** Every item of a list, page after page. */
  async function all<T>(path: string, query: Query = {}): Promise<T[]> {
    const items: T[] = [];
    for (let page = 1; ; page++) {
      const answer = await list<T>(path, { ...query, page, limit: 100 });
      items.push(...answer.data);
      if (page >= answer.pagination.totalPages) return items;
    }
  }

  const clock = {
    get: () => get<ClockView>('/sandbox/v1/clock'),
    advance: (seconds: number) => post<ClockView>('/sandbox/v1/clock/advance', { seconds }),
    /** Forward only: an earlier time is 409 INVALID_STATE. */
    set: (at: string) => post<ClockView>('/sandbox/v1/clock/set', { at }),
  };

  const deliveries = {
    list: (query?: Query) => list<DeliveryView>('/sandbox/v1/deliveries', query),
    all: (query?: Query) => all<DeliveryView>('/sandbox/v1/deliveries', query),
    get: (id: string) => get<DeliveryDetail>(`/sandbox/v1/deliveries/${at(id)}`),
    /** A new delivery of the same event, to `url` if given. */
    redeliver: (id: string, url?: string) => post<DeliveryDetail>(`/sandbox/v1/deliveries/${at(id)}/redeliver`, url === undefined ? undefined : { url }),
    /** Sends every `held` delivery (an import's): how many went. */
    releaseAll: () => post<{ released: number }>('/sandbox/v1/deliveries/release'),
    /** Sends one `held` delivery, to `url` if given. */
    release: (id: string, url?: string) => post<DeliveryDetail>(`/sandbox/v1/deliveries/${at(id)}/release`, url === undefined ? undefined : { url }),
    /**
     * Resolves once no callback attempt is due: every open delivery waits for a later retry time. Call it before
     * moving the clock, so a retry counts from the failure that came before, and before reading what a receiver got.
     */
    async settle({ timeoutMs = 20_000 }: { timeoutMs?: number } = {}): Promise<void> {
      // A timer says when time is up: the core reads no clock of its own.
      let late = false;
      const timer = setTimeout(() => (late = true), timeoutMs);
      try {
        for (;;) {
          const { now } = await clock.get();
          const open = await deliveries.all({ status: 'pending,retrying' });
          const due = open.filter((d) => d.nextAttemptAt !== null && d.nextAttemptAt <= now);
          if (due.length === 0) return;
          if (late) throw new Error(`${due.length} callback deliveries were still due after ${timeoutMs} ms`);
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
      } finally {
        clearTimeout(timer);
      }
    },
  };

  return {
    url: base,
    apiKey,
    send,
    call,
    vaPayments: {
      create: (body: CreateVaPaymentBody) => post<VaPaymentView>('/api/v1/va-payments', body),
      list: (query?: Query) => list<VaPaymentView>('/api/v1/va-payments', query),
      get: (id: string) => get<VaPaymentView>(`/api/v1/va-payments/${at(id)}`),
      cancel: (id: string) => post<VaPaymentView>(`/api/v1/va-payments/${at(id)}/cancel`),
    },
    clients: {
      create: (body: CreateClientBody) => post<ClientView>('/api/v1/clients', body),
      list: (query?: Query) => list<ClientView>('/api/v1/clients', query),
      get: (id: string) => get<ClientView>(`/api/v1/clients/${at(id)}`),
      update: (id: string, body: UpdateClientBody) => patch<ClientView>(`/api/v1/clients/${at(id)}`, body),
      balance: (id: string) => get<BalanceView>(`/api/v1/clients/${at(id)}/balance`),
      /** The one list whose real shape keeps its items inside `data`: `data.transactions`, `data.pagination`. */
      transactions: (id: string, query?: Query) => get<TransactionsView>(`/api/v1/clients/${at(id)}/transactions`, query),
      createInvoice: (id: string, body: CreateInvoiceBody) => post<InvoiceView>(`/api/v1/clients/${at(id)}/invoices`, body),
      updateInvoice: (id: string, invoiceId: string, body: UpdateInvoiceBody) =>
        patch<InvoiceView>(`/api/v1/clients/${at(id)}/invoices/${at(invoiceId)}`, body),
      invoices: (id: string, query?: Query) => list<InvoiceView>(`/api/v1/clients/${at(id)}/invoices`, query),
      setCvuStatus: (id: string, body: CvuStatusBody) => post<ClientView>(`/sandbox/v1/clients/${at(id)}/cvu`, body),
      createDebit: (id: string, body: DebitBody) => post<EntryView>(`/sandbox/v1/clients/${at(id)}/debits`, body),
      getInvoice: (id: string, invoiceId: string) => get<InvoiceView>(`/api/v1/clients/${at(id)}/invoices/${at(invoiceId)}`),
      createLedgerEntry: (id: string, body: LedgerEntryBody) => post<EntryView>(`/sandbox/v1/clients/${at(id)}/ledger`, body),
      allocate: (id: string, invoiceId: string, body: AllocationBody) =>
        post<EntryView>(`/sandbox/v1/clients/${at(id)}/invoices/${at(invoiceId)}/allocations`, body),
    },
    transfers: {
      create: (body: TransferBody) => post<TransferView>('/sandbox/v1/transfers', body),
      list: (query?: Query) => list<TransferView>('/sandbox/v1/transfers', query),
    },
    events: {
      list: (query?: Query) => list<EventView>('/sandbox/v1/events', query),
      all: () => all<EventView>('/sandbox/v1/events'),
    },
    deliveries,
    clock,
    hubs: {
      list: (query?: Query) => list<HubView>('/sandbox/v1/hubs', query),
      /** A hub by id, made on first use (unless the sandbox was started with `--hubs` leaving it out). */
      get: (id: number) => get<HubView>(`/sandbox/v1/hubs/${id}`),
      update: (id: number, body: HubPatchBody) => patch<HubView>(`/sandbox/v1/hubs/${id}`, body),
    },
    forwarding: {
      get: () => get<ForwardingView>('/sandbox/v1/forwarding'),
      /** Every callback attempt of the account goes to `url` instead of its configured URL. */
      set: (url: string) => call<ForwardingView>('PUT', '/sandbox/v1/forwarding', { body: { url } }).then(({ data }) => data),
      delete: () => call<ForwardingView>('DELETE', '/sandbox/v1/forwarding').then(({ data }) => data),
    },
    faults: {
      get: () => get<Faults>('/sandbox/v1/faults'),
      set: (body: FaultsBody) => call<Faults>('PUT', '/sandbox/v1/faults', { body }).then(({ data }) => data),
    },
    apiFaults: {
      list: (query?: Query) => list<ApiFaultRuleView>('/sandbox/v1/api-faults', query),
      add: (body: ApiFaultRuleBody) => post<ApiFaultRuleView>('/sandbox/v1/api-faults', body),
      remove: (id: string) => call<ApiFaultRuleView>('DELETE', `/sandbox/v1/api-faults/${at(id)}`).then(({ data }) => data),
      clear: () => call<{ deleted: number }>('DELETE', '/sandbox/v1/api-faults').then(({ data }) => data),
    },
    reset: () => post<{ reset: true }>('/sandbox/v1/reset'),
    export: () => get<AccountExport>('/sandbox/v1/export'),
    /** The account's story as a scenario file. */
    scenario: (name?: string) => get<Scenario>('/sandbox/v1/scenario', { name }),
    /** `dryRun`: only check the file and count what it holds. */
    import: (doc: AccountExport | unknown, { dryRun = false } = {}) => post<ImportResult>('/sandbox/v1/import', doc, dryRun ? { dryRun: 1 } : undefined),
  };
}

export type SandboxClient<A extends Answer = Response> = ReturnType<typeof sandboxClient<A>>;

/** The JSON of an answer, or null when it is not JSON. */
async function envelopeOf(answer: Answer): Promise<any> {
  try {
    return JSON.parse(await answer.text());
  } catch {
    return null;
  }
}
