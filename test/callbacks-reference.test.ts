import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { CALLBACK_SCHEMAS, EVENT_TYPES } from '../src/core/index.js';
import {
  type ClientCashinCallback,
  clientCashinCallbackSchema,
  type VaCallback,
  vaCallbackSchema,
} from '../src/index.js';
import { api, CLIENT, PAYMENT, ROOT, useReceiver, useServer } from './helpers.js';

const server = await useServer();

/** What a handler written against the package's types reads: the union narrows by `eventType` (type-checked). */
function summary(callback: VaCallback | ClientCashinCallback): string {
  switch (callback.eventType) {
    case 'created':
    case 'cancelled':
    case 'failed':
      return `${callback.eventType} ${callback.payload.status} until ${callback.payload.expiresAt}`;
    case 'client.cashin':
      return `cash-in ${callback.amount} to ${callback.alias}`;
    default:
      return `${callback.eventType} ${callback.payload.total} (${callback.payload.remainingAmount} left)`;
  }
}

describe('the callback reference (contract part 4)', () => {
  it('the OpenAPI document, valid, has eight webhooks (the seven VA events and client.cashin), each with schema, headers and an example that parses with its schema', async () => {
    const doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as any;
    const result = await new Validator().validate(doc);
    expect(result.errors).toBeUndefined();
    expect(Object.keys(doc.webhooks)).toEqual(EVENT_TYPES);
    for (const eventType of EVENT_TYPES) {
      const hook = doc.webhooks[eventType].post;
      const body = hook.requestBody.content['application/json'];
      expect(body.schema.properties.eventType).toEqual({ type: 'string', const: eventType });
      expect(body.schema.additionalProperties).toBe(false);
      expect(CALLBACK_SCHEMAS[eventType].safeParse(body.example).error).toBeUndefined();
      expect(body.example.eventType).toBe(eventType);
      const headers = Object.fromEntries(hook.parameters.map((p: any) => [p.name, p]));
      expect(Object.keys(headers)).toEqual(['User-Agent', 'X-Service-Event-Id', 'X-Service-Event-Type']);
      expect(headers['User-Agent'].schema.const).toBe(
        eventType === 'client.cashin' ? 'Service-Client-Callback/1.0' : 'Service-VA-Callback/1.0',
      );
      expect(headers['X-Service-Event-Type'].schema.const).toBe(eventType);
      expect(headers['X-Service-Event-Id'].example).toBe(body.example.eventId);
      expect(hook.description).toMatch(/^Sent when .*\. Goes to /);
    }
    expect(summary(doc.webhooks.succeeded.post.requestBody.content['application/json'].example)).toBe(
      'succeeded 5000 (0 left)',
    );
  });

  it('every body a receiver gets parses with its schema (strict: a field the schema lacks fails), for all eight kinds', async () => {
    const receiver = await useReceiver();
    const client = api(server.url, 'sk_callback_reference');
    const callbackUrl = `${receiver.url}/va`;
    const create = (body: object) => client.data('POST', '/api/v1/va-payments', { ...PAYMENT, callbackUrl, ...body });
    const partial = await create({ amount: 100 });
    await client.data('POST', '/sandbox/v1/transfers', { to: partial.cvu, total: 40 });
    await client.data('POST', '/sandbox/v1/transfers', { to: partial.cvu, total: 80, taxes: 1.5 });
    const exact = await create({ amount: 50, clientTaxId: '20-1' });
    await client.data('POST', '/sandbox/v1/transfers', { to: exact.cvu, total: 50 });
    const cancelled = await create({ amount: 70 });
    await client.data('POST', `/api/v1/va-payments/${cancelled.id}/cancel`);
    await create({ ttlSeconds: 30 });
    await client.data('POST', '/sandbox/v1/clock/advance', { seconds: 30 });
    const buyer = await client.data('POST', '/api/v1/clients', {
      ...CLIENT,
      name: 'Ana',
      taxId: '20-2',
      cashinCallbackUrl: `${receiver.url}/client`,
    });
    await client.data('POST', '/sandbox/v1/transfers', { to: buyer.alias, total: 12, taxes: 0.3 });

    const got = await receiver.waitFor(13);
    expect(new Set(got.map((r) => r.body.eventType))).toEqual(new Set(EVENT_TYPES));
    for (const request of got) {
      const schema = request.body.eventType === 'client.cashin' ? clientCashinCallbackSchema : vaCallbackSchema;
      const parsed = schema.safeParse(request.body);
      expect({ eventType: request.body.eventType, issues: parsed.error?.issues }).toEqual({
        eventType: request.body.eventType,
        issues: undefined,
      });
      expect(summary(parsed.data!)).toMatch(/^\S+ /);
    }
  });

  it.each([
    ['README.md', /^## Point your own handler at it\n([^]*?)^## /m, ['succeeded', 'client.cashin']],
    [
      'docs/callbacks.md',
      /^## What the sandbox POSTs\n([^]*?)^Every event gets a delivery/m,
      ['created', 'succeeded', 'client.cashin'],
    ],
  ] as const)('the example bodies of %s parse with their schemas', (file, at, kinds) => {
    const section = at.exec(readFileSync(join(ROOT, file), 'utf8'))![1]!;
    const bodies = [...section.matchAll(/^```json\n([^]*?)^```/gm)].map((match) => JSON.parse(match[1]!));
    expect(bodies.map((body) => body.eventType)).toEqual(kinds);
    for (const body of bodies)
      expect(CALLBACK_SCHEMAS[body.eventType as 'created'].safeParse(body).error).toBeUndefined();
  });
});
