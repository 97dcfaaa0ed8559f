import type { AccountContext } from './account-context.js';
import { generateAlias, generateCvu, THREE_WORDS } from './cvu.js';
import { notFound } from './errors.js';
import { paginate } from './pagination.js';
import { hubIdSchema, hubPatchSchema, listQuery, parse } from './schemas.js';
import type { Hub, PoolCvu, VaPayment } from './state.js';
import { hubView } from './views.js';

/**
 * Payment hubs (contract part 1) and the pool of CVUs lent to time-locked VA payments: every CVU and alias of the
 * account is unique across hubs' collection CVUs, the pool and clients' CVUs (`mayBeTaken`).
 */
export class Hubs {
  /** The hub whose collection CVU each CVU and upper-case alias is (hubs are few: always indexed from their records). */
  private readonly collections = new Map<string, Hub>();
  /** The pool CVU of each pool CVU and upper-case alias, and the free ones, released longest ago first. */
  private readonly poolByAddress = new Map<string, string>();
  private readonly freePool: string[] = [];
  /** How many pool CVUs the account opened (see `generateAlias`'s `threeWords`). */
  private readonly poolSize = { n: 0 };

  constructor(
    private readonly ctx: AccountContext,
    /** Whether a client has this CVU or alias (the client ledger's). */
    private readonly isClientAt: (cvuOrAlias: string) => boolean,
  ) {
    for (const hub of Object.values(ctx.state.hubs)) this.indexHub(hub);
  }

  /** Indexes the account's pool. */
  build(): void {
    const pool = Object.values(this.ctx.state.pool);
    for (const entry of pool) this.indexPoolCvu(entry);
    this.poolSize.n = pool.length;
    for (const entry of pool.filter((entry) => entry.vaPaymentId === null).sort(lendingOrder)) this.freePool.push(entry.cvu);
  }

  listHubs(query: Record<string, string>) {
    const q = parse(listQuery, query, 'query');
    const hubs = Object.values(this.ctx.state.hubs).sort((a, b) => a.id - b.id);
    return paginate(hubs, q, hubView);
  }

  /** A hub by its id in a path, made if new and allowed (as a create naming it would). */
  hub(id: string) {
    return hubView(this.hubFor(parse(hubIdSchema, id, 'hub id')));
  }

  patchHub(id: string, body: unknown) {
    const hub = this.hubFor(parse(hubIdSchema, id, 'hub id'));
    const next = { ...hub, ...parse(hubPatchSchema, body) };
    this.ctx.put('hubs', String(next.id), next);
    return hubView(next);
  }

  /**
   * The hub of a `paymentHubId`: integrators send their real hub ids, so any one is made on first use, with a
   * collection CVU and alias of its own, unless `--hubs` leaves it out (then it is unknown, as in production).
   */
  hubFor(id: number): Hub {
    const known = this.ctx.state.hubs[id];
    if (known) return known;
    const { hubIds } = this.ctx.deps;
    if (hubIds && !hubIds.includes(id)) throw notFound('Payment hub', String(id));
    const hub: Hub = {
      id,
      name: `Sandbox Hub ${id}`,
      brand: 'SANDBOX',
      dedicated_client_cvus_enabled: true,
      cvuProvisioning: 'inline',
      collectionCvu: this.uniqueCvu(),
      // Hub 1 keeps the alias it had when it was the only hub.
      collectionAlias: id === 1 ? 'SANDBOX.HUB.COBROS' : `SANDBOX.HUB${id}.COBROS`,
    };
    this.ctx.put('hubs', String(id), hub);
    this.indexHub(hub);
    return hub;
  }

  private indexHub(hub: Hub): void {
    this.collections.set(hub.collectionCvu, hub);
    this.collections.set(hub.collectionAlias.toUpperCase(), hub);
  }

  /** Lends the pool CVU released longest ago, or opens a new one. */
  reservePoolCvu(vaPaymentId: string): { cvu: string; alias: string } {
    const released = this.freePool.shift();
    let free = released === undefined ? undefined : this.ctx.state.pool[released];
    if (!free) {
      const cvu = this.uniqueCvu();
      // Three-word aliases while under half of them are lent to the pool.
      const alias = generateAlias(this.ctx.deps.ids, (candidate) => this.isTaken(candidate), undefined, this.poolSize.n < THREE_WORDS / 2);
      free = { cvu, alias, vaPaymentId: null, releasedAt: null };
      this.poolSize.n++;
    }
    this.putPoolCvu({ ...free, vaPaymentId, releasedAt: null });
    return { cvu: free.cvu, alias: free.alias };
  }

  /** Takes back the pool CVU a time-locked payment that ended held, to lend again after those released before it. */
  releasePoolCvu(payment: VaPayment): void {
    const entry = this.ctx.state.pool[payment.cvu];
    if (entry?.vaPaymentId !== payment.id) return;
    const released = { ...entry, vaPaymentId: null, releasedAt: payment.updatedAt };
    this.putPoolCvu(released);
    this.lendLater(released);
  }

  /** Puts a free pool CVU in its place to be lent (`lendingOrder`). */
  private lendLater(free: PoolCvu): void {
    // Releases come in time order, so this is (nearly always) the end: only ties are placed by CVU.
    let at = this.freePool.length;
    while (at > 0 && lendingOrder(this.ctx.state.pool[this.freePool[at - 1]!]!, free) > 0) at--;
    this.freePool.splice(at, 0, free.cvu);
  }

  private putPoolCvu(entry: PoolCvu): void {
    this.ctx.put('pool', entry.cvu, entry);
    this.indexPoolCvu(entry);
  }

  private indexPoolCvu(entry: PoolCvu): void {
    this.poolByAddress.set(entry.cvu, entry.cvu);
    this.poolByAddress.set(entry.alias.toUpperCase(), entry.cvu);
  }

  uniqueCvu(): string {
    for (;;) {
      const cvu = generateCvu(this.ctx.deps.ids);
      if (!this.isTaken(cvu)) return cvu;
    }
  }

  /** Whether a CVU or alias (case-insensitive) is taken in this account, for picking a new one. */
  isTaken(alias: string): boolean {
    const key = alias.toUpperCase();
    return this.isClientAt(alias) || this.collections.has(key) || this.poolByAddress.has(key);
  }

  /** The hub whose collection CVU a CVU or alias (case-insensitive) is: keyed by CVU (digits) and alias in upper case. */
  collectionOf(to: string): Hub | undefined {
    return this.collections.get(to.toUpperCase());
  }

  /** The pool CVU a CVU or alias (case-insensitive) names: keyed by CVU (digits) and alias in upper case. */
  poolCvuAt(to: string): string | undefined {
    return this.poolByAddress.get(to.toUpperCase());
  }
}

/**
 * Free pool CVUs are lent released longest ago first; those released at the same time by CVU, so the order is the
 * same whether the pool was indexed from its records or kept while running.
 */
const lendingOrder = (a: PoolCvu, b: PoolCvu): number =>
  a.releasedAt! < b.releasedAt! ? -1 : a.releasedAt! > b.releasedAt! ? 1 : a.cvu < b.cvu ? -1 : a.cvu > b.cvu ? 1 : 0;
