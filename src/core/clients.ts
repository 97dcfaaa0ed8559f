import { iso } from './clock.js';
import { SandboxError } from './errors.js';
import { formatCents, fromCents, type Cents } from './money.js';
import type { CreateClientInput, CreateInvoiceInput, DebitInput, LedgerEntryInput, UpdateClientInput, UpdateInvoiceInput } from './schemas.js';
import type { Client, CvuStatus, Hub, Entry, Invoice, PaymentStatus, SandboxEvent, Transfer } from './state.js';

/** Clients (contract part 3) as pure rules: records in, records out. The account stores them and keeps the CVUs unique. */

/** A `delayed` hub's CVU becomes active this long (sandbox clock) after the client is created. */
export const PROVISIONING_DELAY_MS = 5000;

/** A tax id is kept as given and compared by its digits: "20-12345678-3" is "20123456783". */
export const taxIdDigits = (taxId: string): string => taxId.replace(/\D/g, '');

/** What tax ids are compared by: their digits when they have any, else the text as given. */
export const taxIdKey = (taxId: string): string => taxIdDigits(taxId) || taxId;

const CUIT_WEIGHTS = [5, 4, 3, 2, 7, 6, 5, 4, 3, 2];

/** AFIP's CUIT check: 11 digits, the last one 11 minus the weighted sum mod 11 (11 reads 0; 10 never matches). */
export function isValidCuit(taxId: string): boolean {
  const digits = taxIdDigits(taxId);
  if (!/^\d{11}$/.test(digits)) return false;
  const sum = CUIT_WEIGHTS.reduce((acc, weight, i) => acc + weight * Number(digits[i]), 0);
  return (11 - (sum % 11)) % 11 === Number(digits[10]);
}

/** `--strict-tax-id`: a taxId must be a CUIT whose check digit matches. */
export function assertCuit(taxId: string): void {
  if (!isValidCuit(taxId)) {
    throw new SandboxError('VALIDATION_ERROR', `Invalid request body: taxId ${taxId} is not a valid CUIT`, [
      'taxId: must be a CUIT of 11 digits whose check digit matches (the server runs with --strict-tax-id)',
    ]);
  }
}

const aliasPart = (hint: string | null): string =>
  (hint ?? '').normalize('NFD').replace(/[^A-Za-z0-9-]/g, '').toUpperCase();

/** The alias the hints ask for, `PREFIX.SUFFIX.BRAND` (generateAlias cuts it to 20 and makes it unique); undefined without hints. */
export function aliasBase(client: Client, brand: string): string | undefined {
  const parts = [aliasPart(client.aliasPrefixHint), aliasPart(client.aliasSuffixHint)].filter(Boolean);
  return parts.length === 0 ? undefined : [...parts, brand.toUpperCase()].join('.');
}

/**
 * A new client. `inline` and `delayed` hubs start it `provisioning` with its CVU due at `cvuReadyAt`
 * (`inline`: right away, so the account provisions it before answering); `fail` leaves it `provisioning_failed`;
 * `manual` leaves it `not_provisioned` until the sandbox's CVU switch moves it.
 */
export function createClient(input: CreateClientInput, ctx: { id: string; now: number; hub: Hub }): Client {
  const now = iso(ctx.now);
  const provisioning = ctx.hub.cvuProvisioning;
  const failed = provisioning === 'fail';
  const waits = failed || provisioning === 'manual';
  return {
    id: ctx.id,
    paymentHubId: ctx.hub.id,
    name: input.name,
    taxId: input.taxId,
    cashinCallbackUrl: input.cashinCallbackUrl ?? null,
    emails: input.emails ?? [],
    phones: input.phones ?? [],
    aliasPrefixHint: input.aliasPrefixHint ?? null,
    aliasSuffixHint: input.aliasSuffixHint ?? null,
    externalReference: input.externalReference ?? null,
    metadata: input.metadata ?? {},
    cvu: null,
    alias: null,
    cvuStatus: failed ? 'provisioning_failed' : provisioning === 'manual' ? 'not_provisioned' : 'provisioning',
    cvuReadyAt: waits ? null : iso(ctx.now + (provisioning === 'delayed' ? PROVISIONING_DELAY_MS : 0)),
    createdAt: now,
    updatedAt: now,
  };
}

/** A PATCH value: absent keeps the current one, null clears it to `cleared`. */
const patched = <T>(value: T | null | undefined, current: T, cleared: T): T => (value === undefined ? current : (value ?? cleared));

