import { z } from 'zod';
import { COUNTED_TABLES, type Account } from './account.js';
import { iso, MAX_CLOCK_MS, ms } from './clock.js';
import { SandboxError } from './errors.js';
import { exportedAccount, time } from './export-records.js';
import { formatCents } from './money.js';
import { issuesToDetails } from './schemas.js';
import { taxIdDigits } from './clients.js';
import { ACTIVE_STATUSES, type AccountState, type Delivery, type Entry, type VaPayment } from './state.js';
import { droppedDelivery, hold, isOpen } from './deliveries.js';
import { compacted, sent, type ExportedEvent } from './event-body.js';
import { isDropped } from './repository.js';

/**
 * One account's whole state as a file (`GET /sandbox/v1/export`, `POST /sandbox/v1/import`): the records as
 * stored, money in integer cents. The clock travels as the sandbox time of the export, so an import makes the
 * account's clock read that time again, however long the file waited.
 */

export const EXPORT_FORMAT = 'va-sandbox-account';
/** Version 2 keeps every hub (`hubs`); a version 1 file's one `hub` is read as hub 1. */
export const EXPORT_VERSION = 2;


/** A version 1 file (one `hub`) as version 2 (its hub is hub 1), so incident files of earlier releases still load. */
function upgrade(doc: unknown): unknown {
  const old = doc as { version?: unknown; account?: { hub?: unknown } } | null;
  if (old?.version !== 1 || typeof old.account !== 'object' || old.account === null || !('hub' in old.account)) return doc;
  const { hub: first, ...account } = old.account;
  return { ...old, version: 2, account: { hubs: { '1': first }, ...account } };
}

export const accountExportSchema = z.preprocess(
  upgrade,
  z
    .strictObject({
      format: z.literal(EXPORT_FORMAT),
      version: z.literal(EXPORT_VERSION),
      /** The account's sandbox time when it was exported. */
      exportedAt: time.refine((at) => ms(at) <= MAX_CLOCK_MS, `must be at most ${iso(MAX_CLOCK_MS)}`),
      account: exportedAccount,
    })
    .superRefine((doc, ctx) => {
      for (const problem of [...integrityProblems(doc.account), ...moneyProblems(doc.account), ...uniquenessProblems(doc.account)]) ctx.addIssue({ code: 'custom', path: ['account', ...problem.path], message: problem.message });
    }),
);

export type AccountExport = z.output<typeof accountExportSchema>;

/** Gives way to other work when it is time (the server's: after some ms of work at a stretch); undefined: go on now. */
export type Pause = () => Promise<void> | undefined;

/** A JSON object, its members not looked at (a `z.record` would walk every one). */
const anyObject = z.custom<Record<string, unknown>>((value) => typeof value === 'object' && value !== null && !Array.isArray(value), 'must be an object');

/** The file's envelope with its tables' records left unchecked: they are checked one at a time (`checkExport`). */
const envelope = z.preprocess(
  upgrade,
  z.strictObject({
    format: z.literal(EXPORT_FORMAT),
    version: z.literal(EXPORT_VERSION),
    exportedAt: time.refine((at) => ms(at) <= MAX_CLOCK_MS, `must be at most ${iso(MAX_CLOCK_MS)}`),
    account: z.strictObject(Object.fromEntries(Object.keys(exportedAccount.shape).map((name) => [name, anyObject]))),
  }),
);

/**
 * What `accountExportSchema` checks, a record at a time, giving way between them (`pause`), so a large file does not
 * hold other requests up while it is read.
 */
async function checkExport(body: unknown, pause: Pause): Promise<AccountExport> {
  const doc = envelope.safeParse(body);
  // A file whose envelope is wrong is parsed whole, for every problem it has at once.
  if (!doc.success) throw invalid(accountExportSchema.safeParse(body).error?.issues ?? doc.error.issues);
  const issues: z.core.$ZodIssue[] = [];
  const account: Record<string, Record<string, unknown>> = {};
  for (const [name, table] of Object.entries(exportedAccount.shape)) {
    const records = (account[name] = {} as Record<string, unknown>);
    for (const [id, record] of Object.entries(doc.data.account[name]!)) {
      const checked = ((table as z.ZodRecord).valueType as z.ZodType).safeParse(record);
      // One that fails is kept as given, so the checks across records below name every problem at once, as a whole parse does.
      records[id] = checked.success ? checked.data : record;
      if (!checked.success) issues.push(...checked.error.issues.map((issue) => ({ ...issue, path: ['account', name, id, ...issue.path] })));
      await pause();
    }
  }
  const checked = { ...doc.data, account } as AccountExport;
  for (const problems of [integrityProblems, moneyProblems, uniquenessProblems]) {
    for (const problem of problems(checked.account)) {
      issues.push({ code: 'custom', path: ['account', ...problem.path], message: problem.message, input: undefined } as z.core.$ZodIssue);
    }
    await pause();
  }
  if (issues.length > 0) throw invalid(issues);
  return checked;
}

