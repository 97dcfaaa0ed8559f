import type { AccountContext } from './account-context.js';
import {
  apiFaultRuleSchema,
  apiFaultRuleView,
  MAX_API_FAULT_RULES,
  pathMatches,
  type ApiFaultRule,
  type ApiFaultRuleView,
  type ApiFaultsNews,
  type Strike,
} from './api-fault-rules.js';
import { notFound, SandboxError } from './errors.js';
import { mulberry32Step } from './ids.js';
import { paginate } from './pagination.js';
import { listQuery, parse } from './schemas.js';

/** Where a rule's generator starts when it names no seed. */
const DEFAULT_SEED = 1;

/** An account's API fault rules, kept in its head (like its delivery faults) so they survive a restart. */
export class ApiFaults {
  constructor(private readonly ctx: AccountContext) {}

  private get rules(): ApiFaultRule[] {
    return this.ctx.head.apiFaults ?? [];
  }

  private set rules(rules: ApiFaultRule[]) {
    this.ctx.head = { ...this.ctx.head, apiFaults: rules };
    this.ctx.changedHeader();
  }

  /** In the order they apply: the order added. */
  list(query: Record<string, string>) {
    return paginate(this.rules, parse(listQuery, query, 'query'), apiFaultRuleView);
  }

  private announce(faulted: ApiFaultsNews['faulted'] = null): void {
    const rules = this.rules;
    const apiFaults = { rules: rules.length, active: rules.filter((r) => !r.spent).length, hits: rules.reduce((sum, r) => sum + r.hits, 0), faulted };
    this.ctx.notify('apiFaults', () => ({ type: 'apiFaults', account: this.ctx.key, apiFaults }));
  }

  add(body: unknown): ApiFaultRuleView {
    const input = parse(apiFaultRuleSchema, body);
    if (this.rules.length >= MAX_API_FAULT_RULES) {
      throw new SandboxError('INVALID_STATE', `The account has ${MAX_API_FAULT_RULES} API fault rules already: remove some first`);
    }
    const seed = input.probability === null ? null : (input.seed ?? DEFAULT_SEED);
    const rule: ApiFaultRule = { id: this.ctx.uuid(), ...input, seed, hits: 0, spent: false, createdAt: this.ctx.now(), draw: (seed ?? 0) >>> 0 };
    this.rules = [...this.rules, rule];
    this.announce();
    return apiFaultRuleView(rule);
  }

  remove(id: string): ApiFaultRuleView {
    const rule = this.rules.find((r) => r.id === id);
    if (!rule) throw notFound('API fault rule', id);
    this.rules = this.rules.filter((r) => r !== rule);
    this.announce();
    return apiFaultRuleView(rule);
  }

  clear(): { deleted: number } {
    const deleted = this.rules.length;
    if (deleted > 0) {
      this.rules = [];
      this.announce();
    }
    return { deleted };
  }

  /**
   * The fault for a request, or null. The first rule that is not spent and matches decides: a `times` rule faults
   * it; a `probability` rule draws (whatever comes out, so the sequence depends only on the requests) and faults it
   * when the draw falls under the probability.
   */
  strike(method: string, path: string): Strike | null {
    const rules = this.rules;
    const index = rules.findIndex((r) => !r.spent && (r.method === '*' || r.method === method) && pathMatches(r.path, path));
    const rule = rules[index];
    if (!rule) return null;
    let next = rule;
    if (rule.probability === null) {
      next = { ...rule, hits: rule.hits + 1, spent: rule.hits + 1 >= rule.times! };
    } else {
      const { value, state } = mulberry32Step(rule.draw);
      next = { ...rule, draw: state, hits: rule.hits + (value < rule.probability ? 1 : 0) };
    }
    this.rules = rules.map((r, i) => (i === index ? next : r));
    if (next.hits === rule.hits) return null;
    this.announce({ ruleId: rule.id, fault: rule.fault.type, method, path, at: this.ctx.now() });
    return { ruleId: rule.id, fault: rule.fault };
  }
}
