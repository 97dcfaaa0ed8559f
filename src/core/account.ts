import { AccountContext, type AccountDeps } from './account-context.js';
import { ApiFaults } from './api-faults.js';
import { ClientLedger } from './client-ledger.js';
import { DeliveryLog } from './delivery-log.js';
import { DueWork } from './due-work.js';
import { Events } from './events.js';
import { Hubs } from './hubs.js';
import { Idempotency } from './idempotency.js';
import type { AccountHead } from './repository.js';
import { accountHead, keyedByCaller, normalizeAccount, type AccountState, type Attempt } from './state.js';
import { prune } from './retention.js';
import { Transfers } from './transfers.js';
import { VaPayments } from './va-payments.js';

export type { AccountDeps, DeliveredEvent, LiveEvent } from './account-context.js';
export type { DueDelivery } from './delivery-log.js';
export type { ClockMove } from './due-work.js';

/** The kinds of records an import counts. */
export const COUNTED_TABLES = ['vaPayments', 'clients', 'transfers', 'events', 'deliveries', 'entries', 'invoices'] as const;

export function emptyAccountState(): AccountState {
  return {
    clockOffsetMs: 0,
    hubs: {},
    pool: {},
    vaPayments: {},
    transfers: {},
    events: {},
    deliveries: {},
    idempotency: keyedByCaller(),
    clients: {},
    entries: {},
    invoices: {},
  };
}

/**
 * One integrator account: a composition of the contract's parts, each a module that owns its kind of records (see
 * docs/architecture.md), read and written through the store's repository, which keeps their lookups. Every method
 * works on the account's sandbox clock.
 */
export class Account {
  private readonly ctx: AccountContext;
  private readonly due: DueWork;
  private readonly hubs: Hubs;
  private readonly payments: VaPayments;
  private readonly transfers: Transfers;
  private readonly ledger: ClientLedger;
  private readonly events: Events;
  private readonly log: DeliveryLog;
  private readonly idempotency: Idempotency;
  private readonly apiFaultRules: ApiFaults;

  constructor(
    readonly key: string,
    head: AccountHead,
    deps: AccountDeps,
  ) {
    const ctx = (this.ctx = new AccountContext(key, head, deps));
    // What falls due at one instant is done in this order: expiries, delayed CVUs, idempotency keys.
    const handlers = {
      expiry: (id: string, at: number) => this.payments.expireDue(id, at),
      cvu: (id: string, at: number) => this.ledger.provisionDue(id, at),
      idempotency: (key: string, at: number) => this.idempotency.forget(key, at),
    };
    this.due = new DueWork(ctx, handlers, (inFlight) => this.log.nextRetryAt(inFlight));
    this.log = new DeliveryLog(ctx);
    this.events = new Events(ctx, this.log);
    this.hubs = new Hubs(ctx);
    this.ledger = new ClientLedger(ctx, this.hubs);
    this.payments = new VaPayments(ctx, this.hubs, this.events, this.log);
    this.transfers = new Transfers(ctx, this.hubs, this.payments, this.ledger, this.events);
    this.idempotency = new Idempotency(ctx);
    this.apiFaultRules = new ApiFaults(ctx);
  }

  /** The account's head: its clock offset, forwarding and faults. */
  get head(): AccountHead {
    return this.ctx.head;
  }

  /** The whole account as the store keeps it (an export, a recording); `unreadable`: see `Storage.read`. */
  read(unreadable?: string[]): AccountState {
    return this.ctx.deps.storage.read(this.key, unreadable) ?? { ...emptyAccountState(), ...this.ctx.head };
  }

  /** How many records of each kind the account holds, as an import answers them. */
  counts() {
    return Object.fromEntries(COUNTED_TABLES.map((table) => [table, this.ctx.records.count(table)]));
  }

  /** Reads the head again from the store (after a write it could not keep was rolled back). */
  reload(): void {
    this.ctx.head = this.ctx.deps.storage.head(this.key) ?? accountHead(emptyAccountState());
  }

  /** A write reads the clock once: the records and events it makes carry one instant. */
  private write<T>(operation: () => T): T {
    return this.ctx.atOneInstant(operation);
  }

  /** Retention: removes what ended more than `keepMs` of sandbox clock ago (`prune`); whether anything went. */
  prune(keepMs: number): boolean {
    return prune(this.ctx.records, this.nowMs() - keepMs);
  }

  reset(): Promise<void> {
    return this.replace(emptyAccountState());
  }

  /** Swaps in a whole new state (reset, import), once it is stored; its head written again, so its due work is known. */
  async replace(next: AccountState): Promise<void> {
    const state = normalizeAccount(next);
    await this.ctx.deps.storage.replace(this.key, state);
    this.ctx.head = accountHead(state);
    this.ctx.changedHeader();
  }

  // --- the clock and due work (due-work.ts) ---
  nowMs = () => this.ctx.nowMs();
  now = () => this.ctx.now();
  clock = () => this.due.clock();
  clockMove = (kind: 'advance' | 'set', body: unknown) => this.due.clockMove(kind, body);
  nextInstant = (until: number, inFlight: ReadonlySet<string> | null) => this.due.nextInstant(until, inFlight);
  standAt = (at: number) => this.due.standAt(at);
  runDue = () => this.due.runDue();
  nextDueAt = () => this.due.nextDueAt();
  /** When this account's next due work falls due, by real time, and whether it has deliveries to send (first attempts or retries). */
  wake = (): { dueAt: number | null; sending: boolean } => {
    const due = this.due.nextDueAt();
    const sending = this.log.waitingFirst([]) > 0 || this.log.nextRetryAt(new Set()) !== null;
    return { dueAt: due === null ? null : due - (this.nowMs() - this.ctx.deps.clock.now()), sending };
  };