const invalid = (issues: z.core.$ZodIssue[]): SandboxError => {
  const details = issuesToDetails(new z.ZodError(issues));
  return new SandboxError('VALIDATION_ERROR', `Invalid account export: ${details.slice(0, 5).join('; ')}`, details);
};

/**
 * What the account's code relies on without checking again: every record under its own id, and every
 * reference between records pointing at a record that is there. A file that breaks one is refused whole.
 */
function integrityProblems(account: z.output<typeof exportedAccount>): { path: (string | number)[]; message: string }[] {
  const problems: { path: (string | number)[]; message: string }[] = [];
  const missing = (path: (string | number)[], what: string, ref: string) => problems.push({ path, message: `${what} ${ref} is not in the file` });
  const tables = ['vaPayments', 'transfers', 'events', 'deliveries', 'clients', 'entries', 'invoices'] as const;
  for (const name of tables) {
    for (const [key, record] of Object.entries(account[name])) {
      if (record.id !== key) problems.push({ path: [name, key, 'id'], message: `must equal its key ${key}` });
    }
  }
  for (const [key, hub] of Object.entries(account.hubs)) {
    if (String(hub.id) !== key) problems.push({ path: ['hubs', key, 'id'], message: `must equal its key ${key}` });
  }
  for (const [name, records] of [['vaPayments', account.vaPayments], ['clients', account.clients]] as const) {
    for (const [key, record] of Object.entries(records)) {
      if (!account.hubs[record.paymentHubId]) missing([name, key, 'paymentHubId'], 'payment hub', String(record.paymentHubId));
    }
  }
  for (const [key, payment] of Object.entries(account.vaPayments)) {
    if (payment.lockMode !== 'time' && payment.amount === null) problems.push({ path: ['vaPayments', key, 'amount'], message: `is required with lockMode ${payment.lockMode}` });
  }
  for (const [key, cvu] of Object.entries(account.pool)) {
    if (cvu.vaPaymentId !== null && !account.vaPayments[cvu.vaPaymentId]) missing(['pool', key, 'vaPaymentId'], 'VA payment', cvu.vaPaymentId);
  }
  for (const [key, e] of Object.entries(account.events)) {
    if (e.vaPaymentId !== null && !account.vaPayments[e.vaPaymentId]) missing(['events', key, 'vaPaymentId'], 'VA payment', e.vaPaymentId);
    if (e.clientId !== null && !account.clients[e.clientId]) missing(['events', key, 'clientId'], 'client', e.clientId);
  }
  for (const [key, d] of Object.entries(account.deliveries)) {
    if (!account.events[d.eventId]) missing(['deliveries', key, 'eventId'], 'event', d.eventId);
    // An open delivery is held on import, and a held one is sent when released: each needs somewhere to go.
    if ((isOpen(d) || d.status === 'held') && (d.url ?? d.redeliverTo ?? null) === null) {
      problems.push({ path: ['deliveries', key], message: `a ${d.status} delivery needs a url` });
    }
    if ((d.attemptsBefore ?? 0) > d.attempts.length) problems.push({ path: ['deliveries', key, 'attemptsBefore'], message: 'must be at most its attempts' });
  }
  for (const [key, c] of Object.entries(account.clients)) {
    if ((c.cvu === null) !== (c.alias === null)) problems.push({ path: ['clients', key], message: 'cvu and alias are both set or both null' });
    if ((c.cvuStatus === 'provisioning') !== (c.cvuReadyAt !== null)) {
      problems.push({ path: ['clients', key, 'cvuReadyAt'], message: 'is set exactly when cvuStatus is provisioning' });
    }
    if (c.cvuStatus === 'active' && c.cvu === null) problems.push({ path: ['clients', key, 'cvu'], message: 'an active CVU needs its number' });
  }
  for (const name of ['entries', 'invoices'] as const) {
    for (const [key, record] of Object.entries(account[name])) {
      if (!account.clients[record.clientId]) missing([name, key, 'clientId'], 'client', record.clientId);
    }
  }
  return problems;
}

