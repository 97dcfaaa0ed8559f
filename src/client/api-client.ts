import type { z } from 'zod';
import type { AccountExport } from '../core/account-export/account-export.js';
import type { ApiFaultRuleView, apiFaultRuleSchema } from '../core/api-faults/api-faults.js';
import type { faultsSchema } from '../core/callbacks/delivery-settings.js';
import type { TriggerView, triggerSchema } from '../core/records/index.js';
import type { JournalItem } from '../core/records/request-journal.js';
import type {
  allocationSchema,
  clientCvuSchema,
  createClientSchema,
  createInvoiceSchema,
  createVaPaymentSchema,
  debitSchema,
  hubPatchSchema,
  ledgerEntrySchema,
  transferSchema,
  updateClientSchema,
  updateInvoiceSchema,
} from '../core/records/schemas.js';
import type { Faults } from '../core/records/state.js';
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
} from '../core/records/views.js';
import type { Scenario } from '../core/scenarios/scenario.js';
import type { Page, Pagination } from '../core/store/index.js';
import { type Answer, at, type Query, type Requests, requests, type SandboxClientOptions } from './http.js';

/**
 * The one client of the sandbox's HTTP API: test suites (`startSandbox().client`), the scenario runner, the CLI and
 * the web page. Bodies take what the API takes; answers are typed by the zod view schemas the OpenAPI document is
 * made from. The requests under it: `http.ts`.
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
export type TriggerBody = z.input<typeof triggerSchema>;

export type * from '../core/records/views.js';
export {
  type Answer,
  type CallOptions,
  type Init,
  NotASandboxError,
  type Query,
  SandboxApiError,
  type SandboxClientOptions,
} from './http.js';
export type { AccountExport, ApiFaultRuleView, Faults, Page, Pagination, Scenario, TriggerView };

export function sandboxClient<A extends Answer = Response>(
  baseUrl: string,
  apiKey: string,
  options: SandboxClientOptions<A> = {},
) {
  const http = requests(baseUrl, apiKey, options);
  const clock = clockCalls(http);
  return {
    url: http.base,
    apiKey,
    send: http.send,
    call: http.call,
    vaPayments: vaPaymentCalls(http),
    clients: clientCalls(http),
    transfers: {
      create: (body: TransferBody) => http.post<TransferView>('/sandbox/v1/transfers', body),
      list: (query?: Query) => http.list<TransferView>('/sandbox/v1/transfers', query),
    },
    events: {
      list: (query?: Query) => http.list<EventView>('/sandbox/v1/events', query),
      all: () => http.all<EventView>('/sandbox/v1/events'),
    },
    deliveries: deliveryCalls(http, clock),
    /** Makes one event through the operations a user would call (contract part 9). */
    trigger: (body: TriggerBody) => http.post<TriggerView>('/sandbox/v1/triggers', body),
    clock,
    ...settingCalls(http),
    reset: () => http.post<{ reset: true }>('/sandbox/v1/reset'),
    export: () => http.get<AccountExport>('/sandbox/v1/export'),
    /** The account's story as a scenario file. */
    scenario: (name?: string) => http.get<Scenario>('/sandbox/v1/scenario', { name }),
    /** `dryRun`: only check the file and count what it holds. */
    import: (doc: AccountExport | unknown, { dryRun = false } = {}) =>
      http.post<ImportResult>('/sandbox/v1/import', doc, dryRun ? { dryRun: 1 } : undefined),
  };
}

export type SandboxClient<A extends Answer = Response> = ReturnType<typeof sandboxClient<A>>;

/** Contract part 2. */
const vaPaymentCalls = (http: Requests) => ({
  create: (body: CreateVaPaymentBody) => http.post<VaPaymentView>('/api/v1/va-payments', body),
  list: (query?: Query) => http.list<VaPaymentView>('/api/v1/va-payments', query),
  get: (id: string) => http.get<VaPaymentView>(`/api/v1/va-payments/${at(id)}`),
  cancel: (id: string) => http.post<VaPaymentView>(`/api/v1/va-payments/${at(id)}/cancel`),
});

/** Contract part 3, and the sandbox's CVU switch, ledger movements and allocations. */
const clientCalls = (http: Requests) => ({
  create: (body: CreateClientBody) => http.post<ClientView>('/api/v1/clients', body),
  list: (query?: Query) => http.list<ClientView>('/api/v1/clients', query),
  get: (id: string) => http.get<ClientView>(`/api/v1/clients/${at(id)}`),
  update: (id: string, body: UpdateClientBody) => http.patch<ClientView>(`/api/v1/clients/${at(id)}`, body),
  balance: (id: string) => http.get<BalanceView>(`/api/v1/clients/${at(id)}/balance`),
  /** The one list whose real shape keeps its items inside `data`: `data.transactions`, `data.pagination`. */
  transactions: (id: string, query?: Query) =>
    http.get<TransactionsView>(`/api/v1/clients/${at(id)}/transactions`, query),
  createInvoice: (id: string, body: CreateInvoiceBody) =>
    http.post<InvoiceView>(`/api/v1/clients/${at(id)}/invoices`, body),
  updateInvoice: (id: string, invoiceId: string, body: UpdateInvoiceBody) =>
    http.patch<InvoiceView>(`/api/v1/clients/${at(id)}/invoices/${at(invoiceId)}`, body),
  invoices: (id: string, query?: Query) => http.list<InvoiceView>(`/api/v1/clients/${at(id)}/invoices`, query),
  setCvuStatus: (id: string, body: CvuStatusBody) => http.post<ClientView>(`/sandbox/v1/clients/${at(id)}/cvu`, body),
  createDebit: (id: string, body: DebitBody) => http.post<EntryView>(`/sandbox/v1/clients/${at(id)}/debits`, body),
  getInvoice: (id: string, invoiceId: string) =>
    http.get<InvoiceView>(`/api/v1/clients/${at(id)}/invoices/${at(invoiceId)}`),
  createLedgerEntry: (id: string, body: LedgerEntryBody) =>
    http.post<EntryView>(`/sandbox/v1/clients/${at(id)}/ledger`, body),
  allocate: (id: string, invoiceId: string, body: AllocationBody) =>
    http.post<EntryView>(`/sandbox/v1/clients/${at(id)}/invoices/${at(invoiceId)}/allocations`, body),
});

