/** One operation of the OpenAPI document as its path item holds it: parameters, request body, success and error answers. */
import { paginationSchema } from '../../core/records/views.js';
import type { Operation } from './openapi-operation.js';
import { exampleOf, ref, schemaOf } from './openapi-schemas.js';

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

export function operationObject(op: Operation) {
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
