import { z } from 'zod';
import { apiFaultRuleSchema } from '../api-faults/api-faults.js';
import { JOURNAL_METHODS } from '../records/request-journal.js';

/** The scenario steps named by their one key rather than by `do` (contract parts 7 and 9). */

const json = z.record(z.string(), z.unknown());

/** Requests the account sent to `/api/v1` (the request journal): how many matched, each by method, path and body. */
const requestExpectation = z.strictObject({
  method: z.enum(JOURNAL_METHODS).optional(),
  /** `{id}` or `*` stands for one segment; it may hold `${references}`. */
  path: z.string().min(1),
  /** Exactly this many; at least one when left out. */
  times: z.number().int().min(0).optional(),
  /** A part of the request's JSON body that must match. */
  body: json.optional(),
});

/** What a keyed step becomes: the step the runner sees, and the OpenAPI document shows. */
const keyedStep = z.union([
  z.strictObject({ do: z.literal('apiFault'), description: z.string().optional(), apiFault: apiFaultRuleSchema }),
  z.strictObject({ do: z.literal('expectRequest'), description: z.string().optional(), expectRequest: requestExpectation }),
]);

export const keyedSteps = z
  .strictObject({
    do: z.enum(['apiFault', 'expectRequest']).optional(),
    description: z.string().optional(),
    apiFault: apiFaultRuleSchema.optional(),
    expectRequest: requestExpectation.optional(),
  })
  .superRefine((s, ctx) => {
    const keys = (['apiFault', 'expectRequest'] as const).filter((key) => s[key] !== undefined);
    if (keys.length !== 1) ctx.addIssue({ code: 'custom', message: 'give one of apiFault and expectRequest' });
    else if (s.do !== undefined && s.do !== keys[0]) ctx.addIssue({ code: 'custom', path: ['do'], message: `a ${keys[0]} step's do is ${keys[0]}` });
  })
  .transform(
    ({ description, apiFault, expectRequest }) =>
      (apiFault ? { do: 'apiFault', description, apiFault } : { do: 'expectRequest', description, expectRequest }) as z.input<typeof keyedStep>,
  )
  .pipe(keyedStep);