/** The alias hints are kept for the record; an alias already provisioned does not change. */
export function updateClient(client: Client, patch: UpdateClientInput, now: string): Client {
  return {
    ...client,
    name: patch.name ?? client.name,
    taxId: patch.taxId ?? client.taxId,
    cashinCallbackUrl: patched(patch.cashinCallbackUrl, client.cashinCallbackUrl, null),
    emails: patched(patch.emails, client.emails, []),
    phones: patched(patch.phones, client.phones, []),
    aliasPrefixHint: patched(patch.aliasPrefixHint, client.aliasPrefixHint, null),
    aliasSuffixHint: patched(patch.aliasSuffixHint, client.aliasSuffixHint, null),
    externalReference: patched(patch.externalReference, client.externalReference, null),
    metadata: patched(patch.metadata, client.metadata, {}),
    updatedAt: now,
  };
}

/** The CVU is ready: the client gets it and its alias, and is `active`. */
export function provision(client: Client, address: { cvu: string; alias: string }, now: string): Client {
  return { ...client, ...address, cvuStatus: 'active', cvuReadyAt: null, updatedAt: now };
}

/**
 * The sandbox's switch (`POST /sandbox/v1/clients/{id}/cvu`) for a client that already has its CVU, to disable one, or
 * to mark a CVU not yet provisioned as requested (`provisioning`: it stays so until switched to `active`).
 */
export function setCvuStatus(client: Client, cvuStatus: Extract<CvuStatus, 'provisioning' | 'active' | 'disabled'>, now: string): Client {
  if (cvuStatus === 'provisioning' && client.cvu !== null) {
    throw new SandboxError('INVALID_STATE', `Client ${client.id} already has its CVU (cvuStatus ${client.cvuStatus})`, [
      'cvuStatus: provisioning is for a client without a CVU yet',
    ]);
  }
  return { ...client, cvuStatus, cvuReadyAt: null, updatedAt: now };
}

/** A credit of the net amount of a transfer: to the client's CVU, or through a VA payment naming the client (`paymentId`). */
export function cashInEntry(
  id: string,
  clientId: string,
  credit: { amount: Cents; operationId: string; paymentId: string | null; now: string },
): Entry {
  return {
    id,
    clientId,
    entryType: 'cash_in',
    amount: credit.amount,
    currency: 'ARS',
    description: credit.paymentId === null ? 'Transfer to the client CVU' : `Transfer credited to VA payment ${credit.paymentId}`,
    operationId: credit.operationId,
    paymentId: credit.paymentId,
    invoiceId: null,
    sourceType: credit.paymentId === null ? 'manual_deposit' : 'other',
    createdAt: credit.now,
  };
}

/** A movement the sandbox records: a debit is stored negative, a credit positive, an adjustment with its own sign. */
export function movementEntry(id: string, clientId: string, input: DebitInput & { entryType?: 'credit' | 'debit' | 'adjustment'; operationId?: string | null }, now: string): Entry {
  const entryType = input.entryType ?? 'debit';
  return {
    id,
    clientId,
    entryType,
    amount: entryType === 'debit' ? -input.amount : input.amount,
    currency: 'ARS',
    description: input.description ?? null,
    operationId: input.operationId ?? null,
    paymentId: null,
    invoiceId: null,
    sourceType: 'other',
    createdAt: now,
  };
}

/** Entries a reversal can take back: credits of money that arrived, named by their operation. */
export const isReversible = (entry: Entry): boolean => (entry.entryType === 'cash_in' || entry.entryType === 'credit') && entry.amount > 0;

/**
 * The bank returns a credited operation: an entry taking back its whole amount, with its `operationId` (and
 * `paymentId`). `original` is the client's reversible entry of that operation, not reversed yet.
 */
export function reversalEntry(id: string, original: Entry, input: Extract<LedgerEntryInput, { entryType: 'reversal' }>, now: string): Entry {
  if (input.amount != null && input.amount !== original.amount) {
    throw new SandboxError('VALIDATION_ERROR', `A reversal takes back the whole operation ${original.operationId}: ${formatCents(original.amount)}`, [
      `amount: must be ${formatCents(original.amount)}, the amount of operation ${original.operationId} (or left out)`,
    ]);
  }
  return {
    ...original,
    id,
    entryType: 'reversal',
    amount: -original.amount,
    description: input.description ?? `Reversal of operation ${original.operationId}`,
    invoiceId: null,
    sourceType: 'other',
    createdAt: now,
  };
}

/** How much of an invoice allocations covered: none `pending`, some `partial`, all `paid`. */
const paymentStatusOf = (allocated: Cents, total: Cents): PaymentStatus => (allocated === 0 ? 'pending' : allocated >= total ? 'paid' : 'partial');

