import type { AccountContext } from './account-context.js';
import { iso, ms } from './clock.js';
import * as clients from './clients.js';
import { generateAlias } from './cvu.js';
import type { DueWork } from './due-work.js';
import { notFound, SandboxError } from './errors.js';
import type { Hubs } from './hubs.js';
import { UUID_PATTERN } from './ids.js';
import { newestFirst, pageNewestFirst, paginate } from './pagination.js';
import {
  clientCvuSchema,
  createClientSchema,
  createInvoiceSchema,
  debitSchema,
  listClientsQuery,
  listQuery,
  listTransactionsQuery,
  parse,
  updateClientSchema,
  updateInvoiceSchema,
} from './schemas.js';
import type { Client, Entry, Invoice } from './state.js';
import { balanceView, clientView, entryView, invoiceView } from './views.js';

/**
 * Clients with a dedicated CVU, their ledger of entries, their invoices and balance. The rules
 * themselves are in `clients.ts`; this keeps the records and their lookups.
 */
export class ClientLedger {
  private readonly index = new clients.ClientIndex();

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
    const digits = q.taxId === undefined ? undefined : clients.taxIdDigits(q.taxId);
    const matches = newestFirst(this.ctx.state.clients).filter(
      (c) =>
        (digits === undefined || clients.taxIdDigits(c.taxId) === digits) &&
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
    return entryView(this.addEntry(clients.debitEntry(this.ctx.uuid(), client.id, input, this.ctx.now())));
  }

  addEntry(entry: Entry): Entry {
    this.ctx.put('entries', entry.id, entry);
    this.index.addEntry(entry);
    return entry;
  }

  createInvoice(id: string, body: unknown) {
    const client = this.client(id);
    const input = parse(createInvoiceSchema, body);
    const invoice = clients.createInvoice(input, { id: this.ctx.uuid(), clientId: client.id, now: this.ctx.now() });
    this.ctx.put('invoices', invoice.id, invoice);
    this.index.addInvoice(invoice);
    return invoiceView(invoice);
  }

  updateInvoice(id: string, invoiceId: string, body: unknown) {
    const invoice = this.invoice(this.client(id), invoiceId);
    const next = clients.updateInvoice(invoice, parse(updateInvoiceSchema, body), this.ctx.now());
    this.ctx.put('invoices', next.id, next);
    return invoiceView(next);
  }

  listInvoices(id: string, query: Record<string, string>) {
    const client = this.client(id);
    const q = parse(listQuery, query, 'query');
    return paginate(this.invoicesOf(client.id).reverse(), q, invoiceView);
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
