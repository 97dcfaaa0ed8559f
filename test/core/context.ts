import { DeliveryLog } from '../../src/core/callbacks/delivery-log.js';
import { Events } from '../../src/core/callbacks/events.js';
import { ClientLedger } from '../../src/core/clients/client-ledger.js';
import { DueWork } from '../../src/core/clock/due-work.js';
import { Hubs } from '../../src/core/hubs/hubs.js';
import {
  type AccountState,
  accountHead,
  defaultDeliveryPolicy,
  emptyAccountState,
  FakeClock,
  SandboxError,
  seededIds,
  type TableName,
} from '../../src/core/index.js';
import { AccountContext, type LiveEvent } from '../../src/core/store/index.js';
import type { Repository, Storage } from '../../src/core/store/repository.js';
import { Transfers } from '../../src/core/transfers/transfers.js';
import { VaPayments } from '../../src/core/va-payments/va-payments.js';
import { memoryStore } from '../../src/sandbox/store/database.js';

/** A record as it was written: what a store's journal would hold for it. */
type Written = { table: TableName; id: string; after: unknown };

/**
 * An account's context for one module tested on its own: a fake clock, seeded ids, and what it told. `state` starts
 * it over records already made; `seed` gives other ids than another context's.
 */
export function moduleContext(options: { hubIds?: number[]; state?: AccountState; seed?: number } = {}) {
  const clock = new FakeClock(Date.parse('2026-11-21T12:00:00Z'));
  const store = memoryStore();
  const key = 'sk_module';
  // Resolves once `state` is stored (awaited by a test that starts the modules over records already made).
  const stored = options.state ? store.replace(key, options.state) : Promise.resolve();
  const written: Written[] = [];
  const live: LiveEvent[] = [];
  const records = store.records(key);
  const put: Repository['put'] = (table, id, record) => {
    written.push({ table, id, after: record });
    records.put(table, id, record);
  };
  const storage: Storage = { ...store, head: (k) => store.head(k), records: () => ({ ...records, put }) };
  const ctx = new AccountContext(key, store.head(key) ?? accountHead(emptyAccountState()), {
    clock,
    ids: seededIds(options.seed ?? 5),
    policy: defaultDeliveryPolicy,
    notify: (event) => live.push(event),
    storage,
    ...(options.hubIds ? { hubIds: options.hubIds } : {}),
  });
  return { clock, ctx, written, live, store, stored };
}

/**
 * The modules of an account (all but idempotency), wired to each other as the Account wires them but without it, so
 * a test drives the module under test and reads the others only where that module needs them.
 */
export function accountModules(options: Parameters<typeof moduleContext>[0] = {}) {
  const context = moduleContext(options);
  const { ctx } = context;
  const handlers = {
    expiry: (id: string, at: number) => payments.expireDue(id, at),
    cvu: (id: string, at: number) => ledger.provisionDue(id, at),
    idempotency: () => false,
  };
  const due = new DueWork(ctx, handlers, (inFlight) => log.nextRetryAt(inFlight));
  const log = new DeliveryLog(ctx);
  const events = new Events(ctx, log);
  const hubs = new Hubs(ctx);
  const ledger: ClientLedger = new ClientLedger(ctx, hubs);
  const payments: VaPayments = new VaPayments(ctx, hubs, events, log);
  const transfers = new Transfers(ctx, hubs, payments, ledger, events);
  return { ...context, due, log, events, hubs, ledger, payments, transfers };
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
