import { push, type AccountContext } from './account-context.js';
import { iso, ms } from './clock.js';
import * as clients from './clients.js';
import { generateAlias } from './cvu.js';
import type { DueWork } from './due-work.js';
import { notFound, SandboxError } from './errors.js';
import type { Hubs } from './hubs.js';
import { UUID_PATTERN } from './ids.js';
import { Lists } from './lists.js';
import { newestFirst, pageNewestFirst, paginate } from './pagination.js';
import {
  allocationSchema,
  clientCvuSchema,
  createClientSchema,
  createInvoiceSchema,
  debitSchema,
  ledgerEntrySchema,
  listClientsQuery,
  listQuery,
  listTransactionsQuery,
  parse,
  updateClientSchema,
  updateInvoiceSchema,
} from './schemas.js';
import { invoiceNumber, invoiceSequence, type AccountState, type Client, type Entry, type Invoice } from './state.js';
import { balanceView, clientView, entryView, invoiceView } from './views.js';

/**
 * Clients with a dedicated CVU, their ledger of entries, their invoices and balance. The rules
 * themselves are in `clients.ts`; this keeps the records and their lookups.
 */
export class ClientLedger {
  private readonly index = new ClientIndex();

  constructor(
    private readonly ctx: AccountContext,
    private readonly hubs: Hubs,
    private readonly due: DueWork,
  ) {}

  /** Indexes the account's clients, entries and invoices. */
  build(): void {
    for (const client of Object.values(this.ctx.state.clients)) this.trackProvisioning(client);
    this.index.build(this.ctx.state);
  }

  /** The client whose CVU or alias (case-insensitive) this is. */
  clientAt(cvuOrAlias: string): string | undefined {
    return this.index.at(cvuOrAlias);
  }


  createClient(body: unknown) {
    const input = parse(createClientSchema, body);
    if (this.ctx.deps.strictTaxId) clients.assertCuit(input.taxId);
    const hub = this.hubs.hubFor(input.paymentHubId);
    if (!hub.dedicated_client_cvus_enabled) {
      throw new SandboxError('DEDICATED_CVUS_DISABLED', `Payment hub ${hub.id} does not have dedicated client CVUs enabled`, [
        'paymentHubId: dedicated_client_cvus_enabled is false on this hub',
      ]);
    }
    this.checkTaxIdFree(input.taxId, null);
    const now = this.ctx.nowMs();
    const client = clients.createClient(input, { id: this.ctx.uuid(), now, hub });
    return this.viewOf(this.storeClient(hub.cvuProvisioning === 'inline' ? this.provisionCvu(client, iso(now)) : client));
  }

  getClient(id: string) {
    return this.viewOf(this.client(id));
  }

  listClients(query: Record<string, string>) {
    const q = parse(listClientsQuery, query, 'query');
    const key = q.taxId === undefined ? undefined : clients.taxIdKey(q.taxId);
    const matches = newestFirst(this.ctx.state.clients).filter(
      (c) =>
        (key === undefined || clients.taxIdKey(c.taxId) === key) &&
        (q.externalReference === undefined || c.externalReference === q.externalReference),
    );
    return paginate(matches, q, (c) => this.viewOf(c));
  }

  updateClient(id: string, body: unknown) {
    const client = this.client(id);
    const patch = parse(updateClientSchema, body);
    if (patch.taxId !== undefined) {
      if (this.ctx.deps.strictTaxId) clients.assertCuit(patch.taxId);
      this.checkTaxIdFree(patch.taxId, client.id);
    }
    return this.viewOf(this.storeClient(clients.updateClient(client, patch, this.ctx.now()), client));
  }

  /** The sandbox's switch of a client's CVU; `active` provisions one now for a client that has none yet. */
  setClientCvuStatus(id: string, body: unknown) {
    const client = this.client(id);
    const { cvuStatus } = parse(clientCvuSchema, body);
    const now = this.ctx.now();
    const next = cvuStatus === 'active' && client.cvu === null ? this.provisionCvu(client, now) : clients.setCvuStatus(client, cvuStatus, now);
    return this.viewOf(this.storeClient(next, client));
  }

