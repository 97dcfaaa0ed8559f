import { z } from 'zod';
import { accountExportSchema, importQuery } from '../core/account-export.js';
import { apiFaultRuleSchema, apiFaultRuleViewSchema, apiFaultsClearedSchema } from '../core/api-faults.js';
import { faultsSchema, forwardingSchema, redeliverSchema } from '../core/delivery-settings.js';
import { CALLBACK_EXAMPLES, CALLBACK_REFERENCE, CALLBACK_SCHEMAS } from '../core/callbacks.js';
import { callbackHeaders } from '../core/deliveries.js';
import { errorStatus, type ErrorCode } from '../core/errors.js';
import { scenarioSchema } from '../core/scenario.js';
import { EVENT_TYPES } from '../core/state.js';
import {
  allocationSchema,
  clientCvuSchema,
  clockAdvanceSchema,
  clockSetSchema,
  createClientSchema,
  createInvoiceSchema,
  createVaPaymentSchema,
  debitSchema,
  hubPatchSchema,
  ledgerEntrySchema,
  listClientsQuery,
  listDeliveriesQuery,
  listQuery,
  listTransactionsQuery,
  listVaPaymentsQuery,
  transferSchema,
  updateClientSchema,
  updateInvoiceSchema,
} from '../core/schemas.js';
import {
  balanceViewSchema,
  clientViewSchema,
  clockViewSchema,
  deliveryDetailSchema,
  deliveryViewSchema,
  entryViewSchema,
  eventViewSchema,
  forwardingViewSchema,
  healthSchema,
  hubViewSchema,
  importResultSchema,
  invoiceViewSchema,
  paginationSchema,
  releasedSchema,
  resetSchema,
  transactionsViewSchema,
  transferViewSchema,
  vaPaymentObjectSchema,
} from '../core/views.js';
import { EXAMPLES } from './openapi-examples.js';
import { progressViewSchema } from './progress.js';

/**
 * `GET /openapi.json`: an OpenAPI 3.1 document of every endpoint, its request bodies and query parameters made
 * from the very zod schemas that validate the requests, and the error envelope of every status it can answer.
 */

interface Operation {
  method: 'get' | 'post' | 'patch' | 'put' | 'delete';
  /** OpenAPI style: `{id}` for path parameters. */
  path: string;
  id: string;
  summary: string;
  tag: string;
  body?: z.ZodType;
  /** The body may be left out. */
  optionalBody?: true;
  query?: z.ZodObject;
  /** What the success answer's `data` holds (a list's item); the whole body for `raw-json`. */
  data?: z.ZodType;
  /** The envelope adds `message` beside `data` (cancel). */
  message?: true;
  /** The envelope may add `unreadable` beside `data`: the records of a damaged database an export left out. */
  unreadable?: true;
  status?: 200 | 201;
  /** Statuses beyond those every operation of its kind can answer. */
  errors?: number[];
  /** The success answer is not the JSON envelope. */
  produces?: 'text/event-stream' | 'raw-json';
  /** A list: `data` is the page's items and `pagination` sits beside it. */
  list?: true;
  public?: true;
}

const PAYMENTS = 'VA payments';
const CLIENTS = 'Clients';
const SANDBOX = 'Sandbox';
const DELIVERIES = 'Callback deliveries';
const SERVICE = 'Service';

