import { isOpen } from '../callbacks/index.js';
import type { Known, Problem, Records } from './export-problems.js';
import { moneyProblems } from './money-checks.js';
import { ownershipProblems, uniquenessProblems } from './ownership-checks.js';

/**
 * The checks of an account export across its records (`account-export.ts`), each a list of problems by path. They run
 * over the records that passed their own schema only (a record that failed is named by its own problems); `known`
 * says whether the file holds a record at all, so a reference to one that failed is not named missing too.
 */

export const crossRecordChecks = [integrityProblems, moneyProblems, uniquenessProblems, ownershipProblems] as const;

/**
 * What the account's code relies on without checking again: every record under its own id, and every
 * reference between records pointing at a record that is there. A file that breaks one is refused whole.
 */
function integrityProblems(account: Records, known: Known): Problem[] {
  const problems: Problem[] = [];
  /** `ref` of `table` named at `path`, unless the file holds it. */
  const missing = (path: (string | number)[], table: keyof Records, what: string, ref: string) => {
    if (!known(table, ref)) problems.push({ path, message: `${what} ${ref} is not in the file` });
  };
  const tables = ['vaPayments', 'transfers', 'events', 'deliveries', 'clients', 'entries', 'invoices'] as const;
  for (const name of tables) {
    for (const [key, record] of Object.entries(account[name])) {
      if (record.id !== key) problems.push({ path: [name, key, 'id'], message: `must equal its key ${key}` });
    }
  }
  for (const [key, hub] of Object.entries(account.hubs)) {
    if (String(hub.id) !== key) problems.push({ path: ['hubs', key, 'id'], message: `must equal its key ${key}` });
  }
  for (const [name, records] of [
    ['vaPayments', account.vaPayments],
    ['clients', account.clients],
  ] as const) {
    for (const [key, record] of Object.entries(records)) {
      missing([name, key, 'paymentHubId'], 'hubs', 'payment hub', String(record.paymentHubId));
    }
  }
  for (const [key, payment] of Object.entries(account.vaPayments)) {
    if (payment.lockMode !== 'time' && payment.amount === null)
      problems.push({ path: ['vaPayments', key, 'amount'], message: `is required with lockMode ${payment.lockMode}` });
  }
  for (const [key, cvu] of Object.entries(account.pool)) {
    if (cvu.vaPaymentId !== null) missing(['pool', key, 'vaPaymentId'], 'vaPayments', 'VA payment', cvu.vaPaymentId);
  }
  for (const [key, e] of Object.entries(account.events)) {
    if (e.vaPaymentId !== null) missing(['events', key, 'vaPaymentId'], 'vaPayments', 'VA payment', e.vaPaymentId);
    if (e.clientId !== null) missing(['events', key, 'clientId'], 'clients', 'client', e.clientId);
  }
  for (const [key, d] of Object.entries(account.deliveries)) {
    missing(['deliveries', key, 'eventId'], 'events', 'event', d.eventId);
    // An open delivery is held on import, and a held one is sent when released: each needs somewhere to go.
    if ((isOpen(d) || d.status === 'held') && (d.url ?? d.redeliverTo ?? null) === null) {
      problems.push({ path: ['deliveries', key], message: `a ${d.status} delivery needs a url` });
    }
    if ((d.attemptsBefore ?? 0) > d.attempts.length)
      problems.push({ path: ['deliveries', key, 'attemptsBefore'], message: 'must be at most its attempts' });
  }
  for (const [key, c] of Object.entries(account.clients)) {
    if ((c.cvu === null) !== (c.alias === null))
      problems.push({ path: ['clients', key], message: 'cvu and alias are both set or both null' });
    if ((c.cvuStatus === 'provisioning') !== (c.cvuReadyAt !== null)) {
      problems.push({ path: ['clients', key, 'cvuReadyAt'], message: 'is set exactly when cvuStatus is provisioning' });
    }
    if (c.cvuStatus === 'active' && c.cvu === null)
      problems.push({ path: ['clients', key, 'cvu'], message: 'an active CVU needs its number' });
  }
  for (const name of ['entries', 'invoices'] as const) {
    for (const [key, record] of Object.entries(account[name])) {
      missing([name, key, 'clientId'], 'clients', 'client', record.clientId);
    }
  }
  return problems;
}