  /** Activates a delayed CVU fallen due, unless its time changed since. */
  provisionDue(id: string, at: number): boolean {
    const client = this.ctx.state.clients[id];
    if (client?.cvuReadyAt == null || ms(client.cvuReadyAt) !== at) return false;
    this.storeClient(this.provisionCvu(client, client.cvuReadyAt), client);
    return true;
  }

  clientBalance(id: string) {
    const client = this.client(id);
    return balanceView(client.id, clients.balance(this.entriesOf(client.id), this.invoicesOf(client.id)));
  }

  listTransactions(id: string, query: Record<string, string>) {
    const client = this.client(id);
    const q = parse(listTransactionsQuery, query, 'query');
    const from = q.from === undefined ? null : ms(q.from);
    const to = q.to === undefined ? null : ms(q.to);
    const { entries } = this.ctx.state;
    const ids = q.entryType === undefined ? this.index.entryIds(client.id) : this.index.entryIdsOfType(client.id, q.entryType);
    const inRange = (e: Entry) => (from === null || ms(e.createdAt) >= from) && (to === null || ms(e.createdAt) <= to);
    const matches = from === null && to === null ? ids : ids.filter((entryId) => inRange(entries[entryId]!));
    const { data, pagination } = pageNewestFirst(matches, q, (entryId) => entryView(entries[entryId]!));
    return { transactions: data, pagination };
  }

  createDebit(id: string, body: unknown) {
    const client = this.client(id);
    const input = parse(debitSchema, body);
    return entryView(this.addEntry(clients.movementEntry(this.ctx.uuid(), client.id, input, this.ctx.now())));
  }

  /** `POST /sandbox/v1/clients/{id}/ledger`: a credit, debit or adjustment, or the reversal of a credited operation. */
  createLedgerEntry(id: string, body: unknown) {
    const client = this.client(id);
    const input = parse(ledgerEntrySchema, body);
    const entryId = this.ctx.uuid();
    const now = this.ctx.now();
    if (input.entryType === 'reversal') return entryView(this.addEntry(clients.reversalEntry(entryId, this.reversible(client, input.operationId), input, now)));
    if (input.operationId != null && this.index.operation(client.id, input.operationId) !== undefined) {
      throw new SandboxError('VALIDATION_ERROR', `Operation ${input.operationId} is already in the ledger of client ${client.id}`, [
        'operationId: already names another entry of this client',
      ]);
    }
    return entryView(this.addEntry(clients.movementEntry(entryId, client.id, input, now)));
  }

  addEntry(entry: Entry): Entry {
    this.ctx.put('entries', entry.id, entry);
    this.index.addEntry(entry);
    return entry;
  }

  createInvoice(id: string, body: unknown) {
    const client = this.client(id);
    const input = parse(createInvoiceSchema, body);
    const type = input.invoiceType ?? 'B';
    const number = invoiceNumber(this.index.lastInvoiceNumber(type) + 1);
    this.checkInvoiceNumberFree(type, input.invoiceNumber ?? number, null);
    const invoice = clients.createInvoice(input, { id: this.ctx.uuid(), client, number, now: this.ctx.now() });
    return invoiceView(this.storeInvoice(invoice));
  }

  getInvoice(id: string, invoiceId: string) {
    return invoiceView(this.invoice(this.client(id), invoiceId));
  }

  updateInvoice(id: string, invoiceId: string, body: unknown) {
    const invoice = this.invoice(this.client(id), invoiceId);
    const next = clients.updateInvoice(invoice, parse(updateInvoiceSchema, body), this.ctx.now());
    this.checkInvoiceNumberFree(next.invoiceType, next.invoiceNumber, invoice.id);
    return invoiceView(this.storeInvoice(next, invoice));
  }

