import { fromCents } from './money.js';
import type { Balance } from './clients.js';
import { LEGACY_SOURCE_TYPES, type CallbackDeliverySummary, type Client, type Delivery, type Entry, type Hub, type Invoice, type SourceType, type Transfer, type VaPayment } from './state.js';
import type { SentEvent } from './event-body.js';
import { remainingAmount } from './va-payment.js';

/** What the API returns: the stored records with money as ARS numbers. */

export type { CallbackDeliverySummary };

const HOLDER_NAME = 'Sandbox Payments S.A.';
const BANK_NAME = 'Banco Sandbox';

export function vaPaymentView(payment: VaPayment, callbackDelivery: CallbackDeliverySummary) {
  const amount = payment.amount === null ? null : fromCents(payment.amount);
  return {
    id: payment.id,
    status: payment.status,
    lockMode: payment.lockMode,
    amount,
    currency: payment.currency,
    ttlSeconds: payment.ttlSeconds,
    expiresAt: payment.expiresAt,
    cvu: payment.cvu,
    alias: payment.alias,
    paymentInstructions: {
      cvu: payment.cvu,
      alias: payment.alias,
      holderName: HOLDER_NAME,
      bankName: BANK_NAME,
      amount,
      currency: payment.currency,
      expiresAt: payment.expiresAt,
    },
    clientId: payment.clientId,
    clientTaxId: payment.clientTaxId,
    clientName: payment.clientName,
    callbackUrl: payment.callbackUrl,
    successUrl: payment.successUrl,
    failureUrl: payment.failureUrl,
    externalReference: payment.externalReference,
    metadata: payment.metadata,
    paymentHubId: payment.paymentHubId,
    totalReceived: fromCents(payment.totalReceived),
    receivedAmount: fromCents(payment.receivedAmount),
    remainingAmount: fromCents(remainingAmount(payment)),
    cashIns: payment.cashIns.map((cashIn) => ({
      operationId: cashIn.operationId,
      transferId: cashIn.transferId,
      total: fromCents(cashIn.total),
      taxes: fromCents(cashIn.taxes),
      incomingAmount: fromCents(cashIn.incomingAmount),
      totalWithoutTaxes: fromCents(cashIn.incomingAmount),
      receivedAt: cashIn.receivedAt,
    })),
    callbackDelivery,
    createdAt: payment.createdAt,
    updatedAt: payment.updatedAt,
    completedAt: payment.completedAt,
    cancelledAt: payment.cancelledAt,
    expiredAt: payment.expiredAt,
  };
}
export type VaPaymentView = ReturnType<typeof vaPaymentView>;

export function hubView(hub: Hub) {
  return {
    id: hub.id,
    name: hub.name,
    brand: hub.brand,
    dedicated_client_cvus_enabled: hub.dedicated_client_cvus_enabled,
    cvuProvisioning: hub.cvuProvisioning,
    collectionCvu: hub.collectionCvu,
    collectionAlias: hub.collectionAlias,
  };
}

export function transferView(transfer: Transfer) {
  return {
    id: transfer.id,
    operationId: transfer.operationId,
    to: transfer.to,
    cvu: transfer.cvu,
    total: fromCents(transfer.total),
    taxes: fromCents(transfer.taxes),
    netAmount: fromCents(transfer.total - transfer.taxes),
    from: transfer.from,
    outcome: transfer.outcome,
    reason: transfer.reason,
    target: transfer.target,
    eventIds: transfer.eventIds,
    createdAt: transfer.createdAt,
  };
}

export function deliveryView(delivery: Delivery) {
  const last = delivery.attempts.at(-1);
  return {
    id: delivery.id,
    eventId: delivery.eventId,
    eventType: delivery.eventType,
    url: delivery.url,
    /** Where the last attempt went instead of `url` (forwarding), or where a redelivery was asked to go. */
    forwardedTo: last ? (last.forwardedTo ?? null) : (delivery.redeliverTo ?? null),
    status: delivery.status,
    reason: delivery.reason,
    attempts: delivery.attempts.length,
    lastResponseStatus: last?.responseStatus ?? null,
    lastError: last?.error ?? null,
    nextAttemptAt: delivery.nextAttemptAt,
    redeliveryOf: delivery.redeliveryOf,
    createdAt: delivery.createdAt,
    updatedAt: delivery.updatedAt,
  };
}

