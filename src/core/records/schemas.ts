import { z } from 'zod';
import { iso, money, ms, SandboxError } from '../conventions/index.js';
import { clientRecord } from './client.js';
import { hubId as paymentHubId, taxId } from './fields.js';
import { hubRecord } from './hub.js';
import { INVOICE_TYPES } from './invoice.js';
import { unknownKind } from './suggest.js';
import { LOCK_MODES, vaPaymentRecord } from './va-payment.js';

export { httpUrl } from './fields.js';

/**
 * Turns zod issues into the contract's `details`: one "path: problem" per bad field. With the `input` they are of, a
 * kind no discriminated union has (a misspelt scenario step) is named with the closest kind there is.
 */
export function issuesToDetails(error: z.ZodError, input?: unknown): string[] {
  return error.issues.flatMap((issue) => {
    const where = issue.path.map(String).join('.');
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => `${where ? `${where}.` : ''}${key}: unknown field`);
    }
    if (
      issue.code === 'invalid_union' &&
      issue.discriminator !== undefined &&
      'options' in issue &&
      issue.options &&
      input !== undefined
    ) {
      return [`${where}: ${unknownKind(valueAt(input, issue.path), issue.options)}`];
    }
    return [`${where || '(body)'}: ${issue.message}`];
  });
}

/** The value at a zod issue's path in what was parsed. */
const valueAt = (input: unknown, path: readonly PropertyKey[]): unknown =>
  path.reduce<unknown>(
    (at, key) => (typeof at === 'object' && at !== null ? (at as Record<PropertyKey, unknown>)[key] : undefined),
    input,
  );

/** Parses input with a schema or throws the contract's 400 VALIDATION_ERROR naming every bad field. */
export function parse<S extends z.ZodType>(schema: S, input: unknown, what = 'request body'): z.output<S> {
  const result = schema.safeParse(input);
  if (!result.success) {
    const details = issuesToDetails(result.error, input);
    throw new SandboxError('VALIDATION_ERROR', `Invalid ${what}: ${details.join('; ')}`, details);
  }
  return result.data;
}

/** Optional fields accept null as "absent", as JSON clients often send. */
const optional = <T extends z.ZodType>(schema: T) => schema.nullish();

/**
 * Cross-field checks run even when a field is already refused (by default zod skips them then), so a body's every
 * problem is named in one answer, not one after another. They see the input as sent: each checks its fields' types.
 */
const everyProblem = {
  when: (payload: { value: unknown }) => typeof payload.value === 'object' && payload.value !== null,
};

const uuid = z
  .string()
  .regex(/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/, 'must be a UUID');
const text = (max: number) => z.string().max(max);
/**
 * A record's field as a request gives it (`records/`): absent or null where the record holds null. A field added
 * since a release is declared with its default (`.default(null)`, see `RECORD_OF`): the request takes it the same.
 */
const given = <T extends z.ZodType>(field: z.ZodNullable<T> | z.ZodDefault<z.ZodNullable<T>>) =>
  optional((field instanceof z.ZodDefault ? field.unwrap() : field).unwrap() as T);
const payment = vaPaymentRecord.shape;
const client = clientRecord.shape;

export const createVaPaymentSchema = z
  .strictObject({
    paymentHubId,
    currency: z.string(),
    lockMode: z.enum(LOCK_MODES),
    amount: optional(money()),
    ttlSeconds: payment.ttlSeconds.default(1800),
    clientId: optional(uuid),
    clientTaxId: given(payment.clientTaxId),
    clientName: given(payment.clientName),
    callbackUrl: given(payment.callbackUrl),
    successUrl: given(payment.successUrl),
    failureUrl: given(payment.failureUrl),
    externalReference: given(payment.externalReference),
    metadata: optional(payment.metadata),
  })
  .superRefine((body, ctx) => {
    if ((body.lockMode === 'amount' || body.lockMode === 'amount_and_time') && body.amount == null) {
      ctx.addIssue({ code: 'custom', path: ['amount'], message: `is required with lockMode "${body.lockMode}"` });
    }
    if (body.callbackUrl != null && (body.successUrl != null || body.failureUrl != null)) {
      ctx.addIssue({
        code: 'custom',
        path: ['callbackUrl'],
        message:
          'cannot be combined with successUrl/failureUrl: configure callbackUrl alone, or successUrl and failureUrl together',
      });
    }
    if ((body.successUrl != null) !== (body.failureUrl != null)) {
      const missing = body.successUrl == null ? 'successUrl' : 'failureUrl';
      ctx.addIssue({ code: 'custom', path: [missing], message: 'is required: successUrl and failureUrl go together' });
    }
  }, everyProblem);
