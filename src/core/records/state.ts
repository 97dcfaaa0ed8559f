import { z } from 'zod';
import type { ApiFaultRule } from './api-fault-rule.js';
import { type Client, clientRecord, type Entry, entryRecord } from './client.js';
import { type Delivery, deliveryRecord, type EventType, eventRecord, type SandboxEvent } from './event.js';
import { type Hub, hubRecord, type PoolCvu, poolCvuRecord } from './hub.js';
import { type IdempotencyRecord, idempotencyRecord } from './idempotency.js';
import { type Invoice, invoiceRecord, type LegacyInvoice, type PaymentStatus } from './invoice.js';
import { type Transfer, transferRecord } from './transfer.js';
import { type VaPayment, vaPaymentRecord } from './va-payment.js';

export * from './client.js';
export * from './event.js';
/** Each kind of record is declared once, as a zod schema, in `records/`: its type is inferred from it. */
export * from './hub.js';
export * from './idempotency.js';
export * from './invoice.js';
export * from './transfer.js';
export * from './va-payment.js';

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
export const TABLES = [
  'hubs',
  'pool',
  'vaPayments',
  'transfers',
  'events',
  'deliveries',
  'idempotency',
  'clients',
  'entries',
  'invoices',
] as const;
export type TableName = (typeof TABLES)[number];

/** An account's fields other than its tables (its clock offset), as a store keeps them beside the tables. */
export function accountHead(account: AccountState): Omit<AccountState, TableName> {
  return Object.fromEntries(
    Object.entries(account).filter(([name]) => !(TABLES as readonly string[]).includes(name)),
  ) as Omit<AccountState, TableName>;
}

/**
 * A table keyed by what callers send (API keys, Idempotency-Keys) has no prototype, so "__proto__" or
 * "toString" are keys like any other rather than Object.prototype's members.
 */
export const keyedByCaller = <T>(entries: Record<string, T> = {}): Record<string, T> =>
  Object.assign(Object.create(null), entries);

/**
 * Gives an account read from JSON its caller-keyed table (see `keyedByCaller`), and brings one written by an
 * earlier release up to date: its one `hub` becomes hub 1 of `hubs`, and tables added since are made empty.
 */
export function normalizeAccount(account: AccountState): AccountState {
  if (!account.idempotency || Object.getPrototypeOf(account.idempotency) !== null)
    account.idempotency = keyedByCaller(account.idempotency);
  const legacy = account as AccountState & { hub?: Hub };
  if (legacy.hub) {
    account.hubs = { ...account.hubs, '1': legacy.hub };
    delete legacy.hub;
  }
  for (const table of TABLES) account[table] ??= {};
  upgradeInvoices(account);
  for (const table of TABLES) withDefaults(table, Object.values(account[table]));
  markStoredDropped(account);
  return account;
}

/**
 * Each table's record schema. A field added to a record after a release is declared with its default
 * (`.default(null)`), which a record stored or exported before it is given: `withDefaults` here, zod on import.
 * test/field-defaults.test.ts holds the rule against the frozen files of the previous releases.
 */
export const RECORD_OF = {
  hubs: hubRecord,
  pool: poolCvuRecord,
  vaPayments: vaPaymentRecord,
  transfers: transferRecord,
  events: eventRecord,
  deliveries: deliveryRecord,
  idempotency: idempotencyRecord,
  clients: clientRecord,
  entries: entryRecord,
  invoices: invoiceRecord,
} satisfies Record<TableName, z.ZodObject>;

/** Each table's fields declared with a default, and that default. */
const DEFAULTS = Object.fromEntries(
  TABLES.map((table) => [
    table,
    Object.entries(RECORD_OF[table].shape).flatMap(([name, field]) =>
      field instanceof z.ZodDefault ? [[name, field.parse(undefined)] as const] : [],
    ),
  ]),
) as Record<TableName, (readonly [string, unknown])[]>;

/** Records stored before some of their fields were declared, given those fields' defaults (a field held is kept). */
function withDefaults(table: TableName, records: object[]): void {
  const defaults = DEFAULTS[table];
  if (defaults.length === 0) return;
  for (const record of records as Record<string, unknown>[]) {
    for (const [name, value] of defaults) if (record[name] === undefined) record[name] = value;
  }
}

/**
 * A dropped event's first delivery is the event itself, never stored, unless an earlier release stored one for it (under
 * an id of its own): such an event is marked (`deliveryStored`), so that stored one is its first.
 */
function markStoredDropped(account: AccountState): void {
  for (const delivery of Object.values(account.deliveries)) {
    const event = account.events[delivery.eventId];
    if (delivery.redeliveryOf === null && event?.url === null && !event.deliveryStored)
      account.events[event.id] = { ...event, deliveryStored: true };
  }
}

const LEGACY_PAYMENT_STATUS = { issued: 'pending', paid: 'paid', cancelled: 'cancelled' } as const satisfies Record<
  LegacyInvoice['status'],
  PaymentStatus
>;

/**
 * Invoices stored before 0.2 (`total_amount`, `description`, `dueDate`, `status`) read as invoices of today: type B,
 * numbered after the account's type B invoices in the order they were made, buyer from their client, `issued` as `pending`.
 */
function upgradeInvoices(account: AccountState): void {
  const legacy = (Object.values(account.invoices) as (Invoice | LegacyInvoice)[]).filter(
    (i): i is LegacyInvoice => 'total_amount' in i,
  );
  if (legacy.length === 0) return;
  const typeB = Object.values(account.invoices).filter(
    (i): i is Invoice => 'invoiceNumber' in i && i.invoiceType === 'B',
  );
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
      observations:
        [old.description, old.externalReference === null ? null : `externalReference ${old.externalReference}`]
          .filter(Boolean)
          .join(' · ') || null,
      createdAt: old.createdAt,
      updatedAt: old.updatedAt,
    };
  }
}

/** The point of sale the sandbox numbers invoices under. */
const POINT_OF_SALE = '0001';

export const invoiceNumber = (sequence: number): string => `${POINT_OF_SALE}-${String(sequence).padStart(8, '0')}`;

/** The sequence of a number of the sandbox's point of sale, or null for any other number. */
export function invoiceSequence(number: string): number | null {
  const match = /^0001-(\d{8})$/.exec(number);
  return match ? Number(match[1]) : null;
}
