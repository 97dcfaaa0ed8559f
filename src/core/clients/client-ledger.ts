import { iso, ms, notFound, SandboxError, UUID_PATTERN } from '../conventions/index.js';
import { generateAlias, type Hubs } from '../hubs/index.js';
import {
  allocationSchema,
  balanceView,
  type Client,
  clientCvuSchema,
  clientView,
  createClientSchema,
  createInvoiceSchema,
  debitSchema,
  type Entry,
  entryView,
  type Invoice,
  invoiceNumber,
  invoiceSequence,
  invoiceView,
  ledgerEntrySchema,
  listClientsQuery,
  listQuery,
  listTransactionsQuery,
  parse,
  updateClientSchema,
  updateInvoiceSchema,
} from '../records/index.js';
import { type AccountContext, pageOf } from '../store/index.js';
import * as clients from './clients.js';
import * as invoices from './invoices.js';
import * as ledger from './ledger.js';

/**
 * Clients with a dedicated CVU, their ledger of entries, their invoices and balance. The rules themselves are in
 * `clients.ts`, `ledger.ts` and `invoices.ts`; this stores the records, found by the columns `COLUMNS` declares.
 */
export class ClientLedger {
  constructor(
    private readonly ctx: AccountContext,
    private readonly hubs: Hubs,
  ) {}

  createClient(body: unknown) {
    const input = parse(createClientSchema, body);
    if (this.ctx.deps.strictTaxId) clients.assertCuit(input.taxId);
    const hub = this.hubs.hubFor(input.paymentHubId);
    if (!hub.dedicated_client_cvus_enabled) {
      throw new SandboxError(
        'DEDICATED_CVUS_DISABLED',
        `Payment hub ${hub.id} does not have dedicated client CVUs enabled`,
        ['paymentHubId: dedicated_client_cvus_enabled is false on this hub'],
      );
    }
    this.checkTaxIdFree(input.taxId, null);
    const now = this.ctx.nowMs();
    const client = clients.createClient(input, { id: this.ctx.uuid(), now, hub });
    return this.viewOf(
      this.storeClient(hub.cvuProvisioning === 'inline' ? this.provisionCvu(client, iso(now)) : client),
    );
  }

  getClient(id: string) {
    return this.viewOf(this.client(id));
  }

  listClients(query: Record<string, string>) {
    const q = parse(listClientsQuery, query, 'query');
    const where = {
      ...(q.taxId === undefined ? {} : { tax_id: clients.taxIdKey(q.taxId) }),
      ...(q.externalReference === undefined ? {} : { external_reference: q.externalReference }),
    };
    return pageOf(this.ctx.records, 'clients', where, q, (c) => this.viewOf(c));
  }

  updateClient(id: string, body: unknown) {
    const client = this.client(id);
    const patch = parse(updateClientSchema, body);
    if (patch.taxId !== undefined) {
      if (this.ctx.deps.strictTaxId) clients.assertCuit(patch.taxId);
      this.checkTaxIdFree(patch.taxId, client.id);
    }
    return this.viewOf(this.storeClient(clients.updateClient(client, patch, this.ctx.now())));
  }

  /** The sandbox's switch of a client's CVU; `active` provisions one now for a client that has none yet. */
  setClientCvuStatus(id: string, body: unknown) {
    const client = this.client(id);
    const { cvuStatus } = parse(clientCvuSchema, body);
    const now = this.ctx.now();
    const next =
      cvuStatus === 'active' && client.cvu === null
        ? this.provisionCvu(client, now)
        : clients.setCvuStatus(client, cvuStatus, now);
    return this.viewOf(this.storeClient(next));
  }

  /** Activates a delayed CVU fallen due, unless its time changed since. */
  provisionDue(id: string, at: number): boolean {
    const client = this.ctx.get('clients', id);
    if (client?.cvuReadyAt == null || ms(client.cvuReadyAt) !== at) return false;
    this.storeClient(this.provisionCvu(client, client.cvuReadyAt));
    return true;
  }

