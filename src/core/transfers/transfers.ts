import type { Events } from '../callbacks/index.js';
import * as clients from '../clients/index.js';
import { type ClientLedger, cashInEntry } from '../clients/index.js';
import { fromCents, notFound } from '../conventions/index.js';
import type { Holder, Hubs } from '../hubs/index.js';
import {
  type CashIn,
  type Client,
  listQuery,
  parse,
  type Transfer,
  transferSchema,
  transferView,
} from '../records/index.js';
import { type AccountContext, pageOf } from '../store/index.js';
import type { VaPayments } from '../va-payments/index.js';
import * as va from '../va-payments/index.js';

/**
 * Simulated bank transfers and their matching: to a hub's collection CVU (the amount-locked payment waiting for that
 * total), to a pool CVU (the time-locked payment holding it) or to a client's CVU (its ledger); anything else is
 * returned, with the reason.
 */
export class Transfers {
  constructor(
    private readonly ctx: AccountContext,
    private readonly hubs: Hubs,
    private readonly payments: VaPayments,
    private readonly ledger: ClientLedger,
    private readonly events: Events,
  ) {}

  createTransfer(body: unknown) {
    const input = parse(transferSchema, body);
    const holders = this.hubs.holdersAt(input.to);
    const target = holders[0];
    if (target === undefined) throw notFound('Account (CVU or alias)', input.to);
    const now = this.ctx.now();
    const transfer: Transfer = {
      id: this.ctx.uuid(),
      operationId: `op_${this.ctx.uuid().replaceAll('-', '').slice(0, 24)}`,
      to: input.to,
      cvu: target.cvu,
      total: input.total,
      taxes: input.taxes,
      from: input.from
        ? { name: input.from.name ?? undefined, taxId: input.from.taxId ?? undefined, cbu: input.from.cbu ?? undefined }
        : null,
      outcome: 'returned',
      reason: null,
      target: null,
      eventIds: [],
      createdAt: now,
    };
    if (holders.length > 1) {
      transfer.reason = `${input.to} has more than one holder (${holders.map(holderName).join(', ')})`;
      return this.record(transfer);
    }
    if (target.kind === 'client') return this.record(this.creditClientCvu(target.client, transfer));
    const payment =
      target.kind === 'collection'
        ? this.payments.lockedBy(target.hubId, input.total)
        : this.payments.holding(target.entry);
    if (!payment) {
      transfer.reason =
        target.kind === 'collection'
          ? `no active amount-locked VA payment waits for ${fromCents(input.total)} ARS`
          : 'no active VA payment holds this CVU';
    } else if (!va.acceptsTotal(payment, input.total)) {
      transfer.reason = `total ${fromCents(input.total)} does not match the locked amount ${fromCents(payment.amount!)} of VA payment ${payment.id}`;
    } else {
      const cashIn: CashIn = {
        operationId: transfer.operationId,
        transferId: transfer.id,
        total: input.total,
        taxes: input.taxes,
        incomingAmount: input.total - input.taxes,
        receivedAt: now,
      };
      const { events } = this.payments.apply(va.creditTransfer(payment, cashIn, now));
      const client = payment.clientId === null ? undefined : this.ctx.get('clients', payment.clientId);
      if (client) {
        const credit = { amount: cashIn.incomingAmount, operationId: transfer.operationId, paymentId: payment.id, now };
        this.ledger.addEntry(cashInEntry(this.ctx.uuid(), client.id, credit));
      }
      transfer.outcome = 'credited';
      transfer.target = { type: 'va_payment', id: payment.id };
      transfer.eventIds = events.map((event) => event.id);
    }
    return this.record(transfer);
  }

  listTransfers(query: Record<string, string>) {
    return pageOf(this.ctx.records, 'transfers', {}, parse(listQuery, query, 'query'), transferView);
  }

  private record(transfer: Transfer) {
    this.ctx.put('transfers', transfer.id, transfer);
    const view = transferView(transfer);
    this.ctx.notify('transfer', () => ({ type: 'transfer', account: this.ctx.key, transfer: view }));
    return view;
  }

  /** A transfer to a client's CVU: a `cash_in` entry and a `client.cashin` event while the CVU is active, else returned. */
  private creditClientCvu(client: Client, transfer: Transfer): Transfer {
    if (client.cvuStatus !== 'active') {
      transfer.reason = `the CVU of client ${client.id} is ${client.cvuStatus}`;
      return transfer;
    }
    const credit = {
      amount: transfer.total - transfer.taxes,
      operationId: transfer.operationId,
      paymentId: null,
      now: transfer.createdAt,
    };
    this.ledger.addEntry(cashInEntry(this.ctx.uuid(), client.id, credit));
    const event = this.events.raise(clients.cashInEvent(client, transfer, this.ctx.uuid(), transfer.createdAt));
    transfer.outcome = 'credited';
    transfer.target = { type: 'client', id: client.id };
    transfer.eventIds = [event.id];
    return transfer;
  }
}

/** A holder of a CVU or alias in words, for a transfer's reason. */
function holderName(holder: Holder): string {
  if (holder.kind === 'client') return `client ${holder.client.id}`;
  return holder.kind === 'pool' ? `pool entry ${holder.entry.cvu}` : `hub ${holder.hubId}`;
}
