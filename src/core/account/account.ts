import { ApiFaults } from '../api-faults/index.js';
import { DeliveryLog, Events } from '../callbacks/index.js';
import { ClientLedger } from '../clients/index.js';
import { DueWork, prune } from '../clock/index.js';
import { Hubs } from '../hubs/index.js';
import {
  type AccountState,
  accountHead,
  keyedByCaller,
  normalizeAccount,
  type Row,
  type TableName,
} from '../records/index.js';
import { AccountContext, type AccountDeps, type AccountHead, Idempotency, type Where } from '../store/index.js';
import { Transfers } from '../transfers/index.js';
import { VaPayments } from '../va-payments/index.js';

export type { DueDelivery } from '../callbacks/index.js';
export type { AccountDeps, LiveEvent } from '../store/index.js';

/** The kinds of records an import counts. */
export const COUNTED_TABLES = [
  'vaPayments',
  'clients',
  'transfers',
  'events',
  'deliveries',
  'entries',
  'invoices',
] as const;

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
 * docs/architecture.md), read and written through the store's repository, which keeps their lookups. Callers use the
 * part that owns an operation (`account.vaPayments.createVaPayment(body)`), inside `write` when it changes the
 * account. Every part works on the account's sandbox clock.
 */
export class Account {
  private readonly ctx: AccountContext;
  /** The sandbox clock (advance, set, walks) and what falls due by it. */
  readonly clock: DueWork;
  /** Payment hubs and the CVU pool. */
  readonly hubs: Hubs;
  readonly vaPayments: VaPayments;
  /** Simulated transfers and their matching. */
  readonly transfers: Transfers;
  /** Clients, their ledger, invoices and balance. */
  readonly clients: ClientLedger;
  readonly events: Events;
  /** The delivery log, forwarding and delivery faults. */
  readonly deliveries: DeliveryLog;
  readonly idempotency: Idempotency;
  readonly apiFaults: ApiFaults;

  constructor(
    readonly key: string,
    head: AccountHead,
    deps: AccountDeps,
  ) {
    const ctx = (this.ctx = new AccountContext(key, head, deps));
    // What falls due at one instant is done in this order: expiries, delayed CVUs, idempotency keys.
    const handlers = {
      expiry: (id: string, at: number) => this.vaPayments.expireDue(id, at),
      cvu: (id: string, at: number) => this.clients.provisionDue(id, at),
      idempotency: (key: string, at: number) => this.idempotency.forget(key, at),
    };
    this.clock = new DueWork(ctx, handlers, (inFlight) => this.deliveries.nextRetryAt(inFlight));
    this.deliveries = new DeliveryLog(ctx);
    this.events = new Events(ctx, this.deliveries);
    this.hubs = new Hubs(ctx);
    this.clients = new ClientLedger(ctx, this.hubs);
    this.vaPayments = new VaPayments(ctx, this.hubs, this.events, this.deliveries);
    this.transfers = new Transfers(ctx, this.hubs, this.vaPayments, this.clients, this.events);
    this.idempotency = new Idempotency(ctx);
    this.apiFaults = new ApiFaults(ctx);
  }

  /** The account's head: its clock offset, forwarding and faults. */
  get head(): AccountHead {
    return this.ctx.head;
  }

  /** The whole account as the store keeps it (an export, a recording); `unreadable`: see `Storage.read`. */
  read(unreadable?: string[]): AccountState {
    return this.ctx.deps.storage.read(this.key, unreadable) ?? { ...emptyAccountState(), ...this.ctx.head };
  }

  /** One table's records as the store keeps them, a batch at a time (an export streams them); see `Storage.rows`. */
  rows<T extends TableName>(table: T, where?: Where, unreadable?: string[]): Generator<[string, Row<T>]> {
    return this.ctx.deps.storage.rows(this.key, table, where, unreadable);
  }

  /**
   * How many records of each kind the account holds, as an import answers them: the deliveries as their list and an
   * export count them (a dropped event's first delivery included, which is not stored).
   */
  counts() {
    return {
      ...Object.fromEntries(COUNTED_TABLES.map((table) => [table, this.ctx.records.count(table)])),
      deliveries: this.deliveries.count(),
    };
  }

  /** Reads the head again from the store (after a write it could not keep was rolled back). */
  reload(): void {
    this.ctx.head = this.ctx.deps.storage.head(this.key) ?? accountHead(emptyAccountState());
  }

  /** A write reads the clock once: the records and events it makes carry one instant. */
  write<T>(operation: () => T): T {
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

  /** The account's sandbox time, in ms and as ISO. */
  nowMs(): number {
    return this.ctx.nowMs();
  }

  now(): string {
    return this.ctx.now();
  }

  /** When this account's next due work falls due, by real time, and whether it has deliveries to send (first attempts or retries). */
  wake(): { dueAt: number | null; sending: boolean } {
    const due = this.clock.nextDueAt();
    const sending = this.deliveries.waitingFirst([]) > 0 || this.deliveries.nextRetryAt(new Set()) !== null;
    return { dueAt: due === null ? null : due - (this.nowMs() - this.ctx.deps.clock.now()), sending };
  }

  /**
   * After an import (contract part 5): what falls due at the file's time is done now, not by the next timer, so that
   * its callbacks are held with the file's open deliveries (`held`, held as they were stored) instead of sent to the
   * file's URLs; live views hear of every one.
   */
  holdImported(held: readonly string[]): void {
    this.write(() => {
      this.clock.runDue();
      this.deliveries.holdOpen();
      this.deliveries.announce(held);
    });
  }
}
