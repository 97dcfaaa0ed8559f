import type { DueDelivery } from '../../core/index.js';
import { originOf, PER_RECEIVER } from './delivery-send.js';

/**
 * Fair shares: one account's attempts take at most half the slots, so other accounts (parallel CI jobs) always find
 * room; one receiver gets at most `PER_RECEIVER`.
 */
const ACCOUNT_SHARE = 0.5;

const NONE: ReadonlySet<string> = new Set();

/**
 * The attempts under way: each account's (by delivery id; an account with none has no entry, so it costs nothing
 * here once its attempts are over), its first attempts among them, and how many go to each receiver and in all.
 */
export class Flights {
  private readonly byAccount = new Map<string, Set<string>>();
  /** Each account's first attempts under way: their deliveries stay pending until the outcome is recorded. */
  private readonly firsts = new Map<string, Set<string>>();
  private readonly perReceiver = new Map<string, number>();
  /** Those waiting for an attempt to end (a walk, or a walk whose attempts found every slot taken). */
  private waiters: (() => void)[] = [];
  private readonly share: number;
  running = 0;

  constructor(private readonly concurrency: number) {
    this.share = Math.max(1, Math.floor(concurrency * ACCOUNT_SHARE));
  }

  /** The ids of the account's attempts under way (a live view: read it, do not keep it). */
  of(key: string): ReadonlySet<string> {
    return this.byAccount.get(key) ?? NONE;
  }

  firstsOf(key: string): ReadonlySet<string> {
    return this.firsts.get(key) ?? NONE;
  }

  /** `full`: every slot is taken; `held`: the account has its share under way; null: it may start one more. */
  roomFor(key: string): 'full' | 'held' | null {
    if (this.running >= this.concurrency) return 'full';
    return this.of(key).size >= this.share ? 'held' : null;
  }

  /** Whether the receiver of `url` has as many attempts under way as it has connections. */
  busy(url: string): boolean {
    return (this.perReceiver.get(originOf(url)) ?? 0) >= PER_RECEIVER;
  }

  add(key: string, { delivery, url }: DueDelivery): void {
    add(this.byAccount, key, delivery.id);
    if (delivery.status === 'pending') add(this.firsts, key, delivery.id);
    const receiver = originOf(url);
    this.perReceiver.set(receiver, (this.perReceiver.get(receiver) ?? 0) + 1);
    this.running++;
  }

  /** An attempt ended (its outcome recorded, or not): out of flight before anything looks for more work. */
  remove(key: string, { delivery, url }: DueDelivery): void {
    remove(this.byAccount, key, delivery.id);
    remove(this.firsts, key, delivery.id);
    const receiver = originOf(url);
    const left = this.perReceiver.get(receiver)! - 1;
    if (left === 0) this.perReceiver.delete(receiver);
    else this.perReceiver.set(receiver, left);
    this.running--;
    this.wake();
  }

  /** Resolves when the next attempt ends (or at close). */
  next(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }
}

function add(map: Map<string, Set<string>>, key: string, id: string): void {
  const ids = map.get(key);
  if (ids) ids.add(id);
  else map.set(key, new Set([id]));
}

function remove(map: Map<string, Set<string>>, key: string, id: string): void {
  const ids = map.get(key);
  if (ids?.delete(id) && ids.size === 0) map.delete(key);
}
