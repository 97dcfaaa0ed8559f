import { AccountContext, type LiveEvent } from '../../src/core/account-context.js';
import { ClientLedger } from '../../src/core/client-ledger.js';
import { DeliveryLog } from '../../src/core/delivery-log.js';
import { DueWork } from '../../src/core/due-work.js';
import { Events } from '../../src/core/events.js';
import { Hubs } from '../../src/core/hubs.js';
import {
  defaultDeliveryPolicy,
  emptyAccountState,
  FakeClock,
  memoryIndexes,
  SandboxError,
  seededIds,
  TABLES,
  type AccountState,
  type Indexes,
  type RecordChange,
  type TableName,
} from '../../src/core/index.js';
import { Transfers } from '../../src/core/transfers.js';
import { VaPayments } from '../../src/core/va-payments.js';

/** A record as it was written: what a store's journal would hold for it. */
type Written = { table: TableName; id: string; after: unknown };

/**
 * An account's context for one module tested on its own: a fake clock, seeded ids, memory indexes (or `indexes`),
 * and what it told. `state` starts it over records already made; `seed` gives other ids than another context's.
 */
export function moduleContext(options: { hubIds?: number[]; state?: AccountState; indexes?: Indexes; seed?: number } = {}) {
  const clock = new FakeClock(Date.parse('2026-11-21T12:00:00Z'));
  const state = options.state ?? emptyAccountState();
  const indexes = options.indexes ?? memoryIndexes('sk_module', true);
  const written: Written[] = [];
  const live: LiveEvent[] = [];
  const ctx = new AccountContext('sk_module', state, {
    clock,
    ids: seededIds(options.seed ?? 5),
    policy: defaultDeliveryPolicy,
    notify: (event) => live.push(event),
    changed: (_, change) => {
      if ('table' in change) written.push({ ...change, after: state[change.table][change.id] });
    },
    indexes: () => indexes,
    ...(options.hubIds ? { hubIds: options.hubIds } : {}),
  });
  return { clock, ctx, written, live, indexes };
}

/**
 * The modules of an account (all but idempotency), wired to each other as the Account wires them but without it, so
 * a test drives the module under test and reads the others only where that module needs them. `build` indexes them
 * from their records, in the Account's order.
 */
export function accountModules(options: Parameters<typeof moduleContext>[0] = {}) {
  const context = moduleContext(options);
  const { ctx, indexes } = context;
  const handlers = {
    expiry: (id: string, at: number) => payments.expireDue(id, at),
    cvu: (id: string, at: number) => ledger.provisionDue(id, at),
    idempotency: () => false,
  };
  const due = new DueWork(ctx, indexes, handlers, (inFlight) => log.nextRetryAt(inFlight));
  const log = new DeliveryLog(ctx, indexes);
  const events = new Events(ctx, indexes, log);
  const hubs = new Hubs(ctx, indexes, (cvuOrAlias) => ledger.mayBeClientAt(cvuOrAlias));
  const ledger: ClientLedger = new ClientLedger(ctx, indexes, hubs, due);
  const payments: VaPayments = new VaPayments(ctx, indexes, hubs, events, log, due);
  const transfers = new Transfers(ctx, hubs, payments, ledger, events);
  const build = () => [payments, hubs, ledger, events, log].forEach((module) => module.build());
  return { ...context, due, log, events, hubs, ledger, payments, transfers, build };
}

/**
 * Indexes held in plain Maps that a test can take as a store keeps them (`take`, a copy), and hand back later as
 * kept, with the records written since as `Indexes.since`, as a start after a crash replays them from the journal.
 */
export function keptIndexes() {
  const maps = new Map<string, Map<unknown, unknown>>();
  const values = new Map<string, () => unknown>();
  const indexes: Indexes = {
    kept: false,
    since: [],
    index<K extends string | number, V>(name: string) {
      const map = new Map<K, V>();
      maps.set(name, map as Map<unknown, unknown>);
      return map;
    },
    value(name, revive, save) {
      const value = revive(undefined);
      values.set(name, () => save(value));
      return value;
    },
  };
  /** The indexes as they are now, and the records as they are now, so what is written after is `since`. */
  const take = (state: AccountState, written: readonly Written[]) => {
    const copy = structuredClone({ maps, values: new Map([...values].map(([name, save]) => [name, save()])) });
    const known = Object.fromEntries(TABLES.map((table) => [table, { ...state[table] } as Record<string, unknown>]));
    const mark = written.length;
    /** The kept indexes, handed back with every record written since the take, as it was before and after. */
    return (): Indexes => ({
      kept: true,
      since: written.slice(mark).map(({ table, id, after }) => {
        const before = known[table]![id];
        known[table]![id] = after;
        return { table, id, before, after } as RecordChange;
      }),
      index: <K extends string | number, V>(name: string) => structuredClone(copy.maps.get(name) ?? new Map()) as Map<K, V>,
      value: (name, revive) => revive(structuredClone(copy.values.get(name))),
    });
  };
  return { indexes, take };
}

/** The code of the SandboxError `run` throws (undefined when it throws none). */
export function codeOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    if (error instanceof SandboxError) return error.code;
    throw error;
  }
  return undefined;
}
