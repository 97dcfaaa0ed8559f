import { iso, type WallClock } from './clock.js';
import type { DeliveryPolicy } from './deliveries.js';
import type { IdSource } from './ids.js';
import type { Attempt, AccountState, SandboxEvent, StateChange, TableName } from './state.js';
import type { deliveryView, eventView, transferView } from './views.js';
import type { forwardingView } from './delivery-settings.js';

/** What happens in an account, for live views (the server's stream, the dashboard). Core never prints. */
export type LiveEvent =
  | { type: 'event'; account: string; event: ReturnType<typeof eventView> }
  | { type: 'transfer'; account: string; transfer: ReturnType<typeof transferView> }
  | { type: 'delivery'; account: string; delivery: ReturnType<typeof deliveryView>; attempt: Attempt | null; event?: DeliveredEvent }
  | { type: 'forwarding'; account: string; forwarding: ReturnType<typeof forwardingView> };

/** What a live delivery message says of its event: whose it is and the body sent. */
export type DeliveredEvent = Pick<SandboxEvent, 'vaPaymentId' | 'clientId' | 'body'>;

export interface AccountDeps {
  clock: WallClock;
  ids: IdSource;
  policy: DeliveryPolicy;
  notify: (event: LiveEvent) => void;
  /** Whether anyone listens for live events of this type (absent: everyone does), so unheard ones are never made. */
  hears?: (type: LiveEvent['type']) => boolean;
  /** `--strict-tax-id`: a client's taxId must pass the CUIT check digit. */
  strictTaxId?: boolean;
  /** `--hubs`: the payment hub ids this sandbox accepts; any positive id when absent. */
  hubIds?: readonly number[];
  /** Told of every change to an account's state (see `put`), so a store can persist just those. */
  changed: (account: string, change: StateChange, state: AccountState) => void;
}

/** What every module of an account shares: its records, its clock and what it was given. */
export class AccountContext {
  /** While a clock move walks through due instants, the account's time stands at the one being done (`DueWork.standAt`). */
  standing: number | null = null;

  constructor(
    readonly key: string,
    readonly state: AccountState,
    readonly deps: AccountDeps,
  ) {}

  nowMs(): number {
    return this.standing ?? this.deps.clock.now() + this.state.clockOffsetMs;
  }

  now(): string {
    return iso(this.nowMs());
  }

  /** Runs one operation at one instant, so every time it records (a payment's `createdAt`, its event's) is the same. */
  atOneInstant<T>(operation: () => T): T {
    return this.standing !== null ? operation() : this.at(this.nowMs(), operation);
  }

  /** Runs an operation with the account's time standing at `instant`, then as it was. */
  at<T>(instant: number, operation: () => T): T {
    const standing = this.standing;
    this.standing = instant;
    try {
      return operation();
    } finally {
      this.standing = standing;
    }
  }

  /**
   * Every write of a record goes through here (records are replaced whole, never edited in place), so the
   * store hears of each change and can persist just that.
   */
  put<T extends TableName>(table: T, id: string, record: AccountState[T][string]): void {
    (this.state[table] as Record<string, unknown>)[id] = record;
    this.deps.changed(this.key, { table, id }, this.state);
  }

  drop(table: TableName, id: string): void {
    delete this.state[table][id];
    this.deps.changed(this.key, { table, id }, this.state);
  }

  /** A change to the account's fields other than its tables (its clock offset, forwarding, faults). */
  changedHeader(): void {
    this.deps.changed(this.key, { header: true }, this.state);
  }

  /** Tells listeners of a live event, made only if someone listens for its type (a view per write costs). */
  notify<T extends LiveEvent['type']>(type: T, make: () => Extract<LiveEvent, { type: T }>): void {
    if (this.deps.hears?.(type) ?? true) this.deps.notify(make());
  }

  uuid(): string {
    return this.deps.ids.uuid();
  }
}

/** Appends to the list a map keeps under `key`. */
export function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}
