import { z } from 'zod';
import { apiFaultRuleSchema } from '../api-faults/index.js';
import { type ErrorCode, errorStatus } from '../conventions/index.js';
import {
  allocationSchema,
  CVU_STATUSES,
  clientCvuSchema,
  clockAdvanceSchema,
  createClientSchema,
  createInvoiceSchema,
  createVaPaymentSchema,
  DELIVERY_STATUSES,
  debitSchema,
  EVENT_TYPES,
  hubPatchSchema,
  transferSchema,
  triggerSchema,
  updateClientSchema,
  updateInvoiceSchema,
  VA_PAYMENT_STATUSES,
} from '../records/index.js';
import { expectRequestStep, shorthand } from './keyed-steps.js';
import { hasReference, referencedNames } from './references.js';

/**
 * Scenario files (`fixtures/*.json`): named steps that drive the sandbox, `${step.path}` references to earlier
 * results, and expectations. Request bodies are checked by the same schemas that validate the API's requests.
 */

export const SCENARIO_VERSION = 1;

/** The name the runner's built-in receiver answers to: `${receiver.url}`. */
export const RECEIVER = 'receiver';

const NAME = /^[A-Za-z_][\w-]*$/;

/**
 * A request body as a scenario writes it: each field is checked by the API's own schema for it, unless it holds
 * a reference (its value is only known when the step runs; the sandbox checks it then). Rules across fields are
 * the sandbox's to enforce, and the step fails with its VALIDATION_ERROR.
 */
function requestBody(schema: z.ZodObject) {
  const shape = schema.shape as Record<string, z.ZodType>;
  const body = z.record(z.string(), z.unknown()).superRefine((body, ctx) => {
    for (const key of Object.keys(body)) {
      if (!(key in shape)) ctx.addIssue({ code: 'custom', path: [key], message: 'unknown field' });
    }
    for (const [key, field] of Object.entries(shape)) {
      if (hasReference(body[key])) continue;
      const result = field.safeParse(body[key]);
      if (!result.success) {
        for (const issue of result.error.issues)
          ctx.addIssue({ code: 'custom', path: [key, ...issue.path], message: issue.message });
      }
    }
  });
  bodies.set(body, schema);
  return body;
}

/** The API schema each scenario request body is checked by, for the JSON Schema (`scenarioJsonSchema`). */
const bodies = new WeakMap<object, z.ZodObject>();

const name = z.string().regex(NAME, 'must start with a letter or _ and hold only letters, digits, _ and -');
const target = z.string().min(1);
const json = z.record(z.string(), z.unknown());
const errorCode = z.enum(Object.keys(errorStatus) as [ErrorCode, ...ErrorCode[]]);

/** What every step that calls the sandbox may add: a name for later references, and what its answer must be. */
const action = {
  name: name.optional(),
  description: z.string().optional(),
  /** A partial match on the step's answer (`data`); it may refer to the step's own name. */
  expect: json.optional(),
  /** The step must fail with this error code. */
  expectError: errorCode.optional(),
  /** The step's request must be faulted by an API fault rule: an error it answered, or no answer at all. */
  expectFault: z.literal(true).optional(),
  /** Sent as the request's Idempotency-Key (a POST's answer is then replayed for the same key and body). */
  idempotencyKey: z.string().min(1).max(255).optional(),
};
const expectation = { description: z.string().optional() };
/** The payment hub a hub step reads or changes: 1 unless given. */
const hubId = z.number().int().min(1).default(1);

const callbackExpectation = z.strictObject({
  eventType: z.enum(EVENT_TYPES),
  /** Requests the receiver got for this event (same eventId). */
  attempts: z.number().int().min(1).optional(),
  /** The delivery's status in the sandbox's log. */
  delivery: z.enum(DELIVERY_STATUSES).optional(),
  body: json.optional(),
  /** Header names are compared case-insensitively. */
  headers: z.record(z.string(), z.string()).optional(),
});

