import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { WEB_UI_PATHS } from '../src/sandbox/http/web-ui.js';
import { useServer } from './helpers.js';

const server = await useServer();
const fetchDoc = async () => {
  const response = await fetch(`${server.url}/openapi.json`);
  return { status: response.status, doc: (await response.json()) as any };
};

describe('GET /openapi.json', () => {
  it('answers without an API key with an OpenAPI 3.1 document a real validator accepts', async () => {
    const { status, doc } = await fetchDoc();
    expect(status).toBe(200);
    expect(doc.openapi).toBe('3.1.0');
    const result = await new Validator().validate(doc);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
  });

  it('documents every route the app serves, with its method', async () => {
    const { doc } = await fetchDoc();
    // The web inspector's page and assets are served beside the API, not part of it.
    const routes = server.app.routes.filter(
      (route) => route.method !== 'ALL' && !(WEB_UI_PATHS as readonly string[]).includes(route.path),
    );
    expect(routes.length).toBeGreaterThan(30);
    const missing = routes
      .map((route) => ({ method: route.method.toLowerCase(), path: route.path.replace(/:(\w+)/g, '{$1}') }))
      .filter(({ method, path }) => doc.paths[path]?.[method] === undefined)
      .map(({ method, path }) => `${method} ${path}`);
    expect(missing).toEqual([]);
  });

  it('describes request bodies with the schemas that validate them (input side: ARS numbers, defaults)', async () => {
    const { doc } = await fetchDoc();
    const create = doc.paths['/api/v1/va-payments'].post.requestBody.content['application/json'].schema;
    expect(create.properties.lockMode).toMatchObject({ enum: ['time', 'amount', 'amount_and_time'] });
    expect(create.required).toEqual(expect.arrayContaining(['paymentHubId', 'currency', 'lockMode']));
    expect(create.properties.ttlSeconds).toMatchObject({ type: 'integer', minimum: 1, maximum: 28800, default: 1800 });
    expect(create.additionalProperties).toBe(false);
    const list = doc.paths['/api/v1/va-payments'].get.parameters.map((p: any) => p.name);
    expect(list).toEqual(expect.arrayContaining(['page', 'limit', 'status', 'clientId', 'createdFrom', 'createdTo']));
    const imported = doc.paths['/sandbox/v1/import'].post.requestBody.content['application/json'].schema;
    expect(imported.properties.format).toMatchObject({ const: 'va-sandbox-account' });
  });

  it("documents the error envelope of every status the contract's codes use", async () => {
    const { doc } = await fetchDoc();
    for (const status of [400, 401, 404, 405, 409, 413, 415, 422, 429, 500]) {
      const envelope = doc.components.responses[`Error${status}`].content['application/json'].schema;
      expect(envelope.required).toEqual(expect.arrayContaining(['success', 'error', 'timestamp', 'path']));
    }
    expect(
      doc.components.responses.Error409.content['application/json'].schema.properties.error.properties.code.enum,
    ).toEqual(['INVALID_STATE', 'TAX_ID_ALREADY_EXISTS', 'AMOUNT_LOCK_CONFLICT', 'IDEMPOTENCY_KEY_CONFLICT']);
    const cancel = doc.paths['/api/v1/va-payments/{id}/cancel'].post.responses;
    expect(Object.keys(cancel)).toEqual(expect.arrayContaining(['200', '401', '404', '409']));
  });

  it('names 403 and 507: every operation can answer 403 (the Host guard), every write 507 (a write not stored)', async () => {
    const { doc } = await fetchDoc();
    expect(doc.components.responses.Error403.description).toBe('Forbidden: HOST_NOT_ALLOWED');
    expect(doc.components.responses.Error507.description).toBe('Insufficient storage: INSUFFICIENT_STORAGE');
    expect(Object.keys(doc.paths['/health'].get.responses)).toEqual(['200', '403']);
    expect(Object.keys(doc.paths['/api/v1/va-payments'].post.responses)).toContain('507');
    expect(Object.keys(doc.paths['/sandbox/v1/hubs/{id}'].get.responses)).toContain('507');
    expect(Object.keys(doc.paths['/api/v1/va-payments'].get.responses)).not.toContain('507');
  });

  it('types every answer: the VA payment object, a list of clients beside its pagination, each with an example', async () => {
    const { doc } = await fetchDoc();
    const created = doc.paths['/api/v1/va-payments'].post.responses['201'].content['application/json'];
    expect(created.schema.properties.data).toEqual({ $ref: '#/components/schemas/VaPayment' });
    expect(created.example.data.paymentInstructions.holderName).toBe('Sandbox Payments S.A.');
    const clients = doc.paths['/api/v1/clients'].get.responses['200'].content['application/json'];
    expect(clients.schema.properties.data).toEqual({ type: 'array', items: { $ref: '#/components/schemas/Client' } });
    expect(clients.schema.required).toEqual(['success', 'data', 'pagination', 'timestamp']);
    expect(doc.components.schemas.VaPayment.properties.status.enum).toEqual([
      'waiting',
      'underpaid',
      'completed',
      'overpaid',
      'expired',
      'cancelled',
    ]);
    expect(doc.components.schemas.Success).toBeUndefined();
  });
});
