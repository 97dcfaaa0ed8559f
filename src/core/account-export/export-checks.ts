import type { z } from 'zod';
import { isOpen } from '../callbacks/index.js';
import { formatCents, ms } from '../conventions/index.js';
import { ACTIVE_STATUSES, type Entry, taxIdKey, type VaPayment } from '../records/index.js';
import type { exportedAccount } from './export-records.js';

/**
 * The checks of an account export across its records (`account-export.ts`), each a list of problems by path. They run
 * over the records that passed their own schema only (a record that failed is named by its own problems); `known`
 * says whether the file holds a record at all, so a reference to one that failed is not named missing too.
 */

type Records = z.output<typeof exportedAccount>;
export type Problem = { path: (string | number)[]; message: string };
/** Whether the file holds a record of `table` under `key`, whether or not it passed its own schema. */
export type Known = (table: keyof Records, key: string) => boolean;

/** The record of a table under a key the file gave: its own member only (a key such as `constructor` finds nothing else). */
const own = <T>(table: Record<string, T>, key: string): T | undefined =>
  Object.hasOwn(table, key) ? table[key] : undefined;

export const crossRecordChecks = [integrityProblems, moneyProblems, uniquenessProblems, ownershipProblems] as const;

/** A string that is not well-formed UTF-16 (a lone surrogate), which no store or JSON writer keeps as given. */
const LONE_SURROGATE = /\p{Surrogate}/u;

/** Whether a JSON value holds a lone surrogate in a key or a string, walked without recursion. */
function holdsLoneSurrogate(value: unknown): boolean {
  const stack = [value];
  for (let node = stack.pop(); stack.length > 0 || node !== undefined; node = stack.pop()) {
    if (typeof node === 'string' && LONE_SURROGATE.test(node)) return true;
    if (node === null || typeof node !== 'object') continue;
    for (const [key, child] of Object.entries(node)) {
      if (LONE_SURROGATE.test(key)) return true;
      stack.push(child);
    }
  }
  return false;
}

/** The paths under `path` of every key and string of a JSON value holding a lone surrogate. */
function loneSurrogates(value: unknown, path: (string | number)[]): (string | number)[][] {
  if (!holdsLoneSurrogate(value)) return [];
  const found: (string | number)[][] = [];
  const stack: [unknown, (string | number)[]][] = [[value, path]];
  for (let item = stack.pop(); item; item = stack.pop()) {
    const [node, at] = item;
    if (typeof node === 'string' && LONE_SURROGATE.test(node)) found.push(at);
    if (node === null || typeof node !== 'object') continue;
    for (const [key, child] of Object.entries(node)) {
      if (LONE_SURROGATE.test(key)) found.push([...at, key]);
      else stack.push([child, [...at, Array.isArray(node) ? Number(key) : key]]);
    }
  }
  return found;
}

/**
 * A record's own bounds that its schema does not say, checked as each record is read: no lone surrogate in a key
 * or a string (it would be stored as another text than the file's), and a VA payment that expires after it was made.
 */