export type CreateVaPaymentInput = z.output<typeof createVaPaymentSchema>;

export const transferSchema = z
  .strictObject({
    to: z.string().min(1).max(64),
    total: money(),
    taxes: money({ allowZero: true }).default(0),
    from: optional(
      z.strictObject({
        name: optional(text(255)),
        taxId: optional(taxId),
        cbu: optional(z.string().regex(/^\d{22}$/, 'must be 22 digits')),
      }),
    ),
  })
  .superRefine((body, ctx) => {
    if (typeof body.taxes === 'number' && typeof body.total === 'number' && body.taxes >= body.total) {
      ctx.addIssue({ code: 'custom', path: ['taxes'], message: 'must be less than total' });
    }
  }, everyProblem);

/** The farthest a clock move may go: 10 years (contract part 5). */
export const MAX_CLOCK_MOVE_SECONDS = 10 * 365 * 24 * 3600;

export const clockAdvanceSchema = z.strictObject({
  seconds: z.number().int().min(1).max(MAX_CLOCK_MOVE_SECONDS),
});

/** `clock/set`: an ISO time with its zone (forward only, checked against the account's clock). */
export const clockSetSchema = z.strictObject({ at: z.iso.datetime({ offset: true }) });

export const hubPatchSchema = z.strictObject({
  name: hubRecord.shape.name.optional(),
  brand: hubRecord.shape.brand.optional(),
  dedicated_client_cvus_enabled: z.boolean().optional(),
  cvuProvisioning: hubRecord.shape.cvuProvisioning.optional(),
});

/** A hub id in a path: digits only, so `/hubs/1e3` or `/hubs/-1` is not a hub. */
export const hubIdSchema = z
  .string()
  .regex(/^[1-9]\d{0,15}$/, 'must be a positive whole number')
  .transform(Number)
  .pipe(paymentHubId);

export const createClientSchema = z.strictObject({
  paymentHubId,
  name: client.name,
  taxId: client.taxId,
  cashinCallbackUrl: given(client.cashinCallbackUrl),
  emails: optional(client.emails),
  phones: optional(client.phones),
  aliasPrefixHint: given(client.aliasPrefixHint),
  aliasSuffixHint: given(client.aliasSuffixHint),
  externalReference: given(client.externalReference),
  metadata: optional(client.metadata),
});
export type CreateClientInput = z.output<typeof createClientSchema>;

/** Any field of create but the hub; null clears a field (`cashinCallbackUrl: null` removes the callback). */
export const updateClientSchema = createClientSchema.omit({ paymentHubId: true }).partial();
export type UpdateClientInput = z.output<typeof updateClientSchema>;

/** The sandbox's CVU switch: `provisioning` and `active` move a client on from `not_provisioned` (a `manual` hub's). */
export const clientCvuSchema = z.strictObject({ cvuStatus: z.enum(['provisioning', 'active', 'disabled']) });

/** A time of an invoice: an ISO date (midnight UTC) or date-time with its zone; kept as UTC with milliseconds. */
const invoiceTime = z
  .union([z.iso.date(), z.iso.datetime({ offset: true })], { error: 'must be an ISO 8601 date or date-time' })
  .transform((value) => iso(ms(value.length === 10 ? `${value}T00:00:00.000Z` : value)));