const eventExpectation = z.strictObject({
  eventType: z.enum(EVENT_TYPES),
  /** Where the event was routed: its URL, or null when it was dropped. */
  url: z.string().nullable().optional(),
  delivery: z.enum(DELIVERY_STATUSES).optional(),
  body: json.optional(),
});

const step = z.preprocess(
  shorthand,
  z.discriminatedUnion('do', [
    z.strictObject({ do: z.literal('createVaPayment'), ...action, body: requestBody(createVaPaymentSchema) }),
    z.strictObject({ do: z.literal('getVaPayment'), ...action, id: target }),
    z.strictObject({ do: z.literal('cancelVaPayment'), ...action, id: target }),
    z.strictObject({ do: z.literal('createClient'), ...action, body: requestBody(createClientSchema) }),
    z.strictObject({ do: z.literal('getClient'), ...action, id: target }),
    z.strictObject({ do: z.literal('updateClient'), ...action, id: target, body: requestBody(updateClientSchema) }),
    z.strictObject({
      do: z.literal('setCvuStatus'),
      ...action,
      clientId: target,
      cvuStatus: clientCvuSchema.shape.cvuStatus,
    }),
    z.strictObject({
      do: z.literal('createInvoice'),
      ...action,
      clientId: target,
      body: requestBody(createInvoiceSchema.in),
    }),
    z.strictObject({
      do: z.literal('updateInvoice'),
      ...action,
      clientId: target,
      id: target,
      body: requestBody(updateInvoiceSchema.in),
    }),
    z.strictObject({
      do: z.literal('allocate'),
      ...action,
      clientId: target,
      invoiceId: target,
      body: requestBody(allocationSchema),
    }),
    z.strictObject({ do: z.literal('createDebit'), ...action, clientId: target, body: requestBody(debitSchema) }),
    // Its fields depend on its entryType: the sandbox checks the body when the step runs.
    z.strictObject({
      do: z.literal('ledgerEntry'),
      ...action,
      clientId: target,
      body: z.record(z.string(), z.unknown()),
    }),
    z.strictObject({ do: z.literal('transfer'), ...action, body: requestBody(transferSchema) }),
    z.strictObject({ do: z.literal('advanceClock'), ...action, seconds: clockAdvanceSchema.shape.seconds }),
    z.strictObject({ do: z.literal('getHub'), ...action, id: hubId }),
    z.strictObject({ do: z.literal('updateHub'), ...action, id: hubId, body: requestBody(hubPatchSchema) }),
    z.strictObject({
      do: z.literal('failReceiver'),
      description: z.string().optional(),
      /** The receiver answers the next `times` callbacks (to `path`, if given) with `status`. */
      times: z.number().int().min(1).max(100),
      status: z.number().int().min(300).max(599).default(500),
      path: z.string().startsWith('/').optional(),
    }),
    /** `{"apiFault": {rule}}`: adds an API fault rule to the account (`do` may be left out). */
    z.strictObject({
      do: z.literal('apiFault').default('apiFault'),
      description: z.string().optional(),
      apiFault: apiFaultRuleSchema,
    }),
    /** `{"trigger": {"event", ...}}`: makes one event as `POST /sandbox/v1/triggers` does (`do` may be left out). */
    z.strictObject({ do: z.literal('trigger').default('trigger'), ...action, trigger: requestBody(triggerSchema) }),
    expectRequestStep,
    z.strictObject({
      do: z.literal('expectVaPayment'),
      ...expectation,
      id: target,
      match: z.looseObject({ status: z.enum(VA_PAYMENT_STATUSES).optional() }),
    }),
    z.strictObject({
      do: z.literal('expectClient'),
      ...expectation,
      id: target,
      match: z.looseObject({ cvuStatus: z.enum(CVU_STATUSES).optional() }),
    }),
    z.strictObject({
      do: z.literal('expectBalance'),
      ...expectation,
      clientId: target,
      match: z.strictObject({
        totalCashIn: z.number().optional(),
        totalCashOut: z.number().optional(),
        totalInvoiced: z.number().optional(),
        balance: z.number().optional(),
      }),
    }),
    /** The exact sequence of callbacks a URL of the runner's receiver got, one item per event, in order of arrival. */
    z.strictObject({
      do: z.literal('expectCallbacks'),
      ...expectation,
      url: target,
      callbacks: z.array(callbackExpectation),
    }),
    /** The exact sequence of events raised for a VA payment or a client, oldest first, with their routing. */
    z
      .strictObject({
        do: z.literal('expectEvents'),
        ...expectation,
        vaPaymentId: target.optional(),
        clientId: target.optional(),
        events: z.array(eventExpectation),
      })
      .refine(
        (s) => (s.vaPaymentId === undefined) !== (s.clientId === undefined),
        'give vaPaymentId or clientId, not both',
      ),
  ]),
);