export const OPERATIONS: Operation[] = [
  { method: 'get', path: '/health', id: 'health', summary: 'Liveness: `{status, version, keepDays}`', tag: SERVICE, produces: 'raw-json', public: true, data: healthSchema },
  { method: 'get', path: '/openapi.json', id: 'openapi', summary: 'This document', tag: SERVICE, produces: 'raw-json', public: true },
  { method: 'get', path: '/scenario.schema.json', id: 'scenarioSchema', summary: 'The scenario file format as a JSON Schema (draft 2020-12)', tag: SERVICE, produces: 'raw-json', public: true },

  { method: 'post', path: '/api/v1/va-payments', id: 'createVaPayment', summary: 'Create a VA payment', tag: PAYMENTS, body: createVaPaymentSchema, status: 201, errors: [404, 409, 422], data: vaPaymentObjectSchema },
  { method: 'get', path: '/api/v1/va-payments', id: 'listVaPayments', summary: 'List VA payments, newest first', tag: PAYMENTS, query: listVaPaymentsQuery, list: true, data: vaPaymentObjectSchema },
  { method: 'get', path: '/api/v1/va-payments/{id}', id: 'getVaPayment', summary: 'One VA payment, with its instructions, callback delivery summary and cash-ins', tag: PAYMENTS, data: vaPaymentObjectSchema },
  { method: 'post', path: '/api/v1/va-payments/{id}/cancel', id: 'cancelVaPayment', summary: 'Cancel a `waiting` or `underpaid` VA payment (the answer adds `message`)', tag: PAYMENTS, errors: [409], data: vaPaymentObjectSchema, message: true },

  { method: 'post', path: '/api/v1/clients', id: 'createClient', summary: 'Create a client with its dedicated CVU and alias', tag: CLIENTS, body: createClientSchema, status: 201, errors: [404, 409, 422], data: clientViewSchema },
  { method: 'get', path: '/api/v1/clients', id: 'listClients', summary: 'List clients, newest first', tag: CLIENTS, query: listClientsQuery, list: true, data: clientViewSchema },
  { method: 'get', path: '/api/v1/clients/{id}', id: 'getClient', summary: 'One client', tag: CLIENTS, data: clientViewSchema },
  { method: 'patch', path: '/api/v1/clients/{id}', id: 'updateClient', summary: 'Change a client (`cashinCallbackUrl: null` removes the callback)', tag: CLIENTS, body: updateClientSchema, errors: [409], data: clientViewSchema },
  { method: 'get', path: '/api/v1/clients/{id}/balance', id: 'getClientBalance', summary: 'The balance summary: totalCashIn - totalCashOut - totalInvoiced', tag: CLIENTS, data: balanceViewSchema },
  { method: 'get', path: '/api/v1/clients/{id}/transactions', id: 'listClientTransactions', summary: "The client's ledger: unlike the other lists, `data.transactions` and `data.pagination` (the real shape)", tag: CLIENTS, query: listTransactionsQuery, data: transactionsViewSchema },
  { method: 'post', path: '/api/v1/clients/{id}/invoices', id: 'createInvoice', summary: 'Create an invoice of the client: `pending`, buyer fields from the client; the amount as `totalAmount` or `total_amount`', tag: CLIENTS, body: createInvoiceSchema, status: 201, errors: [422], data: invoiceViewSchema },
  { method: 'get', path: '/api/v1/clients/{id}/invoices', id: 'listInvoices', summary: "The client's invoices, newest first", tag: CLIENTS, query: listQuery, list: true, data: invoiceViewSchema },
  { method: 'get', path: '/api/v1/clients/{id}/invoices/{invoiceId}', id: 'getInvoice', summary: 'One invoice of the client', tag: CLIENTS, data: invoiceViewSchema },
  { method: 'patch', path: '/api/v1/clients/{id}/invoices/{invoiceId}', id: 'updateInvoice', summary: 'Change an invoice; `paymentStatus: "cancelled"` cancels it (409 once cancelled)', tag: CLIENTS, body: updateInvoiceSchema, errors: [409, 422], data: invoiceViewSchema },

  { method: 'post', path: '/sandbox/v1/transfers', id: 'createTransfer', summary: 'Simulate a bank transfer to a CVU or alias', tag: SANDBOX, body: transferSchema, status: 201, errors: [404], data: transferViewSchema },
  { method: 'get', path: '/sandbox/v1/transfers', id: 'listTransfers', summary: 'Transfers, newest first', tag: SANDBOX, query: listQuery, list: true, data: transferViewSchema },
  { method: 'get', path: '/sandbox/v1/events', id: 'listEvents', summary: 'Every event raised, with its routing and deliveries, newest first', tag: SANDBOX, query: listQuery, list: true, data: eventViewSchema },
  { method: 'get', path: '/sandbox/v1/clock', id: 'getClock', summary: "The account's sandbox clock", tag: SANDBOX, data: clockViewSchema },
  { method: 'post', path: '/sandbox/v1/clock/advance', id: 'advanceClock', summary: 'Move the clock; what falls due runs in time order before the answer', tag: SANDBOX, body: clockAdvanceSchema, data: clockViewSchema },
  { method: 'post', path: '/sandbox/v1/clock/set', id: 'setClock', summary: 'Set the clock to a later time (409 for an earlier one); what falls due runs in time order before the answer', tag: SANDBOX, body: clockSetSchema, errors: [409], data: clockViewSchema },
  { method: 'get', path: '/sandbox/v1/progress', id: 'getProgress', summary: 'The long work under way in the account (a clock move, an import): what, how far, for how long; null when none', tag: SANDBOX, data: progressViewSchema },
  { method: 'get', path: '/sandbox/v1/hubs', id: 'listHubs', summary: 'The payment hubs of the account, by id (each is made on first use)', tag: SANDBOX, query: listQuery, list: true, data: hubViewSchema },
  { method: 'get', path: '/sandbox/v1/hubs/{id}', id: 'getHub', summary: 'A payment hub (made if new and allowed by `--hubs`)', tag: SANDBOX, data: hubViewSchema },
  { method: 'patch', path: '/sandbox/v1/hubs/{id}', id: 'updateHub', summary: "Change a hub's settings (made if new and allowed by `--hubs`)", tag: SANDBOX, body: hubPatchSchema, data: hubViewSchema },
  { method: 'post', path: '/sandbox/v1/clients/{id}/cvu', id: 'setClientCvuStatus', summary: "Move a client's CVU: `provisioning` or `active` for one not provisioned yet, `active` or `disabled`", tag: SANDBOX, body: clientCvuSchema, errors: [409], data: clientViewSchema },
  { method: 'post', path: '/sandbox/v1/clients/{id}/debits', id: 'createDebit', summary: 'A debit entry of -amount', tag: SANDBOX, body: debitSchema, status: 201, data: entryViewSchema },
  { method: 'post', path: '/sandbox/v1/clients/{id}/ledger', id: 'createLedgerEntry', summary: 'A ledger movement: a credit, a debit, a signed adjustment, or the reversal of a credited operation (409 if reversed already)', tag: SANDBOX, body: ledgerEntrySchema, status: 201, errors: [409], data: entryViewSchema },
  { method: 'post', path: '/sandbox/v1/clients/{id}/invoices/{invoiceId}/allocations', id: 'allocateToInvoice', summary: "Apply the client's cash to an invoice: an `invoice_allocation` entry; the invoice turns `partial` or `paid` (409 past what it owes or the cash not yet allocated)", tag: SANDBOX, body: allocationSchema, status: 201, errors: [409], data: entryViewSchema },
  { method: 'post', path: '/sandbox/v1/reset', id: 'resetAccount', summary: 'Clear the account', tag: SANDBOX, data: resetSchema },
  { method: 'get', path: '/sandbox/v1/export', id: 'exportAccount', summary: "The account's whole state as one document (money in cents, as stored)", tag: SANDBOX, data: accountExportSchema, unreadable: true },
  { method: 'post', path: '/sandbox/v1/import', id: 'importAccount', summary: "Replace the account's whole state with an export, held to every rule of the API; the account is then held: its open deliveries, and the callbacks it raises until released (unless forwarded), are `held`, never sent until released (`?dryRun=1`: only check it and count what it holds)", tag: SANDBOX, body: accountExportSchema, query: importQuery, data: importResultSchema },
  { method: 'get', path: '/sandbox/v1/scenario', id: 'recordScenario', summary: "The account's story as a scenario file (`?name=`), which `va-sandbox run` replays on a fresh account", tag: SANDBOX, data: scenarioSchema },

  { method: 'get', path: '/sandbox/v1/deliveries', id: 'listDeliveries', summary: 'The delivery log, newest first', tag: DELIVERIES, query: listDeliveriesQuery, list: true, data: deliveryViewSchema },
  { method: 'get', path: '/sandbox/v1/deliveries/{id}', id: 'getDelivery', summary: 'One delivery with every attempt', tag: DELIVERIES, data: deliveryDetailSchema },
  { method: 'post', path: '/sandbox/v1/deliveries/{id}/redeliver', id: 'redeliver', summary: 'A new delivery of the same event (same eventId); `{"url"}` sends this one delivery there instead', tag: DELIVERIES, body: redeliverSchema, optionalBody: true, status: 201, errors: [409], data: deliveryDetailSchema },
  { method: 'post', path: '/sandbox/v1/deliveries/release', id: 'releaseDeliveries', summary: "Send every `held` delivery (an imported account's) as first attempts, to the forwarding URL if one is set, and end the account's hold: `{released}` counts them", tag: DELIVERIES, data: releasedSchema },
  { method: 'post', path: '/sandbox/v1/deliveries/{id}/release', id: 'releaseDelivery', summary: 'Send one `held` delivery as a first attempt; `{"url"}` sends it there instead (else the forwarding URL, else its own)', tag: DELIVERIES, body: redeliverSchema, optionalBody: true, errors: [409], data: deliveryDetailSchema },
  { method: 'get', path: '/sandbox/v1/forwarding', id: 'getForwarding', summary: "The account's forwarding URL (`url` null: off)", tag: DELIVERIES, data: forwardingViewSchema },
  { method: 'put', path: '/sandbox/v1/forwarding', id: 'setForwarding', summary: 'Send every callback attempt of the account (with `events`, of those event types only) to `url` instead of its configured URL', tag: DELIVERIES, body: forwardingSchema, data: forwardingViewSchema },
  { method: 'delete', path: '/sandbox/v1/forwarding', id: 'deleteForwarding', summary: 'Stop forwarding: callbacks go to their configured URLs again', tag: DELIVERIES, data: forwardingViewSchema },
  { method: 'get', path: '/sandbox/v1/faults', id: 'getFaults', summary: "The account's delivery faults", tag: DELIVERIES, data: faultsSchema },
  { method: 'put', path: '/sandbox/v1/faults', id: 'setFaults', summary: 'Delivery faults: `duplicate` (each 2xx attempt sent once more), `delayMs` (each attempt waits first), `shuffle` (payments and clients not held to raise order); a field left out is off', tag: DELIVERIES, body: faultsSchema, data: faultsSchema },
  { method: 'post', path: '/sandbox/v1/api-faults', id: 'addApiFault', summary: "Add an API fault rule: the account's matching `/api/v1` requests get an error status, a delay, a reset, a hang or a lost answer, the next `times` or with a seeded `probability`; the first rule that matches applies", tag: SANDBOX, body: apiFaultRuleSchema, status: 201, errors: [409], data: apiFaultRuleViewSchema },
  { method: 'get', path: '/sandbox/v1/api-faults', id: 'listApiFaults', summary: "The account's API fault rules, in the order they apply (the order added), with their hits", tag: SANDBOX, query: listQuery, list: true, data: apiFaultRuleViewSchema },
  { method: 'delete', path: '/sandbox/v1/api-faults', id: 'clearApiFaults', summary: 'Remove every API fault rule of the account', tag: SANDBOX, data: apiFaultsClearedSchema },
  { method: 'delete', path: '/sandbox/v1/api-faults/{id}', id: 'deleteApiFault', summary: 'Remove one API fault rule (the answer is the rule as it was)', tag: SANDBOX, data: apiFaultRuleViewSchema },
  { method: 'get', path: '/sandbox/v1/stream', id: 'stream', summary: 'Server-sent events: `event`, `transfer` and `delivery` messages of the account, live (and `forwarding` and `apiFaults` when those change)', tag: DELIVERIES, produces: 'text/event-stream' },
];