type Problem = { path: (string | number)[]; message: string };

/** The sign each kind of ledger entry has (contract part 3: positive credit, negative debit). */
const ENTRY_SIGN: Partial<Record<Entry['entryType'], 1 | -1>> = { cash_in: 1, credit: 1, debit: -1, reversal: -1, invoice_allocation: 1 };

/**
 * What the API's rules make true of amounts, checked as strictly: a VA payment's totals are the sums of its cash-ins
 * and its status agrees with them, a transfer's taxes are less than its total, entries have their kind's sign. A
 * file that breaks one would answer sums and statuses the API can never give.
 */
function moneyProblems(account: z.output<typeof exportedAccount>): Problem[] {
  const problems: Problem[] = [];
  const taxed = (path: (string | number)[], { total, taxes }: { total: number; taxes: number }) => {
    if (taxes >= total) problems.push({ path: [...path, 'taxes'], message: `must be less than total (${formatCents(total)})` });
  };
  for (const [key, payment] of Object.entries(account.vaPayments)) {
    const at = (...path: (string | number)[]) => ['vaPayments', key, ...path];
    let gross = 0;
    let net = 0;
    payment.cashIns.forEach((c, i) => {
      taxed(at('cashIns', i), c);
      if (c.incomingAmount !== c.total - c.taxes) problems.push({ path: at('cashIns', i, 'incomingAmount'), message: 'must equal total - taxes' });
      gross += c.total;
      net += c.incomingAmount;
    });
    if (payment.totalReceived !== gross) problems.push({ path: at('totalReceived'), message: `must equal the sum of cashIns' total (${formatCents(gross)})` });
    if (payment.receivedAmount !== net) {
      problems.push({ path: at('receivedAmount'), message: `must equal the sum of cashIns' incomingAmount (${formatCents(net)})` });
    }
    if (!statusAgrees(payment.status, payment.amount, gross)) {
      const of = payment.amount === null ? 'an open amount' : formatCents(payment.amount);
      problems.push({ path: at('status'), message: `${payment.status} does not agree with ${formatCents(gross)} received of ${of}` });
    }
  }
  for (const [key, transfer] of Object.entries(account.transfers)) taxed(['transfers', key], transfer);
  for (const [key, entry] of Object.entries(account.entries)) {
    const sign = ENTRY_SIGN[entry.entryType];
    if (entry.amount === 0 || (sign !== undefined && Math.sign(entry.amount) !== sign)) {
      problems.push({ path: ['entries', key, 'amount'], message: `a ${entry.entryType} entry must be ${sign === -1 ? 'negative' : sign === 1 ? 'positive' : 'other than 0'}` });
    }
  }
  return problems;
}

/**
 * What the API refuses to make twice, refused in a file as well: two active VA payments on one CVU, two active
 * amount locks on one amount of a hub (AMOUNT_LOCK_CONFLICT), two clients with one tax id by its digits
 * (TAX_ID_ALREADY_EXISTS). The account's lookups keep one of each: a transfer would find only one of the two.
 */
