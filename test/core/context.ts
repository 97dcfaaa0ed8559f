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
  SandboxError,
  seededIds,
  type AccountState,
  type TableName,
} from '../../src/core/index.js';
import { Transfers } from '../../src/core/transfers.js';
import { VaPayments } from '../../src/core/va-payments.js';

/** A record as it was written: what a store's journal would hold for it. */
type Written = { table: TableName; id: string; after: unknown };

/**
 * An account's context for one module tested on its own: a fake clock, seeded ids, and what it told. `state` starts
 * it over records already made; `seed` gives other ids than another context's.
 */
export function moduleContext(options: { hubIds?: number[]; state?: AccountState; seed?: number } = {}) {
  const clock = new FakeClock(Date.parse('2026-11-21T12:00:00Z'));
  const state = options.state ?? emptyAccountState();
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
    ...(options.hubIds ? { hubIds: options.hubIds } : {}),
  });
  return { clock, ctx, written, live };
}

/**
 * The modules of an account (all but idempotency), wired to each other as the Account wires them but without it, so
 * a test drives the module under test and reads the others only where that module needs them. `build` indexes them
 * from their records, in the Account's order.
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
  const hubs = new Hubs(ctx, (cvuOrAlias) => ledger.clientAt(cvuOrAlias) !== undefined);
  const ledger: ClientLedger = new ClientLedger(ctx, hubs, due);
  const payments: VaPayments = new VaPayments(ctx, hubs, events, log, due);
  const transfers = new Transfers(ctx, hubs, payments, ledger, events);
  const build = () => [payments, hubs, ledger, events, log].forEach((module) => module.build());
  return { ...context, due, log, events, hubs, ledger, payments, transfers, build };
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