  clientBalance(id: string) {
    const client = this.client(id);
    return balanceView(client.id, ledger.balance(this.entriesOf(client.id), this.invoicesOf(client.id)));
  }

  listTransactions(id: string, query: Record<string, string>) {
    const client = this.client(id);
    const q = parse(listTransactionsQuery, query, 'query');
    const where = {
      ...(q.entryType === undefined
        ? { client_id: client.id }
        : { entry_type: q.entryType.map((type) => `${client.id}:${type}`) }),
      ...(q.from === undefined && q.to === undefined
        ? {}
        : { created_at: { from: q.from === undefined ? null : ms(q.from), to: q.to === undefined ? null : ms(q.to) } }),
    };
    const { data, pagination } = pageOf(this.ctx.records, 'entries', where, q, entryView);
    return { transactions: data, pagination };
  }

  createDebit(id: string, body: unknown) {
    const client = this.client(id);
    const input = parse(debitSchema, body);
    return entryView(this.addEntry(ledger.movementEntry(this.ctx.uuid(), client.id, input, this.ctx.now())));
  }

  /** `POST /sandbox/v1/clients/{id}/ledger`: a credit, debit or adjustment, or the reversal of a credited operation. */
  createLedgerEntry(id: string, body: unknown) {
    const client = this.client(id);
    const input = parse(ledgerEntrySchema, body);
    const entryId = this.ctx.uuid();
    const now = this.ctx.now();
    if (input.entryType === 'reversal')
      return entryView(
        this.addEntry(ledger.reversalEntry(entryId, this.reversible(client, input.operationId), input, now)),
      );
    if (input.operationId != null && this.operation(client.id, input.operationId) !== undefined) {
      throw new SandboxError(
        'VALIDATION_ERROR',
        `Operation ${input.operationId} is already in the ledger of client ${client.id}`,
        ['operationId: already names another entry of this client'],
      );
    }
    return entryView(this.addEntry(ledger.movementEntry(entryId, client.id, input, now)));
  }

  addEntry(entry: Entry): Entry {
    this.ctx.put('entries', entry.id, entry);
    return entry;
  }

  /** The entry that brought a client's operation into the ledger (not its reversal). */
  private operation(clientId: string, operationId: string): Entry | undefined {
    return this.ctx.records.find('entries', { where: { operation: `${clientId}:${operationId}` } });
  }

  createInvoice(id: string, body: unknown) {
    const client = this.client(id);
    const input = parse(createInvoiceSchema, body);
    const type = input.invoiceType ?? 'B';
    const last = this.ctx.records.max('invoices', 'sequence', { sequence: { from: `${type}:`, to: `${type}:~` } });
    const number = invoiceNumber((last === null ? 0 : invoiceSequence(String(last).slice(2))!) + 1);
    this.checkInvoiceNumberFree(type, input.invoiceNumber ?? number, null);
    const invoice = invoices.createInvoice(input, { id: this.ctx.uuid(), client, number, now: this.ctx.now() });
    return invoiceView(this.storeInvoice(invoice));
  }

  getInvoice(id: string, invoiceId: string) {
    return invoiceView(this.invoice(this.client(id), invoiceId));
  }

  updateInvoice(id: string, invoiceId: string, body: unknown) {
    const invoice = this.invoice(this.client(id), invoiceId);
    const next = invoices.updateInvoice(invoice, parse(updateInvoiceSchema, body), this.ctx.now());
    this.checkInvoiceNumberFree(next.invoiceType, next.invoiceNumber, invoice.id);
    return invoiceView(this.storeInvoice(next));
  }

  /** `POST /sandbox/v1/clients/{id}/invoices/{invoiceId}/allocations`: applies cash received to the invoice. */
  allocate(id: string, invoiceId: string, body: unknown) {
    const client = this.client(id);
    const invoice = this.invoice(client, invoiceId);
    const { amount } = parse(allocationSchema, body);
    const { totalCashIn, totalCashOut, allocated } = ledger.balance(this.entriesOf(client.id), []);
    const result = invoices.allocate(invoice, amount, {
      id: this.ctx.uuid(),
      unallocated: totalCashIn - totalCashOut - allocated,
      now: this.ctx.now(),
    });
    this.storeInvoice(result.invoice);
    return entryView(this.addEntry(result.entry));
  }

