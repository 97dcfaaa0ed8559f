import { AccountContext, type LiveEvent } from '../../src/core/account-context.js';
import { defaultDeliveryPolicy, emptyAccountState, FakeClock, memoryIndexes, seededIds, type StateChange } from '../../src/core/index.js';

/** An account's context for one module tested on its own: a fake clock, seeded ids, memory indexes, and what it told. */
export function moduleContext(options: { hubIds?: number[] } = {}) {
  const clock = new FakeClock(Date.parse('2026-11-21T12:00:00Z'));
  const changes: StateChange[] = [];
  const live: LiveEvent[] = [];
  const ctx = new AccountContext('sk_module', emptyAccountState(), {
    clock,
    ids: seededIds(5),
    policy: defaultDeliveryPolicy,
    notify: (event) => live.push(event),
    changed: (_, change) => changes.push(change),
    indexes: memoryIndexes,
    ...options,
  });
  return { clock, ctx, changes, live, indexes: memoryIndexes('sk_module', true) };
}
