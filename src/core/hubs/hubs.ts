import { type AccountContext, paginate } from '../store/index.js';
import { generateAlias, generateCvu, THREE_WORDS } from './cvu.js';
import { SandboxError } from '../conventions/index.js';
import {
  hubIdSchema,
  hubPatchSchema,
  listQuery,
  parse,
  type Client,
  type Hub,
  type PoolCvu,
  type VaPayment,
  hubView,
} from '../records/index.js';

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
      throw new SandboxError('NOT_FOUND', `Payment hub ${id} not found; ${detail} (the hubs this sandbox was started with)`, [detail]);
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

  /** Lends the pool CVU released longest ago, or opens a new one. */
  reservePoolCvu(vaPaymentId: string): { cvu: string; alias: string } {
    let free = this.ctx.records.find('pool', { by: 'free' });
    if (!free) {
      const cvu = this.uniqueCvu();
      // Three-word aliases while under half of them are lent to the pool.
      const threeWords = this.ctx.records.count('pool') < THREE_WORDS / 2;
      const alias = generateAlias(this.ctx.deps.ids, (candidate) => this.isTaken(candidate), undefined, threeWords);
      free = { cvu, alias, vaPaymentId: null, releasedAt: null };
    }
    this.ctx.put('pool', free.cvu, { ...free, vaPaymentId, releasedAt: null });
    return { cvu: free.cvu, alias: free.alias };
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

  /** Whether a CVU or alias (case-insensitive) is taken in this account, for picking a new one. */
  isTaken(cvuOrAlias: string): boolean {
    const alias = cvuOrAlias.toUpperCase();
    const cvu = { cvu: cvuOrAlias };
    return this.ctx.records.has([['pool', { id: cvuOrAlias }], ['pool', { alias }], ['clients', { alias }], ['clients', cvu], ['hubs', { alias }], ['hubs', cvu]]);
  }

  /** The client whose CVU or alias (case-insensitive) this is. */
  clientAt(cvuOrAlias: string): Client | undefined {
    const { records } = this.ctx;
    return records.find('clients', { where: { cvu: cvuOrAlias } }) ?? records.find('clients', { where: { alias: cvuOrAlias.toUpperCase() } });
  }

  /** The hub whose collection CVU a CVU or alias (case-insensitive) is. */
  collectionOf(to: string): Hub | undefined {
    const { records } = this.ctx;
    return records.find('hubs', { where: { cvu: to } }) ?? records.find('hubs', { where: { alias: to.toUpperCase() } });
  }

  /** The pool CVU a CVU or alias (case-insensitive) names. */
  poolCvuAt(to: string): PoolCvu | undefined {
    return this.ctx.get('pool', to) ?? this.ctx.records.find('pool', { where: { alias: to.toUpperCase() } });
  }
}
