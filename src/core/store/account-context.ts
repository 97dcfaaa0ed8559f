import { type IdSource, iso, type WallClock } from '../conventions/index.js';
import type {
  ApiFaultType,
  Attempt,
  deliveryView,
  eventView,
  ForwardingView,
  SandboxEvent,
  TableName,
  transferView,
} from '../records/index.js';
import type { AccountHead, Repository, Row, Storage } from './repository.js';

/** What happens in an account, for live views (the server's stream, the dashboard). Core never prints. */
export type LiveEvent =
  | { type: 'event'; account: string; event: ReturnType<typeof eventView> }
  | { type: 'transfer'; account: string; transfer: ReturnType<typeof transferView> }
  | {
      type: 'delivery';
      account: string;
      delivery: ReturnType<typeof deliveryView>;
      attempt: Attempt | null;
      event?: DeliveredEvent;
    }
  | { type: 'forwarding'; account: string; forwarding: ForwardingView }
  | { type: 'apiFaults'; account: string; apiFaults: ApiFaultsNews };

/**
 * What the live stream tells of an account's rules (an `apiFaults` message): how many there are, how many may still
 * fault, their hits, and the request just faulted (null when a rule was added or removed). A faulted request says
 * nothing else live: a view of the rules hears of it only so.
 */
export interface ApiFaultsNews {
  rules: number;
  active: number;
  hits: number;
  faulted: { ruleId: string; fault: ApiFaultType; method: string; path: string; at: string } | null;
}

/** What a live delivery message says of its event: whose it is and the body sent. */
type DeliveredEvent = Pick<SandboxEvent, 'vaPaymentId' | 'clientId' | 'body'>;

/** The delivery policy is data: attempts at most, and the delays (sandbox seconds) before each retry. */
export interface DeliveryPolicy {
  maxAttempts: number;
  retryDelays: number[];
}

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
  /** Where accounts are kept: every read and write of a record goes there. */
  storage: Storage;
}

/** What every module of an account shares: its records, its clock and what it was given. */
export class AccountContext {
  /** While a clock move walks through due instants, the account's time stands at the one being done (`DueWork.standAt`). */
  standing: number | null = null;

  /** The account's records, as the store keeps them. */
  readonly records: Repository;

  constructor(
    readonly key: string,
    /** The account's clock offset, forwarding and faults, kept here and written through `changedHeader`. */
    public head: AccountHead,
    readonly deps: AccountDeps,
  ) {
    this.records = deps.storage.records(key);
  }

  nowMs(): number {
    return this.standing ?? this.deps.clock.now() + this.head.clockOffsetMs;
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

  /** Records are replaced whole, never edited in place. */
  put<T extends TableName>(table: T, id: string, record: Row<T>): void {
    this.records.put(table, id, record);
  }

  get<T extends TableName>(table: T, id: string): Row<T> | undefined {
    return this.records.get(table, id);
  }

  /** A change to the account's fields other than its records (its clock offset, forwarding, faults). */
  changedHeader(): void {
    this.deps.storage.writeHead(this.key, this.head);
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
