import { z } from 'zod';
import { type Account, COUNTED_TABLES } from '../account/index.js';
import { compacted, droppedDelivery, hold, isOpen } from '../callbacks/index.js';
import { MAX_CLOCK_MS } from '../clock/index.js';
import { iso, ms, SandboxError } from '../conventions/index.js';
import { type AccountState, type Delivery, issuesToDetails, keyedByCaller } from '../records/index.js';
import { crossRecordChecks } from './export-checks.js';
import type { Known, Problem } from './export-problems.js';
import { exportedAccount, time } from './export-records.js';
import { exportText } from './export-text.js';
import { recordProblems } from './record-checks.js';

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
  if (old?.version !== 1 || typeof old.account !== 'object' || old.account === null || !('hub' in old.account))
    return doc;
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
    // Zod runs it only when no record is of the wrong shape (the checks across records read their fields).
    .superRefine((doc, ctx) => {
      const known: Known = (table, key) => Object.hasOwn(doc.account[table], key);
      const perRecord = Object.entries(doc.account).flatMap(([table, records]) =>
        Object.entries(records).flatMap(([key, record]) => recordProblems(table as TableOfFile, key, record)),
      );
      for (const problem of [perRecord, ...crossRecordChecks.map((check) => check(doc.account, known))].flat()) {
        ctx.addIssue({ ...custom(problem) });
      }
    }),
);

export type AccountExport = z.output<typeof accountExportSchema>;
/** A table of an export's account. */
type TableOfFile = keyof AccountExport['account'];

/** Gives way to other work when it is time (the server's: after some ms of work at a stretch); undefined: go on now. */
export type Pause = () => Promise<void> | undefined;

/** A JSON object, its members not looked at (a `z.record` would walk every one). */
const anyObject = z.custom<Record<string, unknown>>(
  (value) => typeof value === 'object' && value !== null && !Array.isArray(value),
  'must be an object',
);

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
  const issues = new Problems();
  const account: Record<string, Record<string, unknown>> = {};
  /** `table/key` of each record that failed its own schema. */
  const failed = new Set<string>();
  for (const [name, table] of Object.entries(exportedAccount.shape)) {
    // No prototype: a key such as `__proto__` (an Idempotency-Key may be one) is kept like any other.
    const records = (account[name] = keyedByCaller<unknown>());
    for (const [id, record] of Object.entries(doc.data.account[name]!)) {
      const checked = ((table as z.ZodRecord).valueType as z.ZodType).safeParse(record);
      // One that fails is left out of the checks across records below, which read its fields: they name every other
      // problem at once, as a whole parse does, and see it as in the file.
      if (checked.success) {
        records[id] = checked.data;
        for (const problem of recordProblems(name as TableOfFile, id, checked.data)) issues.add(custom(problem));
      } else {
        failed.add(`${name}/${id}`);
        for (const issue of checked.error.issues) issues.add({ ...issue, path: ['account', name, id, ...issue.path] });
      }
      await pause();
    }
  }
  const checked = { ...doc.data, account } as AccountExport;
  const known: Known = (table, key) => Object.hasOwn(checked.account[table], key) || failed.has(`${table}/${key}`);
  for (const check of crossRecordChecks) {
    for (const problem of check(checked.account, known)) {
      issues.add(custom(problem));
    }
    await pause();
  }
  if (issues.listed.length > 0) throw invalid(issues.listed, issues.unlisted);
  return checked;
}

/** A problem of the checks beyond each record's schema, as a zod issue under the file's `account`. */
const custom = (problem: Problem): z.core.$ZodIssueCustom => ({
  code: 'custom',
  path: ['account', ...problem.path],
  message: problem.message,
  input: undefined,
});

/** How many problems of a file a 400 lists: a file may have any number, and the first ones say what is wrong. */
export const LISTED_PROBLEMS = 100;

/** A file's problems: the first `LISTED_PROBLEMS` kept, the rest only counted. */
class Problems {
  readonly listed: z.core.$ZodIssue[] = [];
  unlisted = 0;
  add(issue: z.core.$ZodIssue): void {
    if (this.listed.length < LISTED_PROBLEMS) this.listed.push(issue);
    else this.unlisted++;
  }
}

