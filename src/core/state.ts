import type { Cents } from './money.js';
import type { ApiFaultRule } from './api-faults.js';

export type CvuProvisioning = 'inline' | 'delayed' | 'fail' | 'manual';
export const CVU_PROVISIONINGS: CvuProvisioning[] = ['inline', 'delayed', 'fail', 'manual'];

export interface Hub {
  id: number;
  name: string;
  brand: string;
  dedicated_client_cvus_enabled: boolean;
  cvuProvisioning: CvuProvisioning;
  /** The shared CVU that amount-locked payments collect on. */
  collectionCvu: string;
  collectionAlias: string;
}

/** A CVU of the hub's pool, lent to one time-locked payment at a time. */
export interface PoolCvu {
  cvu: string;
  alias: string;
  vaPaymentId: string | null;
  releasedAt: string | null;
}

export type VaPaymentStatus = 'waiting' | 'underpaid' | 'completed' | 'overpaid' | 'expired' | 'cancelled';
export const VA_PAYMENT_STATUSES: VaPaymentStatus[] = ['waiting', 'underpaid', 'completed', 'overpaid', 'expired', 'cancelled'];
export const ACTIVE_STATUSES: VaPaymentStatus[] = ['waiting', 'underpaid'];

export type LockMode = 'time' | 'amount' | 'amount_and_time';

export interface CashIn {
  operationId: string;
  transferId: string;
  total: Cents;
  taxes: Cents;
  incomingAmount: Cents;
  receivedAt: string;
}

export interface VaPayment {
  id: string;
  status: VaPaymentStatus;
  lockMode: LockMode;
  amount: Cents | null;
  currency: 'ARS';
  ttlSeconds: number;
  expiresAt: string;
  cvu: string;
  alias: string;
  clientId: string | null;
  clientTaxId: string | null;
  clientName: string | null;
  callbackUrl: string | null;
  successUrl: string | null;
  failureUrl: string | null;
  externalReference: string | null;
  metadata: Record<string, unknown>;
  paymentHubId: number;
  totalReceived: Cents;
  receivedAmount: Cents;
  cashIns: CashIn[];
  createdAt: string;
  updatedAt: string;
  completedAt: string | null;
  cancelledAt: string | null;
  expiredAt: string | null;
}

export type TransferOutcome = 'credited' | 'returned';

export interface Transfer {
  id: string;
  operationId: string;
  to: string;
  cvu: string;
  total: Cents;
  taxes: Cents;
  from: { name?: string | undefined; taxId?: string | undefined; cbu?: string | undefined } | null;
  outcome: TransferOutcome;
  reason: string | null;
  target: { type: 'va_payment' | 'client'; id: string } | null;
  eventIds: string[];
  createdAt: string;
}

export type CvuStatus = 'not_provisioned' | 'provisioning' | 'active' | 'provisioning_failed' | 'disabled';
export const CVU_STATUSES: CvuStatus[] = ['not_provisioned', 'provisioning', 'active', 'provisioning_failed', 'disabled'];

export interface Client {
  id: string;
  paymentHubId: number;
  name: string;
  /** As given; compared by its digits. */
  taxId: string;
  cashinCallbackUrl: string | null;
  emails: string[];
  phones: string[];
  aliasPrefixHint: string | null;
  aliasSuffixHint: string | null;
  externalReference: string | null;
  metadata: Record<string, unknown>;
  /** Null until the CVU is provisioned. */
  cvu: string | null;
  alias: string | null;
  cvuStatus: CvuStatus;
  /** When a `provisioning` (delayed) CVU becomes active; null in every other status. */
  cvuReadyAt: string | null;
  createdAt: string;
  updatedAt: string;
}

/** The real API's values: a transfer to the client's CVU is `manual_deposit`; a VA payment's cash-in or a debit is `other`. */
export type SourceType = 'payment_link' | 'manual_deposit' | 'other';
export const SOURCE_TYPES: SourceType[] = ['payment_link', 'manual_deposit', 'other'];
/** What entries said before the real values were adopted, and what each now reads as. */
export const LEGACY_SOURCE_TYPES = { transfer: 'manual_deposit', va_payment: 'other', sandbox: 'other' } as const satisfies Record<string, SourceType>;
export type LegacySourceType = keyof typeof LEGACY_SOURCE_TYPES;