function uniquenessProblems(account: z.output<typeof exportedAccount>): Problem[] {
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
    if (p.lockMode !== 'amount') take(`cvu:${p.cvu}`, ['vaPayments', key, 'cvu'], (other) => `${p.cvu} is already the CVU of active VA payment ${other}`);
    else if (p.amount !== null) {
      const lock = `amount:${p.paymentHubId}:${p.amount}`;
      take(lock, ['vaPayments', key, 'amount'], (other) => `${formatCents(p.amount!)} is already locked on hub ${p.paymentHubId} by active VA payment ${other}`);
    }
  }
  for (const [key, c] of Object.entries(account.clients)) {
    take(`taxId:${taxIdDigits(c.taxId)}`, ['clients', key, 'taxId'], (other) => `${c.taxId} is already the tax id of client ${other} (compared by its digits)`);
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

/** The account as one JSON document. */
export function exportAccount(account: Account): AccountExport {
  // Forwarding and faults (of callbacks and of the API) are this sandbox's settings for the session, not part of the incident.
  const { clockOffsetMs: _offset, forwarding: _forwarding, faults: _faults, apiFaults: _apiFaults, ...records } = account.read();
  return { format: EXPORT_FORMAT, version: EXPORT_VERSION, exportedAt: account.now(), account: { ...records, ...exportedEvents(records) } };
}

/**
 * The events and deliveries as an export holds them: every event with its body as sent, and every delivery, dropped
 * events' first ones included, in the order they were made.
 */
function exportedEvents({ events, deliveries, vaPayments }: Pick<AccountState, 'events' | 'deliveries' | 'vaPayments'>) {
  const withBodies: Record<string, ExportedEvent> = {};
  for (const event of Object.values(events)) {
    const { id, eventType, vaPaymentId, clientId, body, url, droppedReason, createdAt } = sent(event, (paymentId) => vaPayments[paymentId]);
    withBodies[id] = { id, eventType, vaPaymentId, clientId, body, url, droppedReason, createdAt };
  }
  const dropped = Object.values(events).filter(isDropped).map(droppedDelivery);
  const all = [...dropped, ...Object.values(deliveries)].sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0));
  return { events: withBodies, deliveries: Object.fromEntries(all.map((delivery) => [delivery.id, delivery])) };
}

/**
 * An export's events and deliveries as this release stores them: an event carrying its VA payment whole keeps no copy
 * when it renders the same (`compacted`), and a dropped event's delivery is not stored (`droppedDelivery`).
 */
async function stored({ events, deliveries, vaPayments }: AccountExport['account'], pause: Pause): Promise<Pick<AccountState, 'events' | 'deliveries'>> {
  const isDropped = (d: Delivery) => d.id === d.eventId && events[d.eventId]!.url === null && sameRecord(d, droppedDelivery(events[d.eventId]!));
  const compact: AccountState['events'] = {};
  for (const [id, event] of Object.entries(events)) {
    compact[id] = compacted(event, (paymentId) => vaPayments[paymentId]);
    await pause();
  }
  return { events: compact, deliveries: Object.fromEntries(Object.entries(deliveries).filter(([, d]) => !isDropped(d))) };
}

/** Whether two flat records hold the same fields, in any order. */
const sameRecord = (a: object, b: object): boolean => {
  const entries = (record: object) => JSON.stringify(Object.entries(record).filter(([, v]) => v !== undefined).sort(([x], [y]) => (x < y ? -1 : 1)));
  return entries(a) === entries(b);
};

/** How many records of each kind an account's tables hold, as an import answers them. */
const countsOf = (tables: Record<(typeof COUNTED_TABLES)[number], Record<string, unknown>>) =>
  Object.fromEntries(COUNTED_TABLES.map((name) => [name, Object.keys(tables[name]).length]));

/** `POST /sandbox/v1/import?dryRun=1`: check the file and count what it holds, without importing it. */
export const importQuery = z.object({
  dryRun: z.enum(['1', 'true']).optional().describe('Check the file and answer its counts (`imported: false`); the account is left as it is'),
});

/**
 * Replaces the account's whole state with an export's, its clock set to read the export's time; a dry run only
 * checks the file and counts what it holds (`imported: false`).
 */
export async function importAccount(account: Account, body: unknown, dryRun = false, pause: Pause = () => undefined) {
  const doc = await checkExport(body, pause);
  const records = { ...doc.account, ...(await stored(doc.account, pause)) };
  if (dryRun) return { imported: false, exportedAt: doc.exportedAt, counts: countsOf(records) };
  const wallNow = account.nowMs() - account.head.clockOffsetMs;
  const { forwarding, faults, apiFaults } = account.head;
  // Invoices of earlier releases are read as today's when the account indexes its state (`normalizeAccount`).
  // Its open deliveries are held as they are stored: none may go out before `holdImported` (the file's URLs are never called).
  const held = Object.values(records.deliveries).filter(isOpen).map((d) => d.id);
  const deliveries = Object.fromEntries(Object.entries(records.deliveries).map(([id, d]) => [id, isOpen(d) ? hold(d) : d]));
  await account.replace({ clockOffsetMs: ms(doc.exportedAt) - wallNow, forwarding, faults, apiFaults, ...records, deliveries, invoices: records.invoices as AccountState['invoices'] });
  account.holdImported(held);
  // Counted once held: what fell due at the file's time (an expiry) raised events of its own.
  return { imported: true, clock: account.clock(), counts: account.counts() };
}