export function eventView(event: SentEvent, deliveries: Delivery[]) {
  return {
    id: event.id,
    eventType: event.eventType,
    vaPaymentId: event.vaPaymentId,
    clientId: event.clientId,
    url: event.url,
    droppedReason: event.droppedReason,
    body: event.body,
    createdAt: event.createdAt,
    deliveries: deliveries.map(deliveryView),
  };
}

export function clientView(client: Client, hub: Hub | undefined) {
  return {
    id: client.id,
    paymentHubId: client.paymentHubId,
    hubName: hub?.name ?? `Sandbox Hub ${client.paymentHubId}`,
    name: client.name,
    taxId: client.taxId,
    cashinCallbackUrl: client.cashinCallbackUrl,
    emails: client.emails,
    phones: client.phones,
    aliasPrefixHint: client.aliasPrefixHint,
    aliasSuffixHint: client.aliasSuffixHint,
    externalReference: client.externalReference,
    metadata: client.metadata,
    cvu: client.cvu,
    alias: client.alias,
    cvuStatus: client.cvuStatus,
    createdAt: client.createdAt,
    updatedAt: client.updatedAt,
  };
}

export function entryView(entry: Entry) {
  return {
    id: entry.id,
    clientId: entry.clientId,
    entryType: entry.entryType,
    amount: fromCents(entry.amount),
    currency: entry.currency,
    description: entry.description,
    operationId: entry.operationId,
    paymentId: entry.paymentId,
    invoiceId: entry.invoiceId,
    // The sandbox has no payment links.
    tempLinkId: null,
    sourceType: sourceTypeOf(entry),
    createdAt: entry.createdAt,
  };
}

/** An entry's `sourceType` in the real API's values, whatever release wrote it. */
const sourceTypeOf = (entry: Entry): SourceType =>
  entry.sourceType in LEGACY_SOURCE_TYPES ? LEGACY_SOURCE_TYPES[entry.sourceType as keyof typeof LEGACY_SOURCE_TYPES] : (entry.sourceType as SourceType);

/** The invoice as the reference shows it, with the amount under both its names (spec `total_amount`, reference `totalAmount`). */
export function invoiceView(invoice: Invoice) {
  const money = (cents: number | null) => (cents === null ? null : fromCents(cents));
  return {
    id: invoice.id,
    clientId: invoice.clientId,
    invoiceNumber: invoice.invoiceNumber,
    invoiceType: invoice.invoiceType,
    sellerTaxId: invoice.sellerTaxId,
    sellerName: invoice.sellerName,
    buyerTaxId: invoice.buyerTaxId,
    buyerName: invoice.buyerName,
    subtotalNet: money(invoice.subtotalNet),
    vatAmount: money(invoice.vatAmount),
    otherTaxes: money(invoice.otherTaxes),
    totalAmount: fromCents(invoice.totalAmount),
    total_amount: fromCents(invoice.totalAmount),
    currency: invoice.currency,
    issuedAt: invoice.issuedAt,
    dueAt: invoice.dueAt,
    paymentStatus: invoice.paymentStatus,
    paymentTerms: invoice.paymentTerms,
    observations: invoice.observations,
    createdAt: invoice.createdAt,
    updatedAt: invoice.updatedAt,
  };
}

export function balanceView(clientId: string, balance: Balance) {
  return {
    clientId,
    currency: 'ARS',
    totalCashIn: fromCents(balance.totalCashIn),
    totalCashOut: fromCents(balance.totalCashOut),
    totalInvoiced: fromCents(balance.totalInvoiced),
    balance: fromCents(balance.balance),
  };
}