const invalid = (field: string, problem: string) => new SandboxError('VALIDATION_ERROR', `Invalid request body: ${field} ${problem}`, [`${field}: ${problem}`]);

/** The rules an invoice keeps after every create and update. */
function checked(invoice: Invoice, currency: string | null | undefined): Invoice {
  if (currency != null && currency !== 'ARS') {
    throw new SandboxError('UNSUPPORTED_CURRENCY', `Currency ${currency} is not supported: invoices are ARS only`, ['currency: must be ARS']);
  }
  const parts = [invoice.subtotalNet, invoice.vatAmount, invoice.otherTaxes];
  const sum = parts.reduce<number>((acc, part) => acc + (part ?? 0), 0);
  // AFIP's rule for an electronic invoice: the total is the net plus VAT plus other taxes, to the cent.
  if (parts.some((part) => part !== null) && sum !== invoice.totalAmount) {
    throw invalid('totalAmount', `must equal subtotalNet + vatAmount + otherTaxes (${formatCents(sum)}), got ${formatCents(invoice.totalAmount)}`);
  }
  if (invoice.invoiceType === 'C' && (invoice.vatAmount ?? 0) > 0) throw invalid('vatAmount', 'must be 0 on a type C invoice: it shows no VAT');
  if (invoice.dueAt !== null && invoice.dueAt < invoice.issuedAt) throw invalid('dueAt', `must not be before issuedAt (${invoice.issuedAt})`);
  return invoice;
}

/** A new invoice: buyer from the client, `pending`, numbered by the account (`number`) unless the request numbers it. */
export function createInvoice(input: CreateInvoiceInput, ctx: { id: string; client: Client; number: string; now: string }): Invoice {
  const invoice: Invoice = {
    id: ctx.id,
    clientId: ctx.client.id,
    invoiceNumber: input.invoiceNumber ?? ctx.number,
    invoiceType: input.invoiceType ?? 'B',
    sellerTaxId: input.sellerTaxId ?? null,
    sellerName: input.sellerName ?? null,
    buyerTaxId: ctx.client.taxId,
    buyerName: ctx.client.name,
    subtotalNet: input.subtotalNet ?? null,
    vatAmount: input.vatAmount ?? null,
    otherTaxes: input.otherTaxes ?? null,
    totalAmount: input.totalAmount!,
    allocated: 0,
    currency: 'ARS',
    issuedAt: input.issuedAt ?? ctx.now,
    dueAt: input.dueAt ?? null,
    paymentStatus: 'pending',
    paymentTerms: input.paymentTerms ?? null,
    observations: input.observations ?? null,
    createdAt: ctx.now,
    updatedAt: ctx.now,
  };
  return checked(invoice, input.currency);
}

const notOpen = (invoice: Invoice, doing: string) =>
  new SandboxError('INVALID_STATE', `Invoice ${invoice.id} is ${invoice.paymentStatus}: it cannot be ${doing}`, [`paymentStatus: ${invoice.paymentStatus}`]);

/** Any field given changes; a cancelled invoice changes no more, and its total cannot drop below what allocations covered. */
export function updateInvoice(invoice: Invoice, patch: UpdateInvoiceInput, now: string): Invoice {
  if (invoice.paymentStatus === 'cancelled') throw notOpen(invoice, 'changed');
  const totalAmount = patch.totalAmount ?? invoice.totalAmount;
  if (totalAmount < invoice.allocated) {
    throw new SandboxError('INVALID_STATE', `Invoice ${invoice.id} has ${formatCents(invoice.allocated)} allocated`, [
      `totalAmount: must be at least ${formatCents(invoice.allocated)}, what allocations already covered`,
    ]);
  }
  const next: Invoice = {
    ...invoice,
    invoiceNumber: patch.invoiceNumber ?? invoice.invoiceNumber,
    invoiceType: patch.invoiceType ?? invoice.invoiceType,
    sellerTaxId: patched(patch.sellerTaxId, invoice.sellerTaxId, null),
    sellerName: patched(patch.sellerName, invoice.sellerName, null),
    subtotalNet: patched(patch.subtotalNet, invoice.subtotalNet, null),
    vatAmount: patched(patch.vatAmount, invoice.vatAmount, null),
    otherTaxes: patched(patch.otherTaxes, invoice.otherTaxes, null),
    totalAmount,
    issuedAt: patch.issuedAt ?? invoice.issuedAt,
    dueAt: patched(patch.dueAt, invoice.dueAt, null),
    paymentStatus: patch.paymentStatus ?? paymentStatusOf(invoice.allocated, totalAmount),
    paymentTerms: patched(patch.paymentTerms, invoice.paymentTerms, null),
    observations: patched(patch.observations, invoice.observations, null),
    updatedAt: now,
  };
  return checked(next, patch.currency);
}