/** JSON Schema 2020-12 (OpenAPI 3.1's dialect) of what a request may send (`input`) or an answer holds (`output`). */
const schemaOf = (schema: z.ZodType, io: 'input' | 'output' = 'input'): Record<string, unknown> => {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  return rest;
};

/** The answers' schemas by their name in `components.schemas`, which `openapi-typescript` and others name types by. */
const NAMED = new Map<z.ZodType, string>([
  [vaPaymentObjectSchema, 'VaPayment'],
  [clientViewSchema, 'Client'],
  [transferViewSchema, 'Transfer'],
  [deliveryViewSchema, 'Delivery'],
  [deliveryDetailSchema, 'DeliveryDetail'],
  [eventViewSchema, 'Event'],
  [entryViewSchema, 'Entry'],
  [invoiceViewSchema, 'Invoice'],
  [balanceViewSchema, 'Balance'],
  [hubViewSchema, 'Hub'],
  [clockViewSchema, 'Clock'],
  [progressViewSchema, 'Progress'],
  [transactionsViewSchema, 'Transactions'],
  [forwardingViewSchema, 'Forwarding'],
  [faultsSchema, 'Faults'],
  [releasedSchema, 'Released'],
  [apiFaultRuleViewSchema, 'ApiFaultRule'],
  [apiFaultsClearedSchema, 'ApiFaultsCleared'],
  [resetSchema, 'Reset'],
  [importResultSchema, 'ImportResult'],
  [accountExportSchema, 'AccountExport'],
  [scenarioSchema, 'Scenario'],
  [healthSchema, 'Health'],
  [paginationSchema, 'Pagination'],
]);