  // --- hubs and the CVU pool (hubs.ts) ---
  listHubs = (query: Record<string, string>) => this.hubs.listHubs(query);
  hub = (id: string) => this.hubs.hub(id);
  patchHub = (id: string, body: unknown) => this.hubs.patchHub(id, body);

  // --- VA payments (va-payments.ts; their life cycle: va-payment.ts) ---
  createVaPayment = (body: unknown) => this.write(() => this.payments.createVaPayment(body));
  getVaPayment = (id: string) => this.payments.getVaPayment(id);
  listVaPayments = (query: Record<string, string>) => this.payments.listVaPayments(query);
  cancelVaPayment = (id: string) => this.write(() => this.payments.cancelVaPayment(id));

  // --- transfers and matching (transfers.ts) ---
  createTransfer = (body: unknown) => this.write(() => this.transfers.createTransfer(body));
  listTransfers = (query: Record<string, string>) => this.transfers.listTransfers(query);

  // --- clients, ledger, invoices and balance (client-ledger.ts; the rules: clients.ts) ---
  createClient = (body: unknown) => this.write(() => this.ledger.createClient(body));
  getClient = (id: string) => this.ledger.getClient(id);
  listClients = (query: Record<string, string>) => this.ledger.listClients(query);
  updateClient = (id: string, body: unknown) => this.write(() => this.ledger.updateClient(id, body));
  setClientCvuStatus = (id: string, body: unknown) => this.write(() => this.ledger.setClientCvuStatus(id, body));
  clientBalance = (id: string) => this.ledger.clientBalance(id);
  listTransactions = (id: string, query: Record<string, string>) => this.ledger.listTransactions(id, query);
  createDebit = (id: string, body: unknown) => this.write(() => this.ledger.createDebit(id, body));
  createInvoice = (id: string, body: unknown) => this.write(() => this.ledger.createInvoice(id, body));
  updateInvoice = (id: string, invoiceId: string, body: unknown) => this.write(() => this.ledger.updateInvoice(id, invoiceId, body));
  listInvoices = (id: string, query: Record<string, string>) => this.ledger.listInvoices(id, query);
  getInvoice = (id: string, invoiceId: string) => this.ledger.getInvoice(id, invoiceId);
  createLedgerEntry = (id: string, body: unknown) => this.write(() => this.ledger.createLedgerEntry(id, body));
  allocate = (id: string, invoiceId: string, body: unknown) => this.write(() => this.ledger.allocate(id, invoiceId, body));

  // --- events (events.ts) and the delivery log (delivery-log.ts; the retry policy: deliveries.ts) ---
  listEvents = (query: Record<string, string>) => this.events.listEvents(query);
  listDeliveries = (query: Record<string, string>) => this.log.listDeliveries(query);
  getDelivery = (id: string) => this.log.getDelivery(id);
  redeliver = (id: string, body: unknown) => this.write(() => this.log.redeliver(id, body));
  releaseAll = () => this.write(() => this.log.releaseAll());
  release = (id: string, body: unknown) => this.write(() => this.log.release(id, body));
  /**
   * After an import (contract part 5): what falls due at the file's time is done now, not by the next timer, so that
   * its callbacks are held with the file's open deliveries (`held`, held as they were stored) instead of sent to the
   * file's URLs; live views hear of every one.
   */
  holdImported = (held: readonly string[]) =>
    this.write(() => {
      this.due.runDue();
      this.log.holdOpen();
      this.log.announce(held);
    });
  forwarding = () => this.log.forwarding();
  setForwarding = (body: unknown) => this.log.setForwarding(body);
  deleteForwarding = () => this.log.deleteForwarding();
  faults = () => this.log.faults();
  setFaults = (body: unknown) => this.log.setFaults(body);
  dueDeliveries = (inFlight: ReadonlySet<string>) => this.log.dueDeliveries(inFlight);
  nextRetryAt = (inFlight: ReadonlySet<string>) => this.log.nextRetryAt(inFlight);
  waitingFirst = (inFlight: Iterable<string>) => this.log.waitingFirst(inFlight);
  recordAttempt = (deliveryId: string, attempt: Omit<Attempt, 'n'>) => this.log.recordAttempt(deliveryId, attempt);

  // --- API fault rules (api-faults.ts) ---
  listApiFaults = (query: Record<string, string>) => this.apiFaultRules.list(query);
  addApiFault = (body: unknown) => this.apiFaultRules.add(body);
  removeApiFault = (id: string) => this.apiFaultRules.remove(id);
  clearApiFaults = () => this.apiFaultRules.clear();
  strikeApiFault = (method: string, path: string) => this.apiFaultRules.strike(method, path);

  // --- idempotency (idempotency.ts) ---
  idempotent = (key: string) => this.idempotency.idempotent(key);
  remember = (key: string, fingerprint: string, status: number, body: unknown) => this.idempotency.remember(key, fingerprint, status, body);
}
