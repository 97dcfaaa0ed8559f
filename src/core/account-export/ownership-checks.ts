/** The checks of an account export's holders: one holder of each CVU, alias, amount lock and tax id. */
import { formatCents } from '../conventions/index.js';
import { ACTIVE_STATUSES, taxIdKey } from '../records/index.js';
import type { Known, Problem, Records } from './export-problems.js';

/** The record of a table under a key the file gave: its own member only (a key such as `constructor` finds nothing else). */
const own = <T>(table: Record<string, T>, key: string): T | undefined =>
  Object.hasOwn(table, key) ? table[key] : undefined;

/**
 * What the API refuses to make twice, refused in a file as well: two active VA payments on one CVU, two active
 * amount locks on one amount of a hub (AMOUNT_LOCK_CONFLICT), two clients with one tax id by its digits
 * (TAX_ID_ALREADY_EXISTS). The account's lookups keep one of each: a transfer would find only one of the two.
 */
export function uniquenessProblems(account: Records): Problem[] {
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

/**
 * Contract parts 1 and 2.3: each CVU and alias of the account has one holder (a pool entry, lent to an active own-CVU
 * payment or free; a hub's collection account; a client), a CVU and an alias being one namespace (a transfer's `to` is
 * either), and every pointer agrees both ways: a lent pool entry names the active payment that names its CVU, and an
 * active amount-locked payment is on its hub's collection account. A file that breaks one would lend a CVU in use to a
 * new payment, or credit a transfer to another holder.
 */
export function ownershipProblems(account: Records, known: Known): Problem[] {
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