const ref = (schema: z.ZodType) => ({ $ref: `#/components/schemas/${NAMED.get(schema)}` });
const exampleOf = (schema: z.ZodType) => EXAMPLES[NAMED.get(schema)!];

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not found',
  405: 'Method not allowed',
  409: 'Conflict',
  413: 'Payload too large',
  415: 'Unsupported media type',
  422: 'Unprocessable',
  429: 'Too many requests',
  500: 'Internal error',
  502: 'Bad gateway (an API fault rule)',
  503: 'Service unavailable (an API fault rule)',
  504: 'Gateway timeout (an API fault rule)',
  507: 'Insufficient storage',
};

/** The example error of each status. */
const ERROR_EXAMPLES: Record<number, [code: ErrorCode, message: string, details: string[]]> = {
  400: ['VALIDATION_ERROR', 'Invalid request body: amount: Too small: expected number to be >0', ['amount: Too small: expected number to be >0']],
  401: ['UNAUTHORIZED', 'Missing API key: send Authorization: Bearer <key>', []],
  403: ['HOST_NOT_ALLOWED', 'Host evil.example is not allowed: use a loopback address or start with --allowed-host', []],
  404: ['NOT_FOUND', 'VA payment 6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b not found', []],
  405: ['METHOD_NOT_ALLOWED', 'DELETE is not allowed on /api/v1/va-payments', []],
  409: ['INVALID_STATE', 'VA payment 6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b is completed: only a waiting or underpaid one can be cancelled', []],
  413: ['PAYLOAD_TOO_LARGE', 'Request body is larger than 1 MiB', []],
  415: ['UNSUPPORTED_MEDIA_TYPE', 'Content-Type must be application/json, got text/plain', []],
  422: ['UNSUPPORTED_CURRENCY', 'Currency USD is not supported: only ARS', []],
  429: ['RATE_LIMIT_EXCEEDED', 'Rate limit of 6000 requests per minute exceeded', []],
  500: ['INTERNAL_ERROR', 'Internal error', []],
  502: ['BAD_GATEWAY', 'sandbox API fault 3d4e5f60-7a8b-4c9d-8e0f-1a2b3c4d5e6f', []],
  503: ['SERVICE_UNAVAILABLE', 'sandbox API fault 3d4e5f60-7a8b-4c9d-8e0f-1a2b3c4d5e6f', []],
  504: ['GATEWAY_TIMEOUT', 'sandbox API fault 3d4e5f60-7a8b-4c9d-8e0f-1a2b3c4d5e6f', []],
  507: ['INSUFFICIENT_STORAGE', 'The write could not be stored: nothing of it was kept', []],
};

