import { iso } from './clock.js';
import { SandboxError } from './errors.js';
import { fromCents, type Cents } from './money.js';
import type { CreateClientInput, CreateInvoiceInput, DebitInput, UpdateClientInput, UpdateInvoiceInput } from './schemas.js';
import { push } from './account-context.js';
import { Lists } from './lists.js';
import type { AccountState, Client, CvuStatus, Hub, Entry, Invoice, SandboxEvent, Transfer } from './state.js';

/** Clients (contract part 3) as pure rules: records in, records out. The account stores them and keeps the CVUs unique. */

/** A `delayed` hub's CVU becomes active this long (sandbox clock) after the client is created. */
export const PROVISIONING_DELAY_MS = 5000;

/** A tax id is kept as given and compared by its digits: "20-12345678-3" is "20123456783". */
export const taxIdDigits = (taxId: string): string => taxId.replace(/\D/g, '');

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
 * (`inline`: right away, so the account provisions it before answering); `fail` leaves it `provisioning_failed`.
 */
export function createClient(input: CreateClientInput, ctx: { id: string; now: number; hub: Hub }): Client {
  const now = iso(ctx.now);
  const provisioning = ctx.hub.cvuProvisioning;
  const failed = provisioning === 'fail';
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
    cvuStatus: failed ? 'provisioning_failed' : 'provisioning',
    cvuReadyAt: failed ? null : iso(ctx.now + (provisioning === 'delayed' ? PROVISIONING_DELAY_MS : 0)),
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

/** The sandbox's switch (`POST /sandbox/v1/clients/{id}/cvu`) for a client that already has its CVU, or to disable one. */
export function setCvuStatus(client: Client, cvuStatus: Extract<CvuStatus, 'active' | 'disabled'>, now: string): Client {
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

export function debitEntry(id: string, clientId: string, input: DebitInput, now: string): Entry {
  return {
    id,
    clientId,
    entryType: 'debit',
    amount: -input.amount,
    currency: 'ARS',
    description: input.description ?? null,
    operationId: null,
    paymentId: null,
    invoiceId: null,
    sourceType: 'other',
    createdAt: now,
  };
}

export function createInvoice(input: CreateInvoiceInput, ctx: { id: string; clientId: string; now: string }): Invoice {
  return {
    id: ctx.id,
    clientId: ctx.clientId,
    total_amount: input.total_amount,
    currency: 'ARS',
    description: input.description ?? null,
    dueDate: input.dueDate ?? null,
    status: input.status,
    externalReference: input.externalReference ?? null,
    createdAt: ctx.now,
    updatedAt: ctx.now,
  };
}

export function updateInvoice(invoice: Invoice, patch: UpdateInvoiceInput, now: string): Invoice {
  return {
    ...invoice,
    total_amount: patch.total_amount ?? invoice.total_amount,
    description: patched(patch.description, invoice.description, null),
    dueDate: patched(patch.dueDate, invoice.dueDate, null),
    status: patch.status ?? invoice.status,
    externalReference: patched(patch.externalReference, invoice.externalReference, null),
    updatedAt: now,
  };
}

export interface Balance {
  totalCashIn: Cents;
  totalCashOut: Cents;
  totalInvoiced: Cents;
  balance: Cents;
}

/** Spec 2.4 over every entry and every invoice, whatever its status; debit entries are the negative ones. */
export function balance(entries: Iterable<Entry>, invoices: Iterable<Invoice>): Balance {
  // Summed in BigInt: past 2^53 cents (90 trillion ARS) numbers round, and a balance of huge totals would be off.
  let totalCashIn = 0n;
  let totalCashOut = 0n;
  let totalInvoiced = 0n;
  for (const entry of entries) {
    if (entry.entryType === 'cash_in') totalCashIn += BigInt(entry.amount);
    else if (entry.amount < 0) totalCashOut -= BigInt(entry.amount);
  }
  for (const invoice of invoices) totalInvoiced += BigInt(invoice.total_amount);
  return {
    totalCashIn: Number(totalCashIn),
    totalCashOut: Number(totalCashOut),
    totalInvoiced: Number(totalInvoiced),
    balance: Number(totalCashIn - totalCashOut - totalInvoiced),
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

/** Lookups over an account's clients, ledger and invoices, built from the records. */
export class ClientIndex {
  private byTaxId = new Map<string, string>();
  /** CVUs and upper-case aliases of the clients that have one. */
  private byAddress = new Map<string, string>();
  private entries = new Map<string, string[]>();
  private invoices = new Map<string, string[]>();
  /** Entries by client and type (`entryType:<client>:<type>`). */
  private entryTypes = new Lists();

  /** Indexes every client, entry and invoice of a state. */
  build(state: Pick<AccountState, 'clients' | 'entries' | 'invoices'>): void {
    for (const client of Object.values(state.clients)) this.track(client);
    for (const entry of Object.values(state.entries)) this.addEntry(entry);
    for (const invoice of Object.values(state.invoices)) this.addInvoice(invoice);
  }

  /** Indexes a client as stored now; `before` is the version it replaces. */
  track(client: Client, before?: Client): void {
    if (before) {
      this.byTaxId.delete(taxIdDigits(before.taxId));
      for (const address of addresses(before)) this.byAddress.delete(address);
    }
    this.byTaxId.set(taxIdDigits(client.taxId), client.id);
    for (const address of addresses(client)) this.byAddress.set(address, client.id);
  }

  withTaxId(taxId: string): string | undefined {
    return this.byTaxId.get(taxIdDigits(taxId));
  }

  /** The client whose CVU or alias (case-insensitive) this is. */
  at(cvuOrAlias: string): string | undefined {
    return this.byAddress.get(cvuOrAlias.toUpperCase());
  }


  addEntry(entry: Entry): void {
    push(this.entries, entry.clientId, entry.id);
    this.entryTypes.made(entry.id);
    this.entryTypes.add(`entryType:${entry.clientId}:${entry.entryType}`, entry.id);
  }

  addInvoice(invoice: Invoice): void {
    push(this.invoices, invoice.clientId, invoice.id);
  }

  /** Ids of a client's entries, oldest first. */
  entryIds(clientId: string): readonly string[] {
    return this.entries.get(clientId) ?? [];
  }

  /** Ids of a client's entries of any of `types`, oldest first. */
  entryIdsOfType(clientId: string, types: readonly string[]): readonly string[] {
    return this.entryTypes.anyOf(types.map((type) => `entryType:${clientId}:${type}`));
  }

  /** Ids of a client's invoices, oldest first. */
  invoiceIds(clientId: string): readonly string[] {
    return this.invoices.get(clientId) ?? [];
  }
}

const addresses = (client: Client): string[] => (client.cvu === null ? [] : [client.cvu, client.alias!.toUpperCase()]);

