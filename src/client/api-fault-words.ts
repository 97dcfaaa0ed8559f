import type { ApiFault, ApiFaultRuleView } from '../core/api-faults/api-faults.js';

/**
 * API fault rules in words, for the CLI, the web inspector and the dashboard alike. No zod here: the CLI imports it,
 * and every command would pay for loading zod.
 */

/** `error 503`, `delay 400ms`, `reset`, `hang 30000ms`, `lost_answer`. */
export function faultText(fault: ApiFault): string {
  switch (fault.type) {
    case 'error':
      return `error ${fault.status}`;
    case 'delay':
    case 'hang':
      return `${fault.type} ${fault.ms}ms`;
    default:
      return fault.type;
  }
}

/** How often a rule applies: `next 2` (`spent` once done), or `p=0.3 seed 1`. */
export const ruleWhen = (rule: Pick<ApiFaultRuleView, 'times' | 'probability' | 'seed' | 'spent'>): string =>
  rule.probability === null ? (rule.spent ? 'spent' : `next ${rule.times}`) : `p=${rule.probability} seed ${rule.seed}`;
