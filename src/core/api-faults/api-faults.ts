import { z } from 'zod';
import { type ErrorCode, mulberry32Step, notFound, SandboxError } from '../conventions/index.js';
import {
  API_FAULT_METHODS,
  API_PATH_PATTERN,
  type ApiFault,
  type ApiFaultRule,
  apiFaultRuleRecord,
  apiFaultSchema,
  listQuery,
  parse,
} from '../records/index.js';
import { type AccountContext, type ApiFaultsNews, paginate } from '../store/index.js';

export type { ApiFault, ApiFaultRule, ApiFaultType } from '../records/index.js';

/**
 * API faults (contract part 7): rules that make an account's own `/api/v1` requests misbehave as production does
 * during an incident. A rule is data, as a Toxiproxy toxic or a WireMock fault is: where it applies (method and
 * path), what it does (`fault`), and how often (`times`, or a `probability` drawn from its own seeded generator).
 */

/** The error statuses a rule may answer, each with the contract's code. */
const API_FAULT_ERRORS = {
  500: 'INTERNAL_ERROR',
  502: 'BAD_GATEWAY',
  503: 'SERVICE_UNAVAILABLE',
  504: 'GATEWAY_TIMEOUT',
  429: 'RATE_LIMIT_EXCEEDED',
} as const satisfies Record<number, ErrorCode>;

/** More rules than anyone reads; the account's head stays small. */
const MAX_API_FAULT_RULES = 100;
const DEFAULT_SEED = 1;

/** `POST /sandbox/v1/api-faults`: exactly one of `times` and `probability`; `seed` only with `probability`. */
export const apiFaultRuleSchema = z
  .strictObject({
    method: z.enum(API_FAULT_METHODS).default('*'),
    path: z
      .string()
      .max(512)
      .regex(API_PATH_PATTERN, 'must be a path under /api/v1, where {id} or * stands for one segment'),
    fault: apiFaultSchema,
    times: z
      .number()
      .int()
      .min(1)
      .max(10_000)
      .nullable()
      .default(null)
      .describe('The next N matching requests; then the rule is spent'),
    probability: z
      .number()
      .min(0)
      .max(1)
      .nullable()
      .default(null)
      .describe("Each matching request, drawn from the rule's own generator"),
    seed: z
      .number()
      .int()
      .nullable()
      .default(null)
      .describe('Where the generator starts (default 1): the same requests in the same order get the same faults'),
  })
  .superRefine((rule, ctx) => {
    if ((rule.times === null) === (rule.probability === null))
      ctx.addIssue({ code: 'custom', path: ['times'], message: 'give times or probability, exactly one' });
    if (rule.seed !== null && rule.probability === null)
      ctx.addIssue({ code: 'custom', path: ['seed'], message: 'only a rule with a probability draws' });
  });

/** A rule as the API answers it: what was asked (defaults filled in), and `id`, `hits`, `spent`, `createdAt`. */
export const apiFaultRuleViewSchema = apiFaultRuleRecord.omit({ draw: true }).extend({
  id: z.uuid(),
  seed: z
    .number()
    .int()
    .nullable()
    .describe('The seed the generator started from (1 unless given); null for a times rule'),
  hits: z.number().int().describe('Requests the rule faulted'),
  spent: z.boolean().describe('A times rule that faulted its N requests: it matches nothing more'),
  createdAt: z.iso.datetime(),
});
export type ApiFaultRuleView = z.output<typeof apiFaultRuleViewSchema>;

export const apiFaultsClearedSchema = z.strictObject({
  deleted: z.number().int().describe('How many rules were removed'),
});

const apiFaultRuleView = ({ draw: _draw, ...rule }: ApiFaultRule): ApiFaultRuleView => rule;

/** A request a rule faults: the rule's id and what to do. */
export interface Strike {
  ruleId: string;
  fault: ApiFault;
}

/** Whether a rule's path pattern names a request path: segment by segment, `{name}` and `*` standing for any one. */
export function pathMatches(pattern: string, path: string): boolean {
  const want = pattern.replace(/\/$/, '').split('/');
  const got = path.replace(/\/$/, '').split('/');
  return (
    want.length === got.length &&
    want.every((segment, i) => segment === '*' || /^\{\w*\}$/.test(segment) || segment === got[i])
  );
}

/** The error a rule's `error` fault answers with. */
export const apiFaultError = (ruleId: string, fault: Extract<ApiFault, { type: 'error' }>) =>
  new SandboxError(API_FAULT_ERRORS[fault.status], `sandbox API fault ${ruleId}`);

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
    const apiFaults = {
      rules: rules.length,
      active: rules.filter((r) => !r.spent).length,
      hits: rules.reduce((sum, r) => sum + r.hits, 0),
      faulted,
    };
    this.ctx.notify('apiFaults', () => ({ type: 'apiFaults', account: this.ctx.key, apiFaults }));
  }

  add(body: unknown): ApiFaultRuleView {
    const input = parse(apiFaultRuleSchema, body);
    if (this.rules.length >= MAX_API_FAULT_RULES) {
      throw new SandboxError(
        'INVALID_STATE',
        `The account has ${MAX_API_FAULT_RULES} API fault rules already: remove some first`,
      );
    }
    const seed = input.probability === null ? null : (input.seed ?? DEFAULT_SEED);
    const rule: ApiFaultRule = {
      id: this.ctx.uuid(),
      ...input,
      seed,
      hits: 0,
      spent: false,
      createdAt: this.ctx.now(),
      draw: (seed ?? 0) >>> 0,
    };
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
    const index = rules.findIndex(
      (r) => !r.spent && (r.method === '*' || r.method === method) && pathMatches(r.path, path),
    );
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
