import { fromCents } from '../conventions/index.js';
import {
  type Client,
  createClientSchema,
  createVaPaymentSchema,
  type Invoice,
  invoiceFields,
  type VaPayment,
} from '../records/index.js';

/** The create requests the scenario recorder makes again of an account's VA payments, clients and invoices. */

/**
 * A record's create request again: each field the request schema takes, as the record holds it unless `asked` says how
 * the replay asks for it; left out when null or empty (what a create makes of an absent field). A field added to a
 * record and its request is recorded with no line here (test/record-fields.test.ts).
 */
function askedAgain<R extends object, F extends string>(
  fields: Record<F, unknown>,
  record: R,
  // A request field the record does not hold must be said how to ask for (a type error otherwise).
  asked: Partial<Record<F, unknown>> & Record<Exclude<F, keyof R>, unknown>,
): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const field of Object.keys(fields) as F[]) {
    const value =
      field in asked ? (asked as Partial<Record<F, unknown>>)[field] : (record as Record<string, unknown>)[field];
    const empty =
      value === null || value === undefined || (typeof value === 'object' && Object.keys(value).length === 0);
    if (!empty) body[field] = value;
  }
  return body;
}

export function paymentBody(payment: VaPayment, url: string, clientId: string | undefined): Record<string, unknown> {
  return askedAgain(createVaPaymentSchema.shape, payment, {
    amount: payment.amount === null ? null : fromCents(payment.amount),
    clientId,
    callbackUrl: payment.callbackUrl && `${url}/callback`,
    successUrl: payment.successUrl && `${url}/success`,
    failureUrl: payment.failureUrl && `${url}/failure`,
  });
}

export function invoiceBody(invoice: Invoice): Record<string, unknown> {
  const money = (cents: number | null) => (cents === null ? null : fromCents(cents));
  return askedAgain(invoiceFields, invoice, {
    subtotalNet: money(invoice.subtotalNet),
    vatAmount: money(invoice.vatAmount),
    otherTaxes: money(invoice.otherTaxes),
    totalAmount: fromCents(invoice.totalAmount),
    total_amount: null,
  });
}

export function clientBody(client: Client, url: string): Record<string, unknown> {
  return askedAgain(createClientSchema.shape, client, { cashinCallbackUrl: client.cashinCallbackUrl && url });
}
