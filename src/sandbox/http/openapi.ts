/**
 * `GET /openapi.json`: an OpenAPI 3.1 document of every endpoint, its request bodies and query parameters made
 * from the very zod schemas that validate the requests, and the error envelope of every status it can answer.
 */
import { errorStatus } from '../../core/conventions/errors.js';
import { errorResponse } from './openapi-errors.js';
import { TAGS } from './openapi-operation.js';
import { operationObject } from './openapi-operation-object.js';
import { OPERATIONS } from './openapi-operations.js';
import { NAMED, schemaOf } from './openapi-schemas.js';
import { webhooks } from './openapi-webhooks.js';

export { OPERATIONS };

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