export type EntryType = 'cash_in' | 'debit' | 'credit' | 'adjustment' | 'reversal' | 'invoice_allocation';
export const ENTRY_TYPES: EntryType[] = ['cash_in', 'debit', 'credit', 'adjustment', 'reversal', 'invoice_allocation'];

/** A line of a client's ledger: a credit (positive cents) or a debit (negative cents). */
export interface Entry {
  id: string;
  clientId: string;
  entryType: EntryType;
  amount: Cents;
  currency: 'ARS';
  description: string | null;
  operationId: string | null;
  /** The VA payment a cash-in was credited through, if any. */
  paymentId: string | null;
  invoiceId: string | null;
  /** What produced the entry (see `SourceType`); files written before 0.2 hold the old values (`LEGACY_SOURCE_TYPES`). */
  sourceType: SourceType | LegacySourceType;
  createdAt: string;
}

/** AFIP's invoice letters: A between registered VAT payers, B to final consumers and exempt buyers, C from monotributistas. */
export type InvoiceType = 'A' | 'B' | 'C';
export const INVOICE_TYPES: InvoiceType[] = ['A', 'B', 'C'];

export type PaymentStatus = 'pending' | 'partial' | 'paid' | 'cancelled';
export const PAYMENT_STATUSES: PaymentStatus[] = ['pending', 'partial', 'paid', 'cancelled'];

/** An invoice assigned to a client (contract part 3): what the client owes, and how much of it allocations covered. */
export interface Invoice {
  id: string;
  clientId: string;
  /** `0001-00000042`: point of sale and number, as AFIP prints them. */
  invoiceNumber: string;
  invoiceType: InvoiceType;
  sellerTaxId: string | null;
  sellerName: string | null;
  /** Copied from the client when the invoice is created. */
  buyerTaxId: string;
  buyerName: string;
  subtotalNet: Cents | null;
  vatAmount: Cents | null;
  otherTaxes: Cents | null;
  /** The spec's `total_amount`: what `totalInvoiced` sums. */
  totalAmount: Cents;
  /** The sum of the invoice's `invoice_allocation` entries. */
  allocated: Cents;
  currency: 'ARS';
  issuedAt: string;
  dueAt: string | null;
  paymentStatus: PaymentStatus;
  paymentTerms: string | null;
  observations: string | null;
  createdAt: string;
  updatedAt: string;
}

/** An invoice as the release before 0.2 stored it; `normalizeAccount` reads it as an `Invoice`. */
export interface LegacyInvoice {
  id: string;
  clientId: string;
  total_amount: Cents;
  currency: 'ARS';
  description: string | null;
  dueDate: string | null;
  status: 'issued' | 'paid' | 'cancelled';
  externalReference: string | null;
  createdAt: string;
  updatedAt: string;
}

export type VaEventType = 'created' | 'cash_in_received' | 'succeeded' | 'underpaid' | 'overpaid' | 'failed' | 'cancelled';
export type EventType = VaEventType | 'client.cashin';
export const EVENT_TYPES: EventType[] = ['created', 'cash_in_received', 'succeeded', 'underpaid', 'overpaid', 'failed', 'cancelled', 'client.cashin'];

/** What a VA payment's `callbackDelivery` says: its events and where their deliveries stand. */
export interface CallbackDeliverySummary {
  events: number;
  delivered: number;
  pending: number;
  retrying: number;
  failed: number;
  dropped: number;
  held: number;
  lastEventType: string | null;
  lastAttemptAt: string | null;
}

/**
 * An event raised by the service and where it is routed, with what its body is made from (`event-body.ts`): a VA
 * event's from its payment, a client's cash-in's the body itself.
 */
export interface SandboxEvent {
  id: string;
  eventType: EventType;
  vaPaymentId: string | null;
  clientId: string | null;
  /**
   * The body as sent, on a client's cash-in. Absent on VA events, whose body is rendered from their payment (files of
   * earlier releases hold those bodies whole: they are sent as held).
   */
  body?: Record<string, unknown>;
  url: string | null;
  /** Why the event goes nowhere, when `url` is null: it is `dropped`, and no delivery is stored for it. */
  droppedReason: string | null;
  createdAt: string;
  /** On `cancelled` and `failed`: the payment's delivery summary when the event was raised (the rest of it never changes again). */
  callbackDelivery?: CallbackDeliverySummary;
  /** On the events a transfer raises: which of the payment's `cashIns` it credited (its place, from 0). */
  cashIn?: number;
  /** A dropped event whose first delivery an earlier release stored (`normalizeAccount`): that one is its first. */
  deliveryStored?: true;
}

