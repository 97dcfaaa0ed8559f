/** The check of an account export's amounts: totals, taxes, statuses and entry signs as the API's rules make them. */
import { formatCents } from '../conventions/index.js';
import type { Entry, VaPayment } from '../records/index.js';
import type { Problem, Records } from './export-problems.js';

/** The sign each kind of ledger entry has (contract part 3: positive credit, negative debit). */
const ENTRY_SIGN: Partial<Record<Entry['entryType'], 1 | -1>> = {
  cash_in: 1,
  credit: 1,
  debit: -1,
  reversal: -1,
  invoice_allocation: 1,
};

/**
 * What the API's rules make true of amounts, checked as strictly: a VA payment's totals are the sums of its cash-ins
 * and its status agrees with them, a transfer's taxes are less than its total, entries have their kind's sign. A
 * file that breaks one would answer sums and statuses the API can never give.
 */
export function moneyProblems(account: Records): Problem[] {
  const problems: Problem[] = [];
  const taxed = (path: (string | number)[], { total, taxes }: { total: number; taxes: number }) => {
    if (taxes >= total)
      problems.push({ path: [...path, 'taxes'], message: `must be less than total (${formatCents(total)})` });
  };
  for (const [key, payment] of Object.entries(account.vaPayments)) {
    const at = (...path: (string | number)[]) => ['vaPayments', key, ...path];
    let gross = 0;
    let net = 0;
    payment.cashIns.forEach((c, i) => {
      taxed(at('cashIns', i), c);
      if (c.incomingAmount !== c.total - c.taxes)
        problems.push({ path: at('cashIns', i, 'incomingAmount'), message: 'must equal total - taxes' });
      gross += c.total;
      net += c.incomingAmount;
    });
    if (payment.totalReceived !== gross)
      problems.push({
        path: at('totalReceived'),
        message: `must equal the sum of cashIns' total (${formatCents(gross)})`,
      });
    if (payment.receivedAmount !== net) {
      problems.push({
        path: at('receivedAmount'),
        message: `must equal the sum of cashIns' incomingAmount (${formatCents(net)})`,
      });
    }
    if (!statusAgrees(payment.status, payment.amount, gross)) {
      const of = payment.amount === null ? 'an open amount' : formatCents(payment.amount);
      problems.push({
        path: at('status'),
        message: `${payment.status} does not agree with ${formatCents(gross)} received of ${of}`,
      });
    }
  }
  for (const [key, transfer] of Object.entries(account.transfers)) taxed(['transfers', key], transfer);
  for (const [key, entry] of Object.entries(account.entries)) {
    const sign = ENTRY_SIGN[entry.entryType];
    if (entry.amount === 0 || (sign !== undefined && Math.sign(entry.amount) !== sign)) {
      problems.push({
        path: ['entries', key, 'amount'],
        message: `a ${entry.entryType} entry must be ${sign === -1 ? 'negative' : sign === 1 ? 'positive' : 'other than 0'}`,
      });
    }
  }
  return problems;
}

/** Contract 2.3: the status a VA payment can have with `gross` received of its amount (null: open). */
function statusAgrees(status: VaPayment['status'], amount: number | null, gross: number): boolean {
  const paid = amount === null ? gross > 0 : gross >= amount;
  switch (status) {
    case 'waiting':
      return gross === 0;
    case 'underpaid':
      return amount !== null && gross > 0 && gross < amount;
    case 'completed':
      return amount === null ? gross > 0 : gross === amount;
    case 'overpaid':
      return amount !== null && gross > amount;
    case 'expired':
    case 'cancelled':
      return !paid;
  }
}