/** The error envelope of one status, its `code` narrowed to the contract's codes of that status. */
function errorResponse(status: number) {
  const codes = (Object.keys(errorStatus) as ErrorCode[]).filter((code) => errorStatus[code] === status);
  const envelope = z.strictObject({
    success: z.literal(false),
    error: z.strictObject({
      code: z.enum(codes as [ErrorCode, ...ErrorCode[]]),
      message: z.string(),
      details: z.array(z.string()).describe('One "field: problem" per bad field'),
    }),
    timestamp: z.iso.datetime(),
    path: z.string(),
  });
  const [code, message, details] = ERROR_EXAMPLES[status]!;
  const example = { success: false, error: { code, message, details }, timestamp: '2026-03-02T14:05:09.120Z', path: '/api/v1/va-payments' };
  return {
    description: `${STATUS_TEXT[status]}: ${codes.join(', ')}`,
    ...(status === 429 ? { headers: { 'Retry-After': { description: 'Seconds to wait', schema: { type: 'integer' } } } } : {}),
    content: { 'application/json': { schema: schemaOf(envelope, 'output'), example } },
  };
}

/** On every `/api/v1` answer: the real API's per-minute rate limit. */
const rateLimitHeaders = {
  'X-RateLimit-Limit': { description: 'Requests allowed per minute for this API key', schema: { type: 'integer' } },
  'X-RateLimit-Remaining': { description: 'Requests left in the current minute', schema: { type: 'integer' } },
  'X-RateLimit-Reset': { description: 'When the minute ends, in epoch seconds', schema: { type: 'integer' } },
};