/** The 400 of a file: its first problems, one detail each, and how many more it has. */
const invalid = (issues: z.core.$ZodIssue[], unlisted = 0): SandboxError => {
  const all = issuesToDetails(new z.ZodError(issues));
  const total = all.length + unlisted;
  const listed = all.slice(0, LISTED_PROBLEMS);
  const more = `account: ${total - listed.length} more problems not listed`;
  const details = total > listed.length ? [...listed, more] : listed;
  const shown = all.slice(0, 5).join('; ') + (total > 5 ? `; and ${total - 5} more` : '');
  return new SandboxError('VALIDATION_ERROR', `Invalid account export: ${shown}`, details);
};

/**
 * The account as one JSON document (`exportText`, parsed); the records of a damaged database that could not be read are
 * left out and named in `unreadable`.
 */
export function exportAccount(account: Account, unreadable: string[] = []): AccountExport {
  return JSON.parse([...exportText(account, EXPORT_FORMAT, EXPORT_VERSION, unreadable)].join('')) as AccountExport;
}

/**
 * An export's events and deliveries as this release stores them: an event carrying its VA payment whole keeps no copy
 * when it renders the same (`compacted`), and a dropped event's delivery is not stored (`droppedDelivery`).
 */
async function stored(
  { events, deliveries, vaPayments }: AccountExport['account'],
  pause: Pause,
): Promise<Pick<AccountState, 'events' | 'deliveries'>> {
  const isDropped = (d: Delivery) =>
    d.id === d.eventId && events[d.eventId]!.url === null && sameRecord(d, droppedDelivery(events[d.eventId]!));
  const compact: AccountState['events'] = {};
  for (const [id, event] of Object.entries(events)) {
    compact[id] = compacted(event, (paymentId) => vaPayments[paymentId]);
    await pause();
  }
  return {
    events: compact,
    deliveries: Object.fromEntries(Object.entries(deliveries).filter(([, d]) => !isDropped(d))),
  };
}

/** Whether two flat records hold the same fields, in any order. */
const sameRecord = (a: object, b: object): boolean => {
  const entries = (record: object) =>
    JSON.stringify(
      Object.entries(record)
        .filter(([, v]) => v !== undefined)
        .sort(([x], [y]) => (x < y ? -1 : 1)),
    );
  return entries(a) === entries(b);
};

/** How many records of each kind an export's tables hold (its deliveries: the dropped events' first ones too). */
const countsOf = (tables: Record<(typeof COUNTED_TABLES)[number], Record<string, unknown>>) =>
  Object.fromEntries(COUNTED_TABLES.map((name) => [name, Object.keys(tables[name]).length]));

/** `POST /sandbox/v1/import?dryRun=1`: check the file and count what it holds, without importing it. */
export const importQuery = z.object({
  dryRun: z
    .enum(['1', 'true'])
    .optional()
    .describe('Check the file and answer its counts (`imported: false`); the account is left as it is'),
});

/**
 * Replaces the account's whole state with an export's, its clock set to read the export's time; a dry run only
 * checks the file and counts what it holds (`imported: false`).
 */
export async function importAccount(account: Account, body: unknown, dryRun = false, pause: Pause = () => undefined) {
  const doc = await checkExport(body, pause);
  const records = { ...doc.account, ...(await stored(doc.account, pause)) };
  if (dryRun) return { imported: false, exportedAt: doc.exportedAt, counts: countsOf(doc.account) };
  const wallNow = account.nowMs() - account.head.clockOffsetMs;
  const { forwarding, faults, apiFaults } = account.head;
  // Invoices of earlier releases are read as today's when the account indexes its state (`normalizeAccount`).
  // Its open deliveries are held as they are stored: none may go out before `holdImported` (the file's URLs are never called).
  const held = Object.values(records.deliveries)
    .filter(isOpen)
    .map((d) => d.id);
  const deliveries = Object.fromEntries(
    Object.entries(records.deliveries).map(([id, d]) => [id, isOpen(d) ? hold(d) : d]),
  );
  // Held from now until released (`heldSince`): the callbacks the account raises are held too.
  await account.replace({
    clockOffsetMs: ms(doc.exportedAt) - wallNow,
    forwarding,
    faults,
    apiFaults,
    heldSince: doc.exportedAt,
    ...records,
    deliveries,
    invoices: records.invoices as AccountState['invoices'],
  });
  account.holdImported(held);
  // Counted once held: what fell due at the file's time (an expiry) raised events of its own.
  return { imported: true, clock: account.clock.view(), counts: account.counts() };
}