export type ScenarioStep = z.output<typeof step>;
export const isExpectation = (s: ScenarioStep): boolean => s.do.startsWith('expect');

export const scenarioSchema = z
  .strictObject({
    $schema: z.string().optional(),
    version: z.literal(SCENARIO_VERSION),
    name: z.string().min(1).max(200),
    description: z.string().optional(),
    steps: z.array(step).min(1),
  })
  .superRefine((scenario, ctx) => {
    const known = new Set([RECEIVER]);
    scenario.steps.forEach((s, i) => {
      const own = 'name' in s ? s.name : undefined;
      // A step's `expect` may read the step's own answer too.
      const { expect, ...rest } = s as ScenarioStep & { expect?: unknown };
      const refs = [...referencedNames(rest), ...referencedNames(expect).filter((ref) => ref !== own)];
      for (const ref of new Set(refs)) {
        if (!known.has(ref))
          ctx.addIssue({
            code: 'custom',
            path: ['steps', i],
            message: `refers to \${${ref}…}, which no earlier step is named`,
          });
      }
      const outcomes =
        'expectError' in s ? [expect, s.expectError, s.expectFault].filter((e) => e !== undefined).length : 0;
      if (outcomes > 1)
        ctx.addIssue({
          code: 'custom',
          path: ['steps', i],
          message: 'give one of expect, expectError and expectFault',
        });
      if (own === undefined) return;
      if (known.has(own))
        ctx.addIssue({ code: 'custom', path: ['steps', i, 'name'], message: `"${own}" is already taken` });
      known.add(own);
    });
  });

export type Scenario = z.output<typeof scenarioSchema>;

/**
 * The scenario format as a JSON Schema (draft 2020-12), for editors to check and complete scenario files: served at
 * `/scenario.schema.json` and shipped as `scenario.schema.json`. A request body's fields are the API's own, each of
 * which may also be a string holding a `${reference}`.
 */
export function scenarioJsonSchema(): Record<string, unknown> {
  const reference = { type: 'string', pattern: '\\$\\{' };
  return z.toJSONSchema(scenarioSchema, {
    io: 'input',
    unrepresentable: 'any',
    override: ({ zodSchema, jsonSchema }) => {
      const api = bodies.get(zodSchema);
      if (!api) return;
      const { properties = {}, required } = z.toJSONSchema(api, { io: 'input', unrepresentable: 'any' }) as {
        properties?: Record<string, unknown>;
        required?: string[];
      };
      for (const key of Object.keys(jsonSchema)) delete (jsonSchema as Record<string, unknown>)[key];
      Object.assign(jsonSchema, {
        type: 'object',
        properties: Object.fromEntries(
          Object.entries(properties).map(([key, field]) => [key, { anyOf: [field, reference] }]),
        ),
        ...(required ? { required } : {}),
        additionalProperties: false,
      });
    },
  }) as Record<string, unknown>;
}