  listInvoices(id: string, query: Record<string, string>) {
    const client = this.client(id);
    return pageOf(
      this.ctx.records,
      'invoices',
      { client_id: client.id },
      parse(listQuery, query, 'query'),
      invoiceView,
    );
  }

  /** The client's credited entry of an operation, for a reversal: refused when there is none, or it was reversed. */
  private reversible(client: Client, operationId: string): Entry {
    const entry = this.operation(client.id, operationId);
    if (!entry || !ledger.isReversible(entry)) {
      throw new SandboxError('VALIDATION_ERROR', `Client ${client.id} has no credited operation ${operationId}`, [
        'operationId: must name a cash_in or credit of this client',
      ]);
    }
    if (this.ctx.records.find('entries', { where: { reversal: `${client.id}:${operationId}` } })) {
      throw new SandboxError('INVALID_STATE', `Operation ${operationId} was reversed already`, [
        'operationId: reversed already',
      ]);
    }
    return entry;
  }

  private storeInvoice(invoice: Invoice): Invoice {
    this.ctx.put('invoices', invoice.id, invoice);
    return invoice;
  }

  private checkInvoiceNumberFree(type: Invoice['invoiceType'], number: string, self: string | null): void {
    const owner = this.ctx.records.find('invoices', { where: { number: `${type}:${number}` } })?.id;
    if (owner !== undefined && owner !== self) {
      throw new SandboxError('VALIDATION_ERROR', `Invoice ${owner} is already type ${type} number ${number}`, [
        `invoiceNumber: ${number} is already used by another type ${type} invoice of this account`,
      ]);
    }
  }

  private client(id: string): Client {
    const client = UUID_PATTERN.test(id) ? this.ctx.get('clients', id) : undefined;
    if (!client) throw notFound('Client', id);
    return client;
  }

  private invoice(client: Client, invoiceId: string): Invoice {
    const invoice = UUID_PATTERN.test(invoiceId) ? this.ctx.get('invoices', invoiceId) : undefined;
    if (!invoice || invoice.clientId !== client.id) throw notFound('Invoice', invoiceId);
    return invoice;
  }

  /** A client's entries, oldest first. */
  private entriesOf(clientId: string): Iterable<Entry> {
    return this.ctx.records.each('entries', { where: { client_id: clientId } });
  }

  /** A client's invoices, oldest first. */
  private invoicesOf(clientId: string): Iterable<Invoice> {
    return this.ctx.records.each('invoices', { where: { client_id: clientId } });
  }

  private checkTaxIdFree(taxId: string, self: string | null): void {
    const owner = this.ctx.records.find('clients', { where: { tax_id: clients.taxIdKey(taxId) } });
    if (owner !== undefined && owner.id !== self) {
      throw new SandboxError('TAX_ID_ALREADY_EXISTS', `Client ${owner.id} already has tax id ${owner.taxId}`, [
        'taxId: already used by another client of this account',
      ]);
    }
  }

  private storeClient(client: Client): Client {
    this.ctx.put('clients', client.id, client);
    return client;
  }

  /** The client with a CVU and an alias from its hints (or a random one), both unique in the account. */
  private provisionCvu(client: Client, now: string): Client {
    const brand = this.ctx.get('hubs', String(client.paymentHubId))?.brand ?? 'SANDBOX';
    const alias = generateAlias(
      this.ctx.deps.ids,
      (candidate) => this.hubs.isTaken(candidate),
      clients.aliasBase(client, brand),
    );
    return clients.provision(client, { cvu: this.hubs.uniqueCvu(), alias }, now);
  }

  private viewOf(client: Client) {
    return clientView(client, this.ctx.get('hubs', String(client.paymentHubId)));
  }
}
