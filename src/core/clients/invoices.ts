import { type Cents, formatCents, SandboxError } from '../conventions/index.js';
import type {
  Client,
  CreateInvoiceInput,
  Entry,
  Invoice,
  PaymentStatus,
  UpdateInvoiceInput,
} from '../records/index.js';
import { patched } from './clients.js';

/** A client's invoices (contract part 3) as pure rules: created, updated, and paid by allocations of the client's cash. */

/** How much of an invoice allocations covered: none `pending`, some `partial`, all `paid`. */
const paymentStatusOf = (allocated: Cents, total: Cents): PaymentStatus =>
  allocated === 0 ? 'pending' : allocated >= total ? 'paid' : 'partial';

const invalid = (field: string, problem: string) =>
  new SandboxError('VALIDATION_ERROR', `Invalid request body: ${field} ${problem}`, [`${field}: ${problem}`]);

/** The rules an invoice keeps after every create and update. */
function checked(invoice: Invoice, currency: string | null | undefined): Invoice {
  if (currency != null && currency !== 'ARS') {
    throw new SandboxError('UNSUPPORTED_CURRENCY', `Currency ${currency} is not supported: invoices are ARS only`, [
      'currency: must be ARS',
    ]);
  }
  const parts = [invoice.subtotalNet, invoice.vatAmount, invoice.otherTaxes];
  const sum = parts.reduce<number>((acc, part) => acc + (part ?? 0), 0);
  // AFIP's rule for an electronic invoice: the total is the net plus VAT plus other taxes, to the cent.
  if (parts.some((part) => part !== null) && sum !== invoice.totalAmount) {
    throw invalid(
      'totalAmount',
      `must equal subtotalNet + vatAmount + otherTaxes (${formatCents(sum)}), got ${formatCents(invoice.totalAmount)}`,
    );
  }
  if (invoice.invoiceType === 'C' && (invoice.vatAmount ?? 0) > 0)
    throw invalid('vatAmount', 'must be 0 on a type C invoice: it shows no VAT');
  if (invoice.dueAt !== null && invoice.dueAt < invoice.issuedAt)
    throw invalid('dueAt', `must not be before issuedAt (${invoice.issuedAt})`);
  return invoice;
}

/** A new invoice: buyer from the client, `pending`, numbered by the account (`number`) unless the request numbers it. */
export function createInvoice(
  input: CreateInvoiceInput,
  ctx: { id: string; client: Client; number: string; now: string },
): Invoice {
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
  new SandboxError('INVALID_STATE', `Invoice ${invoice.id} is ${invoice.paymentStatus}: it cannot be ${doing}`, [
    `paymentStatus: ${invoice.paymentStatus}`,
  ]);

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
export function allocate(
  invoice: Invoice,
  amount: Cents,
  ctx: { id: string; unallocated: Cents; now: string },
): { invoice: Invoice; entry: Entry } {
  if (invoice.paymentStatus === 'cancelled' || invoice.paymentStatus === 'paid') throw notOpen(invoice, 'allocated to');
  const due = invoice.totalAmount - invoice.allocated;
  if (amount > due) {
    throw new SandboxError('INVALID_STATE', `Invoice ${invoice.id} owes ${formatCents(due)}`, [
      `amount: must be at most ${formatCents(due)}, what the invoice still owes`,
    ]);
  }
  if (amount > ctx.unallocated) {
    throw new SandboxError(
      'INVALID_STATE',
      `The client has ${formatCents(Math.max(ctx.unallocated, 0))} not allocated yet`,
      [
        `amount: must be at most ${formatCents(Math.max(ctx.unallocated, 0))}, the cash in (less cash out) not yet allocated`,
      ],
    );
  }
  const allocated = invoice.allocated + amount;
  return {
    invoice: {
      ...invoice,
      allocated,
      paymentStatus: paymentStatusOf(allocated, invoice.totalAmount),
      updatedAt: ctx.now,
    },
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
