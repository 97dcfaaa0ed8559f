import { z } from 'zod';
import { accountExportSchema } from '../../core/account-export/account-export.js';
import { apiFaultRuleViewSchema, apiFaultsClearedSchema } from '../../core/api-faults/api-faults.js';
import { CALLBACK_EXAMPLES, CALLBACK_REFERENCE, CALLBACK_SCHEMAS } from '../../core/callbacks/callbacks.js';
import { callbackHeaders } from '../../core/callbacks/deliveries.js';
import { faultsSchema } from '../../core/callbacks/delivery-settings.js';
import { type ErrorCode, errorStatus } from '../../core/conventions/errors.js';
import { triggerViewSchema } from '../../core/records/index.js';
import { journalItemSchema, requestsClearedSchema } from '../../core/records/request-journal.js';
import { EVENT_TYPES } from '../../core/records/state.js';
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
} from '../../core/records/views.js';
import { scenarioSchema } from '../../core/scenarios/scenario.js';
import { progressViewSchema } from '../runtime/progress.js';
import { EXAMPLES } from './openapi-examples.js';

import { OPERATIONS, type Operation, TAGS } from './openapi-operations.js';

export { OPERATIONS };

/**
 * `GET /openapi.json`: an OpenAPI 3.1 document of every endpoint, its request bodies and query parameters made
 * from the very zod schemas that validate the requests, and the error envelope of every status it can answer.
 */

/** JSON Schema 2020-12 (OpenAPI 3.1's dialect) of what a request may send (`input`) or an answer holds (`output`). */
const schemaOf = (schema: z.ZodType, io: 'input' | 'output' = 'input'): Record<string, unknown> => {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<
    string,
    unknown
  >;
  return rest;
};

/** The answers' schemas by their name in `components.schemas`, which `openapi-typescript` and others name types by. */
const NAMED = new Map<z.ZodType, string>([
  [vaPaymentObjectSchema, 'VaPayment'],
  [clientViewSchema, 'Client'],
  [transferViewSchema, 'Transfer'],
  [triggerViewSchema, 'Trigger'],
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
  [journalItemSchema, 'JournalRequest'],
  [requestsClearedSchema, 'RequestsCleared'],
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
  400: [
    'VALIDATION_ERROR',
    'Invalid request body: amount: Too small: expected number to be >0',
    ['amount: Too small: expected number to be >0'],
  ],
  401: ['UNAUTHORIZED', 'Missing API key: send Authorization: Bearer <key>', []],
  403: [
    'HOST_NOT_ALLOWED',
    'Host evil.example is not allowed: use a loopback address or start with --allowed-host',
    [],
  ],
  404: ['NOT_FOUND', 'VA payment 6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b not found', []],
  405: ['METHOD_NOT_ALLOWED', 'DELETE is not allowed on /api/v1/va-payments', []],
  409: [
    'INVALID_STATE',
    'VA payment 6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b is completed: only a waiting or underpaid one can be cancelled',
    [],
  ],
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
  const example = {
    success: false,
    error: { code, message, details },
    timestamp: '2026-03-02T14:05:09.120Z',
    path: '/api/v1/va-payments',
  };
  return {
    description: `${STATUS_TEXT[status]}: ${codes.join(', ')}`,
    ...(status === 429
      ? { headers: { 'Retry-After': { description: 'Seconds to wait', schema: { type: 'integer' } } } }
      : {}),
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
  if (op.produces === 'raw-json')
    return {
      'application/json': op.data
        ? { schema: ref(op.data), example: exampleOf(op.data) }
        : { schema: { type: 'object' } },
    };
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
      ...(op.unreadable
        ? {
            unreadable: {
              type: 'array',
              items: { type: 'string' },
              description: 'Records that could not be read (`<table> <id>`), left out',
            },
          }
        : {}),
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
      schema: op.path.startsWith('/sandbox/v1/hubs/')
        ? { type: 'integer', minimum: 1 }
        : { type: 'string', format: 'uuid' },
    })),
    ...Object.entries((op.query ? schemaOf(op.query).properties : {}) as Record<string, Record<string, unknown>>).map(
      ([name, schema]) => ({
        name,
        in: 'query',
        required: false,
        schema,
      }),
    ),
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
    ...(op.body
      ? { requestBody: { required: !op.optionalBody, content: { 'application/json': { schema: schemaOf(op.body) } } } }
      : {}),
    responses: {
      [String(op.status ?? 200)]: {
        description: 'Success',
        ...(op.path.startsWith('/api/v1/') ? { headers: rateLimitHeaders } : {}),
        content: successContent(op),
      },
      ...Object.fromEntries(
        [...errors].sort().map((status) => [String(status), { $ref: `#/components/responses/Error${status}` }]),
      ),
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
        .map(([name, value]) => ({
          name,
          in: 'header',
          required: true,
          schema: name === 'X-Service-Event-Id' ? { type: 'string', format: 'uuid' } : { const: value },
          example: value,
        }));
      const { $schema: _dialect, ...schema } = z.toJSONSchema(CALLBACK_SCHEMAS[eventType], { io: 'output' }) as Record<
        string,
        unknown
      >;
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
      description:
        'Local sandbox of the Argentine virtual-account payments and clients API. Every Bearer key is an isolated account.',
    },
    servers: [{ url: '/' }],
    security: [{ bearer: [] }],
    tags: [...TAGS, 'Callbacks'].map((name) => ({ name })),
    paths: OPERATIONS.reduce<Record<string, Record<string, unknown>>>((paths, op) => {
      (paths[op.path] ??= {})[op.method] = operationObject(op);
      return paths;
    }, {}),
    webhooks: webhooks(),
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'Any non-empty key; each key is its own account' },
      },
      schemas: Object.fromEntries([...NAMED].map(([schema, name]) => [name, schemaOf(schema, 'output')])),
      responses: Object.fromEntries(
        [...new Set(Object.values(errorStatus))].sort().map((status) => [`Error${status}`, errorResponse(status)]),
      ),
    },
  };
  built.set(version, doc);
  return doc;
}