  /** `POST /sandbox/v1/clients/{id}/invoices/{invoiceId}/allocations`: applies cash received to the invoice. */
  allocate(id: string, invoiceId: string, body: unknown) {
    const client = this.client(id);
    const invoice = this.invoice(client, invoiceId);
    const { amount } = parse(allocationSchema, body);
    const { totalCashIn, totalCashOut, allocated } = clients.balance(this.entriesOf(client.id), []);
    const result = clients.allocate(invoice, amount, { id: this.ctx.uuid(), unallocated: totalCashIn - totalCashOut - allocated, now: this.ctx.now() });
    this.storeInvoice(result.invoice, invoice);
    return entryView(this.addEntry(result.entry));
  }

  listInvoices(id: string, query: Record<string, string>) {
    const client = this.client(id);
    const q = parse(listQuery, query, 'query');
    return paginate(this.invoicesOf(client.id).reverse(), q, invoiceView);
  }

  /** The client's credited entry of an operation, for a reversal: refused when there is none, or it was reversed. */
  private reversible(client: Client, operationId: string): Entry {
    const entryId = this.index.operation(client.id, operationId);
    const entry = entryId === undefined ? undefined : this.ctx.state.entries[entryId];
    if (!entry || !clients.isReversible(entry)) {
      throw new SandboxError('VALIDATION_ERROR', `Client ${client.id} has no credited operation ${operationId}`, [
        'operationId: must name a cash_in or credit of this client',
      ]);
    }
    if (this.index.isReversed(client.id, operationId)) {
      throw new SandboxError('INVALID_STATE', `Operation ${operationId} was reversed already`, ['operationId: reversed already']);
    }
    return entry;
  }

  private storeInvoice(invoice: Invoice, before?: Invoice): Invoice {
    this.ctx.put('invoices', invoice.id, invoice);
    this.index.trackInvoice(invoice, before);
    return invoice;
  }

  private checkInvoiceNumberFree(type: Invoice['invoiceType'], number: string, self: string | null): void {
    const owner = this.index.invoiceNumbered(type, number);
    if (owner !== undefined && owner !== self) {
      throw new SandboxError('VALIDATION_ERROR', `Invoice ${owner} is already type ${type} number ${number}`, [
        `invoiceNumber: ${number} is already used by another type ${type} invoice of this account`,
      ]);
    }
  }

  private client(id: string): Client {
    const client = UUID_PATTERN.test(id) ? this.ctx.state.clients[id] : undefined;
    if (!client) throw notFound('Client', id);
    return client;
  }

  private invoice(client: Client, invoiceId: string): Invoice {
    const invoice = UUID_PATTERN.test(invoiceId) ? this.ctx.state.invoices[invoiceId] : undefined;
    if (!invoice || invoice.clientId !== client.id) throw notFound('Invoice', invoiceId);
    return invoice;
  }

  /** A client's entries, oldest first. */
  private entriesOf(clientId: string): Entry[] {
    return this.index.entryIds(clientId).map((id) => this.ctx.state.entries[id]!);
  }

  /** A client's invoices, oldest first. */
  private invoicesOf(clientId: string): Invoice[] {
    return this.index.invoiceIds(clientId).map((id) => this.ctx.state.invoices[id]!);
  }

  private checkTaxIdFree(taxId: string, self: string | null): void {
    const owner = this.index.withTaxId(taxId);
    if (owner !== undefined && owner !== self) {
      throw new SandboxError('TAX_ID_ALREADY_EXISTS', `Client ${owner} already has tax id ${this.ctx.state.clients[owner]!.taxId}`, [
        'taxId: already used by another client of this account',
      ]);
    }
  }

  private storeClient(client: Client, before?: Client): Client {
    this.ctx.put('clients', client.id, client);
    this.trackClient(client, before);
    return client;
  }

  private trackClient(client: Client, before: Client | undefined): void {
    this.index.track(client, before);
    if (client.cvuReadyAt !== before?.cvuReadyAt) this.trackProvisioning(client);
  }

  private trackProvisioning(client: Client): void {
    if (client.cvuReadyAt !== null) this.due.schedule(ms(client.cvuReadyAt), 'cvu', client.id);
  }

