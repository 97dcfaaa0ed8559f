import { SandboxError } from '../conventions/index.js';
import {
  type Client,
  type Hub,
  hubIdSchema,
  hubPatchSchema,
  hubView,
  listQuery,
  type PoolCvu,
  parse,
  type VaPayment,
} from '../records/index.js';
import { type AccountContext, paginate } from '../store/index.js';
import { generateCvu, POOL_ALIASES, POOL_CVUS, poolAlias, poolCvu, poolNumber } from './cvu.js';

/** What holds a CVU or alias in an account: a hub's collection account, a pool entry or a client. */
export type Holder =
  | { cvu: string; kind: 'collection'; hubId: number }
  | { cvu: string; kind: 'pool'; entry: PoolCvu }
  | { cvu: string; kind: 'client'; client: Client };

/**
 * Payment hubs (contract part 1) and the pool of CVUs lent to time-locked VA payments: every CVU and alias of the
 * account is unique across hubs' collection CVUs, the pool and clients' CVUs (`isTaken`).
 */
export class Hubs {
  constructor(private readonly ctx: AccountContext) {}

  listHubs(query: Record<string, string>) {
    // The hubs `--hubs` names are the account's even before a create names them (so a list shows what to send).
    for (const id of this.ctx.deps.hubIds ?? []) this.hubFor(id);
    // By id: hubs are few.
    const hubs = [...this.ctx.records.each('hubs')].sort((a, b) => a.id - b.id);
    return paginate(hubs, parse(listQuery, query, 'query'), hubView);
  }

  /** A hub by its id in a path, made if new and allowed (as a create naming it would). */
  hub(id: string) {
    return hubView(this.hubFor(parse(hubIdSchema, id, 'hub id'), 'id'));
  }

  patchHub(id: string, body: unknown) {
    const hub = this.hubFor(parse(hubIdSchema, id, 'hub id'), 'id');
    const next = { ...hub, ...parse(hubPatchSchema, body) };
    this.ctx.put('hubs', String(next.id), next);
    return hubView(next);
  }

  /**
   * The hub of a `paymentHubId`: integrators send their real hub ids, so any one is made on first use, with a
   * collection CVU and alias of its own, unless `--hubs` leaves it out (then it is unknown, as in production, and
   * the error names the hubs there are, under `field`: where the id came from).
   */
  hubFor(id: number, field = 'paymentHubId'): Hub {
    const known = this.ctx.get('hubs', String(id));
    if (known) return known;
    const { hubIds } = this.ctx.deps;
    if (hubIds && !hubIds.includes(id)) {
      const detail = `${field}: must be one of ${[...hubIds].sort((a, b) => a - b).join(', ')}`;
      throw new SandboxError(
        'NOT_FOUND',
        `Payment hub ${id} not found; ${detail} (the hubs this sandbox was started with)`,
        [detail],
      );
    }
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
    return hub;
  }

  /** Lends the pool CVU released longest ago, or opens the next one by number. */
  reservePoolCvu(vaPaymentId: string): { cvu: string; alias: string } {
    let free = this.ctx.records.find('pool', { by: 'free' });
    if (!free) {
      const n = this.nextPoolNumber();
      free = { cvu: poolCvu(n), alias: poolAlias(n), vaPaymentId: null, releasedAt: null };
    }
    this.ctx.put('pool', free.cvu, { ...free, vaPaymentId, releasedAt: null });
    return { cvu: free.cvu, alias: free.alias };
  }

  /**
   * One past the highest number of the pool's space that any CVU or alias of the account holds: its pool's, or one
   * an older release or an import put there. The store keeps each highest one with its writes (`highest`): no lookup per create.
   */
  private nextPoolNumber(): number {
    const { records } = this.ctx;
    const highest = [
      records.highest('pool', 'id', POOL_CVUS),
      records.highest('pool', 'alias', POOL_ALIASES),
      records.highest('clients', 'cvu', POOL_CVUS),
      records.highest('clients', 'alias', POOL_ALIASES),
      records.highest('hubs', 'cvu', POOL_CVUS),
      records.highest('hubs', 'alias', POOL_ALIASES),
    ];
    return highest.reduce<number>(
      (next, value) => Math.max(next, value === null ? 0 : poolNumber(String(value))! + 1),
      0,
    );
  }

  /** Takes back the pool CVU a time-locked payment that ended held, to lend again after those released before it. */
  releasePoolCvu(payment: VaPayment): void {
    const entry = this.ctx.get('pool', payment.cvu);
    if (entry?.vaPaymentId !== payment.id) return;
    this.ctx.put('pool', entry.cvu, { ...entry, vaPaymentId: null, releasedAt: payment.updatedAt });
  }

  uniqueCvu(): string {
    for (;;) {
      const cvu = generateCvu(this.ctx.deps.ids);
      if (!this.isTaken(cvu)) return cvu;
    }
  }

  /** Whether a CVU or alias (case-insensitive) is taken in this account, for picking a new one: the pool's are. */
  isTaken(cvuOrAlias: string): boolean {
    const alias = cvuOrAlias.toUpperCase();
    if (poolNumber(alias) !== null) return true;
    const cvu = { cvu: cvuOrAlias };
    return this.ctx.records.has([
      ['pool', { id: cvuOrAlias }],
      ['pool', { alias }],
      ['clients', { alias }],
      ['clients', cvu],
      ['hubs', { alias }],
      ['hubs', cvu],
    ]);
  }

  /**
   * Every holder of a CVU or alias (case-insensitive), found by one lookup over them all (pool entries, hubs'
   * collection accounts, clients): never more than one in an account the API made or an import let in, and when a
   * database holds more, the caller sees them all rather than the first a fixed order would find.
   */
  holdersAt(to: string): Holder[] {
    const { records } = this.ctx;
    const upper = to.toUpperCase();
    const holders = new Map<string, Holder>();
    for (const entry of [this.ctx.get('pool', to), records.find('pool', { where: { alias: upper } })]) {
      if (entry) holders.set(`pool ${entry.cvu}`, { cvu: entry.cvu, kind: 'pool', entry });
    }
    const [byCvu, byAlias] = [{ where: { cvu: to } }, { where: { alias: upper } }];
    for (const hub of [records.find('hubs', byCvu), records.find('hubs', byAlias)]) {
      if (hub) holders.set(`hub ${hub.id}`, { cvu: hub.collectionCvu, kind: 'collection', hubId: hub.id });
    }
    for (const client of [records.find('clients', byCvu), records.find('clients', byAlias)]) {
      if (client) holders.set(`client ${client.id}`, { cvu: client.cvu!, kind: 'client', client });
    }
    return [...holders.values()];
  }
}