const EXAMPLE_TIME = '2026-03-02T14:07:41.503Z';

/** The success envelope of an operation: `data` its answer (a list: the page's items, `pagination` beside them), and an example. */
function successContent(op: Operation) {
  if (op.produces === 'text/event-stream') return { 'text/event-stream': { schema: { type: 'string' } } };
  if (op.produces === 'raw-json') return { 'application/json': op.data ? { schema: ref(op.data), example: exampleOf(op.data) } : { schema: { type: 'object' } } };
  const data = op.list ? { type: 'array', items: ref(op.data!) } : ref(op.data!);
  const example = exampleOf(op.data!);
  const schema = {
    type: 'object',
    required: ['success', 'data', ...(op.list ? ['pagination'] : []), ...(op.message ? ['message'] : []), 'timestamp'],
    properties: {
      success: { const: true },
      data,
      ...(op.list ? { pagination: ref(paginationSchema) } : {}),
      ...(op.message ? { message: { type: 'string' } } : {}),
      ...(op.unreadable ? { unreadable: { type: 'array', items: { type: 'string' }, description: 'Records that could not be read (`<table> <id>`), left out' } } : {}),
      timestamp: { type: 'string', format: 'date-time' },
    },
    additionalProperties: false,
  };
  return {
    'application/json': {
      schema,
      ...(example === undefined
        ? {}
        : {
            example: {
              success: true,
              data: op.list ? [example] : example,
              ...(op.list ? { pagination: { page: 1, limit: 20, total: 1, totalPages: 1 } } : {}),
              ...(op.message ? { message: 'VA payment cancelled' } : {}),
              timestamp: EXAMPLE_TIME,
            },
          }),
    },
  };
}

/** Whether an operation writes to the state database, so a full disk answers it 507. */
const stores = (op: Operation) => !op.public && (op.method !== 'get' || op.id === 'getHub');