/**
 * Spec 3.3's statuses, and `held`: a delivery that came with an imported file, never attempted until the user releases
 * it (contract part 5), so an incident's callback URLs are not called from a laptop.
 */
export type DeliveryStatus = 'pending' | 'retrying' | 'delivered' | 'failed' | 'dropped' | 'held';
export const DELIVERY_STATUSES: DeliveryStatus[] = ['pending', 'retrying', 'delivered', 'failed', 'dropped', 'held'];

export type AttemptError = 'timeout' | 'connection_refused' | 'connection_reset' | 'redirect' | 'http_status' | 'network';
export const ATTEMPT_ERRORS: AttemptError[] = ['timeout', 'connection_refused', 'connection_reset', 'redirect', 'http_status', 'network'];

export interface Attempt {
  n: number;
  startedAt: string;
  durationMs: number;
  responseStatus: number | null;
  /** The first 2 KiB of the response body. */
  responseBody: string | null;
  error: AttemptError | null;
  errorMessage: string | null;
  /** Where the attempt went when not to the delivery's `url` (forwarding, or a redelivery to another URL). */
  forwardedTo?: string | null;
  /** An extra send asked for by the account's delivery faults (`duplicate`); it changes nothing of the delivery. */
  fault?: 'duplicate' | null;
}

export interface Delivery {
  id: string;
  eventId: string;
  eventType: EventType;
  url: string | null;
  status: DeliveryStatus;
  reason: string | null;
  attempts: Attempt[];
  nextAttemptAt: string | null;
  redeliveryOf: string | null;
  /** The URL a redelivery or a release was asked to go to instead of `url` (this delivery only). */
  redeliverTo?: string | null;
  /** Attempts made before a release (in the file it was imported with): the policy counts only those after. */
  attemptsBefore?: number;
  createdAt: string;
  updatedAt: string;
}

/** An account's forwarding (contract part 4): while set, every callback attempt (of `events`, when given) goes to `url`. */
export interface Forwarding {
  url: string;
  events?: EventType[];
  since: string;
}

/** An account's delivery faults (contract part 4), all off by default. */
export interface Faults {
  duplicate: boolean;
  delayMs: number;
  shuffle: boolean;
}

export interface IdempotencyRecord {
  fingerprint: string;
  status: number;
  body: unknown;
  createdAt: string;
}

export interface AccountState {
  /** Milliseconds the account's sandbox clock runs ahead of real time. */
  clockOffsetMs: number;
  /** Where callbacks go while `va-sandbox listen` (or `PUT /sandbox/v1/forwarding`) says so; absent or null: off. */
  forwarding?: Forwarding | null;
  /** Delivery faults; absent: all off. */
  faults?: Faults;
  /** API fault rules (contract part 7), in the order added; absent: none. */
  apiFaults?: ApiFaultRule[];
  /**
   * When an import held the account (its sandbox time then): until every held delivery is released, the callbacks it
   * raises are held too (or go to the forwarding URL while one is set), so no URL of the file is called. Absent or
   * null: not held.
   */
  heldSince?: string | null;
  /** Keyed by the hub's id: hubs are made on first use (contract part 1). */
  hubs: Record<string, Hub>;
  /** Keyed by CVU. */
  pool: Record<string, PoolCvu>;
  vaPayments: Record<string, VaPayment>;
  transfers: Record<string, Transfer>;
  events: Record<string, SandboxEvent>;
  deliveries: Record<string, Delivery>;
  idempotency: Record<string, IdempotencyRecord>;
  clients: Record<string, Client>;
  entries: Record<string, Entry>;
  invoices: Record<string, Invoice>;
}

/** The keyed tables of an account: every record in them is replaced whole, never changed in place. */
export const TABLES = ['hubs', 'pool', 'vaPayments', 'transfers', 'events', 'deliveries', 'idempotency', 'clients', 'entries', 'invoices'] as const;
export type TableName = (typeof TABLES)[number];

