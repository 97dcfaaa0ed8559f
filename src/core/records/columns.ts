/**
 * What the domain asks of a store: the columns it looks records up and lists them by, each computed from the record
 * alone (the store keeps and indexes them: `Repository`, src/core/store).
 */

import { ms } from '../conventions/index.js';
import { taxIdKey } from './client.js';
import { type AccountState, invoiceSequence, type SandboxEvent, type TableName } from './state.js';
import { isActive } from './va-payment.js';

/** A record of a table, as the core reads and writes it. */
export type Row<T extends TableName> = AccountState[T][string];

/** A value a record is looked up or listed by (`COLUMNS`); null: the record is not in that lookup. */
export type Key = string | number | null;

/** How long an Idempotency-Key's answer is kept, by the account's clock. */
export const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;

type Columns<T extends TableName> = Record<string, (record: Row<T>) => Key>;

/**
 * The columns a store keeps beside each record, computed from it, and indexes (by account, then the column): what
 * lookups, lists, due work and retention ask for. A new one is also a new migration of the store (ADD COLUMN, its
 * backfill, CREATE INDEX: docs/storage.md). Lists go by when a record was made, which is the order written: an
 * account's records are written as they are made and its clock only moves forward (an import's are written sorted by
 * `createdAt`), so no table keeps `created_at` to order by; a payment and a ledger entry keep it for their lists' ranges.
 */
export const COLUMNS: { [T in TableName]: Columns<T> } = {
  hubs: {
    /** The hub's collection CVU and alias (upper case): every CVU and alias of an account is unique (`Hubs.isTaken`). */
    cvu: (hub) => hub.collectionCvu,
    alias: (hub) => hub.collectionAlias.toUpperCase(),
  },
  pool: {
    alias: (cvu) => cvu.alias.toUpperCase(),
    /** Free pool CVUs are lent released longest ago first, those released at once by CVU. */
    free: (cvu) => (cvu.vaPaymentId === null ? `${cvu.releasedAt ?? ''}|${cvu.cvu}` : null),
  },
  vaPayments: {
    created_at: (p) => ms(p.createdAt),
    status: (p) => p.status,
    client_id: (p) => p.clientId,
    client_tax_id: (p) => p.clientTaxId,
    external_reference: (p) => p.externalReference,
    /** The amount an active amount-locked payment waits for on its hub (AMOUNT_LOCK_CONFLICT); a pool CVU names its payment. */
    amount_lock: (p) => (isActive(p) && p.lockMode === 'amount' ? amountLock(p.paymentHubId, p.amount!) : null),
    due_at: (p) => (isActive(p) ? ms(p.expiresAt) : null),
  },
  transfers: {
    target: (t) => t.target?.id ?? null,
    returned_at: (t) => (t.target === null ? ms(t.createdAt) : null),
  },
  events: {
    source: (e) => e.vaPaymentId ?? e.clientId,
    /** A dropped event's type: its first delivery is the event itself, never stored (`DeliveryLog`). */
    dropped: (e) => (isDropped(e) ? e.eventType : null),
  },
  deliveries: {
    event_id: (d) => d.eventId,
    status: (d) => d.status,
    event_type: (d) => d.eventType,
    /** Since when a delivery waits for its first attempt (made, or released): the order rule's queue goes by it. */
    pending_at: (d) => (d.status === 'pending' ? ms(d.updatedAt) : null),
    retry_at: (d) => (d.status === 'retrying' && d.nextAttemptAt !== null ? ms(d.nextAttemptAt) : null),
  },
  idempotency: {
    due_at: (r) => ms(r.createdAt) + IDEMPOTENCY_TTL_MS,
  },
  clients: {
    tax_id: (c) => taxIdKey(c.taxId),
    external_reference: (c) => c.externalReference,
    cvu: (c) => c.cvu,
    alias: (c) => c.alias?.toUpperCase() ?? null,
    cvu_ready_at: (c) => (c.cvuReadyAt === null ? null : ms(c.cvuReadyAt)),
  },
  entries: {
    created_at: (e) => ms(e.createdAt),
    client_id: (e) => e.clientId,
    entry_type: (e) => `${e.clientId}:${e.entryType}`,
    /** The entry that brought a client's operation in, and its reversal. */
    operation: (e) => (e.operationId === null || e.entryType === 'reversal' ? null : `${e.clientId}:${e.operationId}`),
    reversal: (e) => (e.operationId !== null && e.entryType === 'reversal' ? `${e.clientId}:${e.operationId}` : null),
  },
  invoices: {
    client_id: (i) => i.clientId,
    number: (i) => `${i.invoiceType}:${i.invoiceNumber}`,
    /** The sequence of a number of the sandbox's point of sale (`invoiceSequence`), by type. */
    sequence: (i) => (invoiceSequence(i.invoiceNumber) === null ? null : `${i.invoiceType}:${i.invoiceNumber}`),
  },
};

/** Whether an event's first delivery is the event itself (dropped, and not stored by an earlier release). */
export const isDropped = (event: SandboxEvent): boolean => event.url === null && !event.deliveryStored;

/** The value of an amount lock: amounts are locked per hub. */
export const amountLock = (hubId: number, amount: number): string => `amount:${hubId}:${amount}`;
