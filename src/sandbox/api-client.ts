import type { z } from 'zod';
import type { AccountExport } from '../core/account-export.js';
import type { ErrorCode } from '../core/errors.js';
import type { Page } from '../core/pagination.js';
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
  balanceView,
  clientView,
  deliveryView,
  entryView,
  eventView,
  hubView,
  invoiceView,
  transferView,
  VaPaymentView,
} from '../core/views.js';

/** Typed requests to a sandbox over HTTP, for test suites and the scenario runner. Bodies take what the API takes. */

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

export type { VaPaymentView };
export type ClientView = ReturnType<typeof clientView>;
export type TransferView = ReturnType<typeof transferView>;
export type EntryView = ReturnType<typeof entryView>;
export type InvoiceView = ReturnType<typeof invoiceView>;
export type BalanceView = ReturnType<typeof balanceView>;
export type HubView = ReturnType<typeof hubView>;
export type EventView = ReturnType<typeof eventView>;
export type DeliveryView = ReturnType<typeof deliveryView>;
export type ClockView = { now: string; offsetSeconds: number };
export type { AccountExport };

export type { Page };
/** Query values; undefined ones are left out. */
export type Query = Record<string, string | number | undefined>;

/** An error envelope of the API. */
export class SandboxApiError extends Error {
  override readonly name = 'SandboxApiError';
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly details: string[],
  ) {
    super(`${code}: ${message}`);
  }
}

export interface SandboxClientOptions {
  /** Default: the global fetch (so msw's `setupServer` sees the requests). */
  fetch?: typeof fetch;
}

export function sandboxClient(baseUrl: string, apiKey: string, options: SandboxClientOptions = {}) {
  const base = baseUrl.replace(/\/+$/, '');
  const doFetch = options.fetch ?? ((input, init) => fetch(input, init));

  /** The envelope of a 2xx answer (`data`, and `pagination` beside it on lists); any other answer throws a SandboxApiError. */
  async function send(method: string, path: string, init: { body?: unknown; query?: Query } = {}): Promise<{ data: unknown; pagination?: unknown }> {
    const url = new URL(base + path);
    for (const [name, value] of Object.entries(init.query ?? {})) if (value !== undefined) url.searchParams.set(name, String(value));
    const response = await doFetch(url, {
      method,
      headers: { authorization: `Bearer ${apiKey}`, ...(init.body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
    const text = await response.text();
    let envelope: any = null;
    try {
      envelope = JSON.parse(text);
    } catch {
      // Not JSON: reported below as not being the sandbox.
    }
    if (envelope?.success === true) return envelope;
    if (envelope?.error?.code) throw new SandboxApiError(response.status, envelope.error.code, envelope.error.message, envelope.error.details ?? []);
    throw new Error(`${method} ${url.href} answered HTTP ${response.status} without the sandbox's JSON envelope: ${text.slice(0, 200)}`);
  }

  /** `data` of a 2xx answer. */
  const request = async <T>(method: string, path: string, init?: { body?: unknown; query?: Query }): Promise<T> => (await send(method, path, init)).data as T;
  const get = <T>(path: string, query?: Query) => request<T>('GET', path, { query });
  /** One page of a list: `data` and `pagination`, as the API answers it. */
  const list = async <T>(path: string, query?: Query): Promise<Page<T>> => (await send('GET', path, { query })) as Page<T>;
  const post = <T>(path: string, body?: unknown) => request<T>('POST', path, { body });
  const patch = <T>(path: string, body: unknown) => request<T>('PATCH', path, { body });
  const at = (id: string) => encodeURIComponent(id);

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
    get: (id: string) => get<DeliveryView & { attempts: unknown[] }>(`/sandbox/v1/deliveries/${at(id)}`),
    redeliver: (id: string) => post<DeliveryView>(`/sandbox/v1/deliveries/${at(id)}/redeliver`),
    /** Sends every `held` delivery (an import's): how many went. */
    releaseAll: () => post<{ released: number }>('/sandbox/v1/deliveries/release'),
    /** Sends one `held` delivery, to `url` if given. */
    release: (id: string, url?: string) => post<DeliveryView>(`/sandbox/v1/deliveries/${at(id)}/release`, url === undefined ? undefined : { url }),
    /**
     * Resolves once no callback attempt is due: every open delivery waits for a later retry time. Call it before
     * moving the clock, so a retry counts from the failure that came before, and before reading what a receiver got.
     */
    async settle({ timeoutMs = 20_000 }: { timeoutMs?: number } = {}): Promise<void> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const { now } = await clock.get();
        const open = await deliveries.all({ status: 'pending,retrying' });
        const due = open.filter((d) => d.nextAttemptAt !== null && d.nextAttemptAt <= now);
        if (due.length === 0) return;
        if (Date.now() > deadline) throw new Error(`${due.length} callback deliveries were still due after ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    },
  };

  return {
    url: base,
    apiKey,
    request,
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
      transactions: (id: string, query?: Query) =>
        get<{ transactions: EntryView[]; pagination: Page<EntryView>['pagination'] }>(`/api/v1/clients/${at(id)}/transactions`, query),
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
    reset: () => post<{ reset: boolean }>('/sandbox/v1/reset'),
    export: () => get<AccountExport>('/sandbox/v1/export'),
    import: (doc: AccountExport | unknown) => post<{ imported: boolean; clock: ClockView; counts: Record<string, number> }>('/sandbox/v1/import', doc),
  };
}

export type SandboxClient = ReturnType<typeof sandboxClient>;