/** An account's fields other than its tables (its clock offset), as a store keeps them beside the tables. */
export function accountHead(account: AccountState): Omit<AccountState, TableName> {
  return Object.fromEntries(Object.entries(account).filter(([name]) => !(TABLES as readonly string[]).includes(name))) as Omit<AccountState, TableName>;
}

/**
 * A table keyed by what callers send (API keys, Idempotency-Keys) has no prototype, so "__proto__" or
 * "toString" are keys like any other rather than Object.prototype's members.
 */
export const keyedByCaller = <T>(entries: Record<string, T> = {}): Record<string, T> => Object.assign(Object.create(null), entries);

/**
 * Gives an account read from JSON its caller-keyed table (see `keyedByCaller`), and brings one written by an
 * earlier release up to date: its one `hub` becomes hub 1 of `hubs`, and tables added since are made empty.
 */
export function normalizeAccount(account: AccountState): AccountState {
  if (!account.idempotency || Object.getPrototypeOf(account.idempotency) !== null) account.idempotency = keyedByCaller(account.idempotency);
  const legacy = account as AccountState & { hub?: Hub };
  if (legacy.hub) {
    account.hubs = { ...account.hubs, '1': legacy.hub };
    delete legacy.hub;
  }
  for (const table of TABLES) account[table] ??= {};
  upgradeInvoices(account);
  markStoredDropped(account);
  return account;
}

/**
 * A dropped event's first delivery is the event itself, never stored, unless an earlier release stored one for it (under
 * an id of its own): such an event is marked (`deliveryStored`), so that stored one is its first.
 */
function markStoredDropped(account: AccountState): void {
  for (const delivery of Object.values(account.deliveries)) {
    const event = account.events[delivery.eventId];
    if (delivery.redeliveryOf === null && event?.url === null && !event.deliveryStored) account.events[event.id] = { ...event, deliveryStored: true };
  }
}

const LEGACY_PAYMENT_STATUS = { issued: 'pending', paid: 'paid', cancelled: 'cancelled' } as const satisfies Record<LegacyInvoice['status'], PaymentStatus>;

/**
 * Invoices stored before 0.2 (`total_amount`, `description`, `dueDate`, `status`) read as invoices of today: type B,
 * numbered after the account's type B invoices in the order they were made, buyer from their client, `issued` as `pending`.
 */
function upgradeInvoices(account: AccountState): void {
  const legacy = (Object.values(account.invoices) as (Invoice | LegacyInvoice)[]).filter((i): i is LegacyInvoice => 'total_amount' in i);
  if (legacy.length === 0) return;
  const typeB = Object.values(account.invoices).filter((i): i is Invoice => 'invoiceNumber' in i && i.invoiceType === 'B');
  let last = Math.max(0, ...typeB.map((i) => invoiceSequence(i.invoiceNumber) ?? 0));
  legacy.sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0));
  for (const old of legacy) {
    const client = account.clients[old.clientId];
    const paid = old.status === 'paid';
    account.invoices[old.id] = {
      id: old.id,
      clientId: old.clientId,
      invoiceNumber: invoiceNumber(++last),
      invoiceType: 'B',
      sellerTaxId: null,
      sellerName: null,
      buyerTaxId: client?.taxId ?? '',
      buyerName: client?.name ?? '',
      subtotalNet: null,
      vatAmount: null,
      otherTaxes: null,
      totalAmount: old.total_amount,
      // Marked paid by hand, before allocations existed: it counts as covered.
      allocated: paid ? old.total_amount : 0,
      currency: 'ARS',
      issuedAt: old.createdAt,
      dueAt: old.dueDate === null ? null : `${old.dueDate}T00:00:00.000Z`,
      paymentStatus: LEGACY_PAYMENT_STATUS[old.status],
      paymentTerms: null,
      observations: [old.description, old.externalReference === null ? null : `externalReference ${old.externalReference}`].filter(Boolean).join(' · ') || null,
      createdAt: old.createdAt,
      updatedAt: old.updatedAt,
    };
  }
}

/** The point of sale the sandbox numbers invoices under. */
export const POINT_OF_SALE = '0001';

export const invoiceNumber = (sequence: number): string => `${POINT_OF_SALE}-${String(sequence).padStart(8, '0')}`;

/** The sequence of a number of the sandbox's point of sale, or null for any other number. */
export function invoiceSequence(number: string): number | null {
  const match = /^0001-(\d{8})$/.exec(number);
  return match ? Number(match[1]) : null;
}