function operationObject(op: Operation) {
  const pathParams = [...op.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
  const parameters = [
    ...pathParams.map((name) => ({
      name,
      in: 'path',
      required: true,
      schema: op.path.startsWith('/sandbox/v1/hubs/') ? { type: 'integer', minimum: 1 } : { type: 'string', format: 'uuid' },
    })),
    ...Object.entries((op.query ? schemaOf(op.query).properties : {}) as Record<string, Record<string, unknown>>).map(([name, schema]) => ({
      name,
      in: 'query',
      required: false,
      schema,
    })),
  ];
  // The Host guard answers every route, `/health` too.
  const errors = new Set<number>([403, ...(op.errors ?? [])]);
  if (!op.public) for (const status of [401, 405, 429, 500]) errors.add(status);
  // What an API fault rule may answer an `/api/v1` request with (contract part 7).
  if (op.path.startsWith('/api/v1/')) for (const status of [502, 503, 504]) errors.add(status);
  if (stores(op)) errors.add(507);
  // A write without a body still refuses one (`{}` aside) and malformed JSON; a hub's id in a path must be a positive integer.
  if (op.body || op.query || op.method !== 'get' || op.path.includes('/hubs/{')) errors.add(400);
  if (op.body) for (const status of [413, 415]) errors.add(status);
  if (pathParams.length) errors.add(404);
  return {
    operationId: op.id,
    summary: op.summary,
    tags: [op.tag],
    ...(op.public ? { security: [] } : {}),
    ...(parameters.length ? { parameters } : {}),
    ...(op.body ? { requestBody: { required: !op.optionalBody, content: { 'application/json': { schema: schemaOf(op.body) } } } } : {}),
    responses: {
      [String(op.status ?? 200)]: { description: 'Success', ...(op.path.startsWith('/api/v1/') ? { headers: rateLimitHeaders } : {}), content: successContent(op) },
      ...Object.fromEntries([...errors].sort().map((status) => [String(status), { $ref: `#/components/responses/Error${status}` }])),
    },
  };
}

/**
 * `webhooks`: each callback the sandbox sends (the seven VA events and `client.cashin`), its body's schema made from
 * the zod schema the tests parse every received body with, its headers and an example.
 */
function webhooks() {
  return Object.fromEntries(
    EVENT_TYPES.map((eventType) => {
      const { sent, routed } = CALLBACK_REFERENCE[eventType];
      const example = CALLBACK_EXAMPLES[eventType] as { eventId: string };
      const headers = Object.entries(callbackHeaders({ id: example.eventId, eventType }))
        .filter(([name]) => name !== 'Content-Type')
        .map(([name, value]) => ({ name, in: 'header', required: true, schema: name === 'X-Service-Event-Id' ? { type: 'string', format: 'uuid' } : { const: value }, example: value }));
      const { $schema: _dialect, ...schema } = z.toJSONSchema(CALLBACK_SCHEMAS[eventType], { io: 'output' }) as Record<string, unknown>;
      const operation = {
        operationId: `callback_${eventType.replace('.', '_')}`,
        summary: `${eventType}: sent when ${sent}`,
        description:
          `Sent when ${sent}. Goes to ${routed}. A POST with this JSON body; a 2xx answer confirms it, anything else is ` +
          'retried (3 attempts, 5 s and 25 s apart by the sandbox clock) with the same eventId: deduplicate by it.',
        tags: ['Callbacks'],
        parameters: headers,
        requestBody: { required: true, content: { 'application/json': { schema, example } } },
        responses: { '200': { description: 'Any 2xx confirms the delivery; answer fast and do the work after' } },
      };
      return [eventType, { post: operation }];
    }),
  );
}

const built = new Map<string, Record<string, unknown>>();

/** The document, built once per version: the schemas do not change while the process runs. */
export function openApiDocument(version: string): Record<string, unknown> {
  const cached = built.get(version);
  if (cached) return cached;
  const doc = {
    openapi: '3.1.0',
    info: {
      title: 'va-sandbox',
      version,
      description: 'Local sandbox of the Argentine virtual-account payments and clients API. Every Bearer key is an isolated account.',
    },
    servers: [{ url: '/' }],
    security: [{ bearer: [] }],
    tags: [PAYMENTS, CLIENTS, SANDBOX, DELIVERIES, SERVICE, 'Callbacks'].map((name) => ({ name })),
    paths: OPERATIONS.reduce<Record<string, Record<string, unknown>>>((paths, op) => {
      (paths[op.path] ??= {})[op.method] = operationObject(op);
      return paths;
    }, {}),
    webhooks: webhooks(),
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'Any non-empty key; each key is its own account' } },
      schemas: Object.fromEntries([...NAMED].map(([schema, name]) => [name, schemaOf(schema, 'output')])),
      responses: Object.fromEntries(
        [...new Set(Object.values(errorStatus))].sort().map((status) => [`Error${status}`, errorResponse(status)]),
      ),
    },
  };
  built.set(version, doc);
  return doc;
}
