import { type Cents, formatCents, SandboxError } from '../conventions/index.js';
import type { Balance, DebitInput, Entry, Invoice, LedgerEntryInput } from '../records/index.js';

/** A client's ledger (contract part 3) as pure rules: the entries of money in and out, and the balance over them. */

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
    description:
      credit.paymentId === null ? 'Transfer to the client CVU' : `Transfer credited to VA payment ${credit.paymentId}`,
    operationId: credit.operationId,
    paymentId: credit.paymentId,
    invoiceId: null,
    sourceType: credit.paymentId === null ? 'manual_deposit' : 'other',
    createdAt: credit.now,
  };
}

/** A movement the sandbox records: a debit is stored negative, a credit positive, an adjustment with its own sign. */
export function movementEntry(
  id: string,
  clientId: string,
  input: DebitInput & { entryType?: 'credit' | 'debit' | 'adjustment'; operationId?: string | null },
  now: string,
): Entry {
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
export const isReversible = (entry: Entry): boolean =>
  (entry.entryType === 'cash_in' || entry.entryType === 'credit') && entry.amount > 0;

/**
 * The bank returns a credited operation: an entry taking back its whole amount, with its `operationId` (and
 * `paymentId`). `original` is the client's reversible entry of that operation, not reversed yet.
 */
export function reversalEntry(
  id: string,
  original: Entry,
  input: Extract<LedgerEntryInput, { entryType: 'reversal' }>,
  now: string,
): Entry {
  if (input.amount != null && input.amount !== original.amount) {
    throw new SandboxError(
      'VALIDATION_ERROR',
      `A reversal takes back the whole operation ${original.operationId}: ${formatCents(original.amount)}`,
      [
        `amount: must be ${formatCents(original.amount)}, the amount of operation ${original.operationId} (or left out)`,
      ],
    );
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