export function recordProblems(table: keyof Records, key: string, record: unknown): Problem[] {
  // The record under its key, so a key of the table (an Idempotency-Key's) is looked at too.
  const message = 'must be well-formed Unicode: it holds a lone surrogate';
  const problems = loneSurrogates({ [key]: record }, [table]).map((path) => ({ path, message }));
  if (table === 'vaPayments') {
    const { expiresAt, createdAt } = record as VaPayment;
    if (ms(expiresAt) <= ms(createdAt)) {
      problems.push({ path: [table, key, 'expiresAt'], message: `must be after createdAt (${createdAt})` });
    }
  }
  return problems;
}

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
function moneyProblems(account: Records): Problem[] {
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

/**
 * What the API refuses to make twice, refused in a file as well: two active VA payments on one CVU, two active
 * amount locks on one amount of a hub (AMOUNT_LOCK_CONFLICT), two clients with one tax id by its digits
 * (TAX_ID_ALREADY_EXISTS). The account's lookups keep one of each: a transfer would find only one of the two.
 */
function uniquenessProblems(account: Records): Problem[] {
  const problems: Problem[] = [];
  const holders = new Map<string, string>();
  /** `lock` is taken by the record at `path` (table, id, field), unless another took it first. */
  const take = (lock: string, path: [string, string, string], problem: (other: string) => string) => {
    const other = holders.get(lock);
    if (other === undefined) holders.set(lock, path[1]);
    else problems.push({ path, message: problem(other) });
  };
  for (const [key, p] of Object.entries(account.vaPayments)) {
    if (!ACTIVE_STATUSES.includes(p.status)) continue;
    if (p.lockMode !== 'amount')
      take(
        `cvu:${p.cvu}`,
        ['vaPayments', key, 'cvu'],
        (other) => `${p.cvu} is already the CVU of active VA payment ${other}`,
      );
    else if (p.amount !== null) {
      const lock = `amount:${p.paymentHubId}:${p.amount}`;
      take(
        lock,
        ['vaPayments', key, 'amount'],
        (other) => `${formatCents(p.amount!)} is already locked on hub ${p.paymentHubId} by active VA payment ${other}`,
      );
    }
  }
  for (const [key, c] of Object.entries(account.clients)) {
    take(
      `taxId:${taxIdKey(c.taxId)}`,
      ['clients', key, 'taxId'],
      (other) => `${c.taxId} is already the tax id of client ${other} (compared by its digits)`,
    );
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

/**
 * Contract parts 1 and 2.3: each CVU and alias of the account has one holder (a pool entry, lent to an active own-CVU
 * payment or free; a hub's collection account; a client), a CVU and an alias being one namespace (a transfer's `to` is
 * either), and every pointer agrees both ways: a lent pool entry names the active payment that names its CVU, and an
 * active amount-locked payment is on its hub's collection account. A file that breaks one would lend a CVU in use to a
 * new payment, or credit a transfer to another holder.
 */
function ownershipProblems(account: Records, known: Known): Problem[] {
  const problems: Problem[] = [];
  /** Who holds each CVU and alias, in upper case: one namespace, as a transfer's `to` may be either. */
  const holders = new Map<string, { holder: string; kind: 'CVU' | 'alias' }>();
  /** `value` is held as a `kind` by `holder`, the record at `path`, unless another holds it as either kind. */
  const claim = (path: (string | number)[], kind: 'CVU' | 'alias', value: string, holder: string) => {
    const key = value.toUpperCase();
    const other = holders.get(key);
    if (other === undefined) holders.set(key, { holder, kind });
    else problems.push({ path, message: `${value} is already the ${other.kind} of ${other.holder}` });
  };
  for (const [key, entry] of Object.entries(account.pool)) {
    if (entry.cvu !== key) problems.push({ path: ['pool', key, 'cvu'], message: `must equal its key ${key}` });
    const holder =
      entry.vaPaymentId === null
        ? `pool entry ${key} (free)`
        : `pool entry ${key} (lent to VA payment ${entry.vaPaymentId})`;
    claim(['pool', key, 'cvu'], 'CVU', entry.cvu, holder);
    claim(['pool', key, 'alias'], 'alias', entry.alias, holder);
    const payment = entry.vaPaymentId === null ? undefined : own(account.vaPayments, entry.vaPaymentId);
    if (
      payment &&
      !(ACTIVE_STATUSES.includes(payment.status) && payment.lockMode !== 'amount' && payment.cvu === entry.cvu)
    ) {
      const on = payment.lockMode === 'amount' ? 'amount-locked' : `on CVU ${payment.cvu}`;
      problems.push({
        path: ['pool', key, 'vaPaymentId'],
        message: `VA payment ${payment.id} does not hold this CVU (it is ${payment.status}, ${on})`,
      });
    }
  }
  for (const [key, hub] of Object.entries(account.hubs)) {
    claim(['hubs', key, 'collectionCvu'], 'CVU', hub.collectionCvu, `hub ${key}`);
    claim(['hubs', key, 'collectionAlias'], 'alias', hub.collectionAlias, `hub ${key}`);
  }
  for (const [key, client] of Object.entries(account.clients)) {
    if (client.cvu !== null) claim(['clients', key, 'cvu'], 'CVU', client.cvu, `client ${key}`);
    if (client.alias !== null) claim(['clients', key, 'alias'], 'alias', client.alias, `client ${key}`);
  }
  for (const [key, payment] of Object.entries(account.vaPayments)) {
    if (!ACTIVE_STATUSES.includes(payment.status)) continue;
    const at = (field: string) => ['vaPayments', key, field];
    if (payment.lockMode === 'amount') {
      const hub = own(account.hubs, String(payment.paymentHubId));
      if (hub && payment.cvu !== hub.collectionCvu)
        problems.push({
          path: at('cvu'),
          message: `an amount-locked payment is on its hub's collection CVU ${hub.collectionCvu} (hub ${hub.id})`,
        });
      if (hub && payment.alias.toUpperCase() !== hub.collectionAlias.toUpperCase())
        problems.push({
          path: at('alias'),
          message: `an amount-locked payment is on its hub's collection alias ${hub.collectionAlias} (hub ${hub.id})`,
        });
      continue;
    }
    const entry = own(account.pool, payment.cvu);
    if (entry === undefined) {
      if (!known('pool', payment.cvu))
        problems.push({
          path: at('cvu'),
          message: `${payment.cvu} is not a pool entry of the file: an active payment's own CVU is lent by the pool`,
        });
    } else if (entry.vaPaymentId !== payment.id) {
      const says = entry.vaPaymentId === null ? 'marks it free' : `lends it to VA payment ${entry.vaPaymentId}`;
      problems.push({ path: at('cvu'), message: `pool entry ${payment.cvu} ${says}, not to this active payment` });
    } else if (entry.alias.toUpperCase() !== payment.alias.toUpperCase()) {
      problems.push({
        path: at('alias'),
        message: `must be ${entry.alias}, the alias of pool entry ${payment.cvu} that lends it its CVU`,
      });
    }
  }
  return problems;
}