/**
 * Applies `amount` of the client's cash to an invoice: at most what it still owes, and at most the cash not applied
 * yet (`unallocated`). Returns the invoice, now `partial` or `paid`, and its `invoice_allocation` entry.
 */
export function allocate(invoice: Invoice, amount: Cents, ctx: { id: string; unallocated: Cents; now: string }): { invoice: Invoice; entry: Entry } {
  if (invoice.paymentStatus === 'cancelled' || invoice.paymentStatus === 'paid') throw notOpen(invoice, 'allocated to');
  const due = invoice.totalAmount - invoice.allocated;
  if (amount > due) {
    throw new SandboxError('INVALID_STATE', `Invoice ${invoice.id} owes ${formatCents(due)}`, [`amount: must be at most ${formatCents(due)}, what the invoice still owes`]);
  }
  if (amount > ctx.unallocated) {
    throw new SandboxError('INVALID_STATE', `The client has ${formatCents(Math.max(ctx.unallocated, 0))} not allocated yet`, [
      `amount: must be at most ${formatCents(Math.max(ctx.unallocated, 0))}, the cash in (less cash out) not yet allocated`,
    ]);
  }
  const allocated = invoice.allocated + amount;
  return {
    invoice: { ...invoice, allocated, paymentStatus: paymentStatusOf(allocated, invoice.totalAmount), updatedAt: ctx.now },
    entry: {
      id: ctx.id,
      clientId: invoice.clientId,
      entryType: 'invoice_allocation',
      amount,
      currency: 'ARS',
      description: `Allocated to invoice ${invoice.invoiceNumber}`,
      operationId: null,
      paymentId: null,
      invoiceId: invoice.id,
      sourceType: 'other',
      createdAt: ctx.now,
    },
  };
}

export interface Balance {
  totalCashIn: Cents;
  totalCashOut: Cents;
  totalInvoiced: Cents;
  balance: Cents;
  /** What allocations applied to invoices: cash in less cash out less this is what is left to allocate. */
  allocated: Cents;
}

/**
 * The balance summary over every entry and every invoice, whatever its status: `cash_in` entries are cash in, every
 * negative entry (debit, reversal, negative adjustment) is cash out; credits, positive adjustments and allocations
 * (positive, not cash_in) are in neither, so the formula stays the spec's.
 */
export function balance(entries: Iterable<Entry>, invoices: Iterable<Invoice>): Balance {
  // Summed in BigInt: past 2^53 cents (90 trillion ARS) numbers round, and a balance of huge totals would be off.
  let totalCashIn = 0n;
  let totalCashOut = 0n;
  let totalInvoiced = 0n;
  let allocated = 0n;
  for (const entry of entries) {
    if (entry.entryType === 'cash_in') totalCashIn += BigInt(entry.amount);
    else if (entry.amount < 0) totalCashOut -= BigInt(entry.amount);
    else if (entry.entryType === 'invoice_allocation') allocated += BigInt(entry.amount);
  }
  for (const invoice of invoices) totalInvoiced += BigInt(invoice.totalAmount);
  return {
    totalCashIn: Number(totalCashIn),
    totalCashOut: Number(totalCashOut),
    totalInvoiced: Number(totalInvoiced),
    balance: Number(totalCashIn - totalCashOut - totalInvoiced),
    allocated: Number(allocated),
  };
}

/** The `client.cashin` event of a transfer credited to an active client CVU: its body is spec 6.2, field for field. */
export function cashInEvent(client: Client, transfer: Transfer, eventId: string, now: string): SandboxEvent {
  const amount = fromCents(transfer.total - transfer.taxes);
  const body = {
    eventId,
    clientId: client.id,
    eventType: 'client.cashin',
    taxId: client.taxId,
    amount,
    total: fromCents(transfer.total),
    totalWithoutTaxes: amount,
    taxes: fromCents(transfer.taxes),
    currency: 'ARS',
    cvu: client.cvu,
    alias: client.alias,
    operationId: transfer.operationId,
    createdAt: now,
  };
  const url = client.cashinCallbackUrl;
  return {
    id: eventId,
    eventType: 'client.cashin',
    vaPaymentId: null,
    clientId: client.id,
    body,
    url,
    droppedReason: url === null ? 'the client has no cashinCallbackUrl' : null,
    createdAt: now,
  };
}
