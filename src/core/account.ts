import { AccountContext, type AccountDeps } from './account-context.js';
import { ClientLedger } from './client-ledger.js';
import { DeliveryLog } from './delivery-log.js';
import { DueWork } from './due-work.js';
import { Events } from './events.js';
import { Hubs } from './hubs.js';
import { Idempotency } from './idempotency.js';
import { keyedByCaller, normalizeAccount, type AccountState, type Attempt } from './state.js';
import { pruned } from './retention.js';
import { Transfers } from './transfers.js';
import { VaPayments } from './va-payments.js';

export type { AccountDeps, DeliveredEvent, LiveEvent } from './account-context.js';
export type { DueDelivery } from './delivery-log.js';
export type { ClockMove } from './due-work.js';

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
 * One integrator account: a composition of the contract's parts, each a module that owns its records and lookups
 * (see docs/architecture.md). Every method works on the account's sandbox clock; writes go through the context's
 * `put`, which tells the store. The modules are made again, with their lookups, when the state is replaced.
 */
export class Account {
  private readonly ctx: AccountContext;
  private due!: DueWork;
  private hubs!: Hubs;
  private payments!: VaPayments;
  private transfers!: Transfers;
  private ledger!: ClientLedger;
  private events!: Events;
  private log!: DeliveryLog;
  private idempotency!: Idempotency;

  constructor(
    readonly key: string,
    readonly state: AccountState,
    deps: AccountDeps,
  ) {
    this.ctx = new AccountContext(key, state, deps);
    this.index();
  }

  /** Makes the modules and fills their lookups from the records. */
  private index(): void {
    const { ctx } = this;
    normalizeAccount(ctx.state);
    const handlers = {
      expiry: (id: string, at: number) => this.payments.expireDue(id, at),
      cvu: (id: string, at: number) => this.ledger.provisionDue(id, at),
      idempotency: (key: string, at: number) => this.idempotency.forget(key, at),
    };
    this.due = new DueWork(ctx, handlers, (inFlight) => this.log.nextRetryAt(inFlight));
    this.log = new DeliveryLog(ctx);
    this.events = new Events(ctx, this.log);
    this.hubs = new Hubs(ctx, (cvuOrAlias) => this.ledger.clientAt(cvuOrAlias) !== undefined);
    this.ledger = new ClientLedger(ctx, this.hubs, this.due);
    this.payments = new VaPayments(ctx, this.hubs, this.events, this.log, this.due);
    this.transfers = new Transfers(ctx, this.hubs, this.payments, this.ledger, this.events);
    this.idempotency = new Idempotency(ctx, this.due);
    // In this order, so what falls due at the same instant is done in the order it was before a restart.
    this.payments.build();
    this.hubs.build();
    this.ledger.build();
    this.idempotency.build();
    this.events.build();
    this.log.build();
  }

  /** A write reads the clock once: the records and events it makes carry one instant. */
  private write<T>(operation: () => T): T {
    return this.ctx.atOneInstant(operation);
  }

  /** Retention: removes what ended more than `keepMs` of sandbox clock ago (`pruned`); whether anything went. */
  prune(keepMs: number): boolean {
    const next = pruned(this.state, this.nowMs() - keepMs);
    if (next) this.replace(next);
    return next !== null;
  }

  reset(): void {
    this.replace(emptyAccountState());
  }

  /** Swaps in a whole new state (reset, import) in place, since the sandbox's state holds this object, and re-indexes it. */
  replace(next: AccountState): void {
    for (const key of Object.keys(this.state) as (keyof AccountState)[]) delete this.state[key];
    Object.assign(this.state, next);
    this.ctx.deps.changed(this.key, { all: true }, this.state);
    this.index();
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
  /** The events and deliveries as an export holds them: bodies rendered, dropped events' deliveries listed. */
  exportedEvents = () => ({ events: this.events.exported(), deliveries: this.log.exported() });
  listDeliveries = (query: Record<string, string>) => this.log.listDeliveries(query);
  getDelivery = (id: string) => this.log.getDelivery(id);
  redeliver = (id: string, body: unknown) => this.write(() => this.log.redeliver(id, body));
  releaseAll = () => this.write(() => this.log.releaseAll());
  release = (id: string, body: unknown) => this.write(() => this.log.release(id, body));
  /**
   * After an import (contract part 5): what falls due at the file's time is done now, not by the next timer, so that
   * its callbacks are held with the file's open deliveries instead of sent to the file's URLs.
   */
  holdImported = () =>
    this.write(() => {
      this.due.runDue();
      this.log.holdOpen();
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

  // --- idempotency (idempotency.ts) ---
  idempotent = (key: string) => this.idempotency.idempotent(key);
  remember = (key: string, fingerprint: string, status: number, body: unknown) => this.idempotency.remember(key, fingerprint, status, body);
}