/** The fields an invoice's create and update take (their shape: the scenario recorder asks for each again). */
export const invoiceFields = {
  invoiceNumber: optional(
    z.string().regex(/^\d{4,5}-\d{8}$/, 'must be a point of sale and a number, like 0001-00000042'),
  ),
  invoiceType: optional(z.enum(INVOICE_TYPES)),
  sellerTaxId: optional(taxId),
  sellerName: optional(text(255)),
  subtotalNet: optional(money({ allowZero: true })),
  vatAmount: optional(money({ allowZero: true })),
  otherTaxes: optional(money({ allowZero: true })),
  totalAmount: optional(money()),
  total_amount: optional(money()),
  currency: optional(z.string()),
  issuedAt: optional(invoiceTime),
  dueAt: optional(invoiceTime),
  paymentTerms: optional(text(255)),
  observations: optional(text(1000)),
};

type Totals = { totalAmount?: unknown; total_amount?: unknown };
/** Cross-field checks run beside the fields' own, so one answer names every bad field. */
const always = { when: (payload: { value: unknown }) => typeof payload.value === 'object' && payload.value !== null };

/** The amount under either name (spec `total_amount`, reference `totalAmount`): the same value twice is fine, two values are not. */
function oneTotal<S extends z.ZodObject>(schema: S) {
  return schema
    .superRefine((body: Totals, ctx) => {
      if (body.totalAmount == null || body.total_amount == null || body.totalAmount === body.total_amount) return;
      for (const name of ['totalAmount', 'total_amount']) {
        ctx.addIssue({
          code: 'custom',
          path: [name],
          message: 'totalAmount and total_amount name the same amount: give one, or both equal',
        });
      }
    }, always)
    .transform(
      ({
        totalAmount,
        total_amount,
        ...rest
      }: z.output<S> & { totalAmount?: number | null; total_amount?: number | null }) => ({
        ...rest,
        totalAmount: totalAmount ?? total_amount ?? undefined,
      }),
    );
}

export const createInvoiceSchema = oneTotal(
  z.strictObject(invoiceFields).refine((body: Totals) => body.totalAmount != null || body.total_amount != null, {
    path: ['totalAmount'],
    message: 'is required (or total_amount)',
    ...always,
  }),
);
export type CreateInvoiceInput = z.output<typeof createInvoiceSchema>;
/** Any field of create; `paymentStatus: "cancelled"` cancels (allocations move it otherwise). */
export const updateInvoiceSchema = oneTotal(
  z.strictObject({
    ...invoiceFields,
    paymentStatus: optional(
      z.literal('cancelled', { error: 'can only be set to cancelled: allocations move it otherwise' }),
    ),
  }),
);
export type UpdateInvoiceInput = z.output<typeof updateInvoiceSchema>;

export const debitSchema = z.strictObject({ amount: money(), description: optional(text(255)) });
export type DebitInput = z.output<typeof debitSchema>;

const operationId = z.string().min(1).max(64);
const movement = { description: optional(text(255)), operationId: optional(operationId) };

/**
 * `POST /sandbox/v1/clients/{id}/ledger`: a credit or a debit of `amount`, an adjustment of a signed amount, or the
 * reversal of a credited operation (its amount, if given, must be the operation's).
 */
export const ledgerEntrySchema = z.discriminatedUnion(
  'entryType',
  [
    z.strictObject({ entryType: z.literal('credit'), amount: money(), ...movement }),
    z.strictObject({ entryType: z.literal('debit'), amount: money(), ...movement }),
    z.strictObject({ entryType: z.literal('adjustment'), amount: money({ signed: true }), ...movement }),
    z.strictObject({
      entryType: z.literal('reversal'),
      amount: optional(money()),
      description: movement.description,
      operationId,
    }),
  ],
  { error: 'must be credit, adjustment, reversal or debit' },
);
export type LedgerEntryInput = z.output<typeof ledgerEntrySchema>;

export const allocationSchema = z.strictObject({ amount: money() });
