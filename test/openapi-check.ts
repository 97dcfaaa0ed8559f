import { Ajv2020 } from 'ajv/dist/2020.js';
import { openApiDocument } from '../src/sandbox/http/openapi.js';

/**
 * The OpenAPI document, and whether an answer matches it: the schema the document gives for its method, path and
 * status. `api()` (helpers.ts) checks every answer of the whole suite with it; `openapi-responses.test.ts` drives every
 * operation.
 */
export const doc = openApiDocument('0.0.0') as any;

// Formats are not checked: zod's schemas carry a pattern beside each (date-time) where it matters.
const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
ajv.addSchema(doc, 'openapi');

const pointer = (...segments: string[]) =>
  segments.map((segment) => segment.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');
// Literal paths first: `/sandbox/v1/deliveries/release` before `/sandbox/v1/deliveries/{id}`.
const templates = Object.keys(doc.paths)
  .sort((a, b) => (a.match(/\{/g)?.length ?? 0) - (b.match(/\{/g)?.length ?? 0))
  .map((template) => ({ template, pattern: new RegExp(`^${template.replace(/\{\w+\}/g, '[^/]+')}$`) }));
export const templateOf = (url: string) =>
  templates.find((t) => t.pattern.test(new URL(url, 'http://x').pathname))?.template;

/** What is wrong with an answer by the document, or null when it matches. */
export function mismatch(method: string, url: string, status: number, body: unknown): string | null {
  const template = templateOf(url);
  if (!template) return `${method} ${url} is not in the document`;
  // A method the path does not have is answered 405, with the envelope every operation documents.
  const operation = doc.paths[template][method.toLowerCase()] ?? {
    responses: { '405': { $ref: '#/components/responses/Error405' } },
  };
  let response = operation.responses[String(status)];
  if (!response) return `${method} ${template} answered ${status}, which the document does not list`;
  const where = response.$ref
    ? response.$ref.slice(1)
    : `/${pointer('paths', template, method.toLowerCase(), 'responses', String(status))}`;
  if (response.$ref) response = doc.components.responses[response.$ref.split('/').at(-1)];
  if (!response.content?.['application/json']) return null;
  const validate = ajv.getSchema(`openapi#${where}/content/${pointer('application/json')}/schema`)!;
  if (validate(body)) return null;
  return `${method} ${template} ${status}: ${ajv.errorsText(validate.errors, { separator: '; ' })}`;
}