const clockCalls = (http: Requests) => ({
  get: () => http.get<ClockView>('/sandbox/v1/clock'),
  advance: (seconds: number) => http.post<ClockView>('/sandbox/v1/clock/advance', { seconds }),
  /** Forward only: an earlier time is 409 INVALID_STATE. */
  set: (at: string) => http.post<ClockView>('/sandbox/v1/clock/set', { at }),
});

/** The delivery log, redelivery, the release of held deliveries, and waiting until no attempt is due. */
function deliveryCalls(http: Requests, clock: ReturnType<typeof clockCalls>) {
  const deliveries = {
    list: (query?: Query) => http.list<DeliveryView>('/sandbox/v1/deliveries', query),
    all: (query?: Query) => http.all<DeliveryView>('/sandbox/v1/deliveries', query),
    get: (id: string) => http.get<DeliveryDetail>(`/sandbox/v1/deliveries/${at(id)}`),
    /** A new delivery of the same event, to `url` if given. */
    redeliver: (id: string, url?: string) =>
      http.post<DeliveryDetail>(`/sandbox/v1/deliveries/${at(id)}/redeliver`, url === undefined ? undefined : { url }),
    /** Sends every `held` delivery (an import's): how many went. */
    releaseAll: () => http.post<{ released: number }>('/sandbox/v1/deliveries/release'),
    /** Sends one `held` delivery, to `url` if given. */
    release: (id: string, url?: string) =>
      http.post<DeliveryDetail>(`/sandbox/v1/deliveries/${at(id)}/release`, url === undefined ? undefined : { url }),
    /**
     * Resolves once no callback attempt is due: every open delivery waits for a later retry time. Call it before
     * moving the clock, so a retry counts from the failure that came before, and before reading what a receiver got.
     */
    async settle({ timeoutMs = 20_000 }: { timeoutMs?: number } = {}): Promise<void> {
      // A timer says when time is up: the sandbox's clock may stand still, or jump.
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
  return deliveries;
}

/** The account's sandbox settings: hubs, forwarding, delivery faults and API fault rules. */
const settingCalls = (http: Requests) => ({
  hubs: {
    list: (query?: Query) => http.list<HubView>('/sandbox/v1/hubs', query),
    /** A hub by id, made on first use (unless the sandbox was started with `--hubs` leaving it out). */
    get: (id: number) => http.get<HubView>(`/sandbox/v1/hubs/${id}`),
    update: (id: number, body: HubPatchBody) => http.patch<HubView>(`/sandbox/v1/hubs/${id}`, body),
  },
  forwarding: {
    get: () => http.get<ForwardingView>('/sandbox/v1/forwarding'),
    /** Every callback attempt of the account goes to `url` instead of its configured URL. */
    set: (url: string) => http.put<ForwardingView>('/sandbox/v1/forwarding', { url }),
    delete: () => http.delete<ForwardingView>('/sandbox/v1/forwarding'),
  },
  faults: {
    get: () => http.get<Faults>('/sandbox/v1/faults'),
    set: (body: FaultsBody) => http.put<Faults>('/sandbox/v1/faults', body),
  },
  /** The request journal: the account's `/api/v1` requests as sent and answered, newest first. */
  requests: {
    list: (query?: Query) => http.list<JournalItem>('/sandbox/v1/requests', query),
    all: (query?: Query) => http.all<JournalItem>('/sandbox/v1/requests', query),
    get: (id: string) => http.get<JournalItem>(`/sandbox/v1/requests/${at(id)}`),
    clear: () => http.delete<{ deleted: number }>('/sandbox/v1/requests'),
  },
  apiFaults: {
    list: (query?: Query) => http.list<ApiFaultRuleView>('/sandbox/v1/api-faults', query),
    add: (body: ApiFaultRuleBody) => http.post<ApiFaultRuleView>('/sandbox/v1/api-faults', body),
    remove: (id: string) => http.delete<ApiFaultRuleView>(`/sandbox/v1/api-faults/${at(id)}`),
    clear: () => http.delete<{ deleted: number }>('/sandbox/v1/api-faults'),
  },
});