  /** The client with a CVU and an alias from its hints (or a random one), both unique in the account. */
  private provisionCvu(client: Client, now: string): Client {
    const brand = this.ctx.state.hubs[client.paymentHubId]?.brand ?? 'SANDBOX';
    const alias = generateAlias(this.ctx.deps.ids, (candidate) => this.hubs.isTaken(candidate), clients.aliasBase(client, brand));
    return clients.provision(client, { cvu: this.hubs.uniqueCvu(), alias }, now);
  }

  private viewOf(client: Client) {
    return clientView(client, this.ctx.state.hubs[client.paymentHubId]);
  }
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
  /** The first entry of each operation of a client (`<client>:<operationId>`), and the operations reversed. */
  private operations = new Map<string, string>();
  private reversed = new Set<string>();
  /** Invoices by type and number (`<type>:<number>`), and the highest sequence of the sandbox's point of sale per type. */
  private invoiceNumbers = new Map<string, string>();
  private lastSequence = new Map<string, number>();

  /** Indexes every client, entry and invoice of a state. */
  build(state: Pick<AccountState, 'clients' | 'entries' | 'invoices'>): void {
    for (const client of Object.values(state.clients)) this.track(client);
    for (const entry of Object.values(state.entries)) this.addEntry(entry);
    for (const invoice of Object.values(state.invoices)) this.trackInvoice(invoice);
  }

  /** Indexes a client as stored now; `before` is the version it replaces. */
  track(client: Client, before?: Client): void {
    if (before) {
      this.byTaxId.delete(clients.taxIdKey(before.taxId));
      for (const address of addresses(before)) this.byAddress.delete(address);
    }
    this.byTaxId.set(clients.taxIdKey(client.taxId), client.id);
    for (const address of addresses(client)) this.byAddress.set(address, client.id);
  }

  withTaxId(taxId: string): string | undefined {
    return this.byTaxId.get(clients.taxIdKey(taxId));
  }

  /** The client whose CVU or alias (case-insensitive) this is. */
  at(cvuOrAlias: string): string | undefined {
    return this.byAddress.get(cvuOrAlias.toUpperCase());
  }

  addEntry(entry: Entry): void {
    push(this.entries, entry.clientId, entry.id);
    this.entryTypes.made(entry.id);
    this.entryTypes.add(`entryType:${entry.clientId}:${entry.entryType}`, entry.id);
    if (entry.operationId === null) return;
    const key = `${entry.clientId}:${entry.operationId}`;
    if (entry.entryType === 'reversal') this.reversed.add(key);
    else if (!this.operations.has(key)) this.operations.set(key, entry.id);
  }

  /** The entry that brought a client's operation into the ledger (not its reversal). */
  operation(clientId: string, operationId: string): string | undefined {
    return this.operations.get(`${clientId}:${operationId}`);
  }

  isReversed(clientId: string, operationId: string): boolean {
    return this.reversed.has(`${clientId}:${operationId}`);
  }

  /** Indexes an invoice as stored now; `before` is the version it replaces. */
  trackInvoice(invoice: Invoice, before?: Invoice): void {
    if (before) this.invoiceNumbers.delete(`${before.invoiceType}:${before.invoiceNumber}`);
    else push(this.invoices, invoice.clientId, invoice.id);
    this.invoiceNumbers.set(`${invoice.invoiceType}:${invoice.invoiceNumber}`, invoice.id);
    const sequence = invoiceSequence(invoice.invoiceNumber) ?? 0;
    if (sequence > this.lastInvoiceNumber(invoice.invoiceType)) this.lastSequence.set(invoice.invoiceType, sequence);
  }

  invoiceNumbered(type: string, number: string): string | undefined {
    return this.invoiceNumbers.get(`${type}:${number}`);
  }

  /** The highest sequence the account's invoices of a type have at the sandbox's point of sale (0: none yet). */
  lastInvoiceNumber(type: string): number {
    return this.lastSequence.get(type) ?? 0;
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
