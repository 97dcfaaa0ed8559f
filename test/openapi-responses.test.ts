import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import openapiTS, { astToString } from 'openapi-typescript';
import { describe, expect, it } from 'vitest';
import { OPERATIONS } from '../src/sandbox/http/openapi.js';
import { api, CLIENT, incidentWithOpenDeliveries, PAYMENT, ROOT, useReceiver, useServer, useTmp } from './helpers.js';
import { doc, mismatch, templateOf } from './openapi-check.js';

/**
 * Every answer of the API matches the OpenAPI document: traffic through every operation (successes and errors) is
 * checked, each response body against the schema the document gives for its method, path and status. A status the
 * document does not list fails too.
 */
const server = await useServer();
const limited = await useServer({ rateLimit: 1 });
const served = (await (await fetch(`${server.url}/openapi.json`)).json()) as any;

const seen = new Set<string>();
const problems: string[] = [];

/** A client of the API whose every answer is checked against the document. */
function checked(baseUrl: string, key = 'sk_openapi') {
  const client = api(baseUrl, key);
  const call: typeof client.call = async (method, path, body, headers) => {
    const response = await client.call(method, path, body, headers);
    const problem = mismatch(method, path, response.status, response.body);
    if (problem) problems.push(problem);
    seen.add(`${method.toLowerCase()} ${templateOf(path)} ${response.status}`);
    return response;
  };
  /** `data` of an answer that must be a success. */
  const data = async (method: string, path: string, body?: unknown) => {
    const response = await call(method, path, body);
    expect(response.status, JSON.stringify(response.body)).toBeLessThan(300);
    return response.body.data;
  };
  return { call, data };
}

describe('every answer matches the OpenAPI document', () => {
  it('is checked against the document the server serves (every answer of the suite is, in helpers.ts `api()`)', () => {
    expect(served).toEqual(doc);
  });

  it('rejects an answer that does not match its schema (the check can fail)', () => {
    const payment =
      doc.components.schemas.VaPayment.example ??
      doc.paths['/api/v1/va-payments/{id}'].get.responses['200'].content['application/json'].example.data;
    const envelope = { success: true, data: payment, timestamp: '2026-03-02T14:05:09.120Z' };
    expect(mismatch('GET', `/api/v1/va-payments/${payment.id}`, 200, envelope)).toBeNull();
    expect(
      mismatch('GET', `/api/v1/va-payments/${payment.id}`, 200, { ...envelope, data: { ...payment, amount: '5000' } }),
    ).toMatch(/amount/);
    expect(
      mismatch('GET', `/api/v1/va-payments/${payment.id}`, 200, { ...envelope, data: { ...payment, extra: 1 } }),
    ).toMatch(/additional/);
    expect(mismatch('GET', '/api/v1/va-payments', 200, envelope)).toMatch(/pagination|array/);
    expect(mismatch('POST', '/api/v1/va-payments', 418, {})).toMatch(/does not list/);
    expect(
      mismatch('POST', '/api/v1/va-payments', 409, {
        success: false,
        error: { code: 'NOT_FOUND', message: '', details: [] },
        timestamp: envelope.timestamp,
        path: '/',
      }),
    ).toMatch(/allowed values/);
  });

  it("gives every example in the document its own response's schema", () => {
    for (const [template, methods] of Object.entries<any>(doc.paths)) {
      for (const [method, operation] of Object.entries<any>(methods)) {
        for (const [status, response] of Object.entries<any>(operation.responses)) {
          const content = (response.$ref ? doc.components.responses[response.$ref.split('/').at(-1)] : response)
            .content;
          const json = content?.['application/json'];
          if (!json || (json.schema.type === 'object' && !json.schema.properties)) continue;
          expect(json.example, `${method} ${template} ${status}`).toBeDefined();
          const problem = mismatch(method.toUpperCase(), template, Number(status), json.example);
          expect(problem).toBeNull();
        }
      }
    }
  });

  it('checks traffic through every operation, successes and errors', async () => {
    const receiver = await useReceiver();
    const { call, data } = checked(server.url);
    await call('GET', '/health');
    await call('GET', '/scenario.schema.json');

    // VA payments
    const payment = await data('POST', '/api/v1/va-payments', {
      ...PAYMENT,
      amount: 100,
      lockMode: 'amount_and_time',
      callbackUrl: receiver.url,
      metadata: { order: 1 },
    });
    await data('POST', '/api/v1/va-payments', { ...PAYMENT, callbackUrl: `${receiver.url}/open` });
    await call('POST', '/api/v1/va-payments', { ...PAYMENT, lockMode: 'amount', amount: 77 });
    await call('POST', '/api/v1/va-payments', { ...PAYMENT, lockMode: 'amount', amount: 77 });
    await call('POST', '/api/v1/va-payments', { ...PAYMENT, currency: 'USD' });
    await call('POST', '/api/v1/va-payments', { ...PAYMENT, amount: -1, typo: true });
    await call('POST', '/api/v1/va-payments', '{"nope', { 'content-type': 'application/json' });
    await call('POST', '/api/v1/va-payments', 'x=1', { 'content-type': 'text/plain' });
    await call(
      'POST',
      '/api/v1/va-payments',
      JSON.stringify({ ...PAYMENT, metadata: { big: 'x'.repeat(1_100_000) } }),
      { 'content-type': 'application/json' },
    );
    await call('DELETE', '/api/v1/va-payments');
    await call('GET', '/api/v1/va-payments?status=waiting,completed&limit=5');
    await call('GET', '/api/v1/va-payments?limit=1000');
    await call('GET', `/api/v1/va-payments/${payment.id}`);
    await call('GET', '/api/v1/va-payments/00000000-0000-4000-8000-000000000000');
    await call('POST', '/sandbox/v1/transfers', { to: payment.cvu, total: 60, taxes: 1, from: { name: 'Juan' } });
    await call('POST', '/sandbox/v1/transfers', { to: payment.cvu, total: 100 });
    await call('POST', '/sandbox/v1/transfers', { to: '0000000000000000000000', total: 10 });
    await call('POST', '/sandbox/v1/transfers', { to: 'NO.SUCH.ALIAS', total: 10 });
    await call('POST', '/sandbox/v1/triggers', { event: 'overpaid', callbackUrl: receiver.url });
    await call('POST', '/sandbox/v1/triggers', { event: 'client.cashin', paymentHubId: 5 });
    await call('POST', '/sandbox/v1/triggers', { event: 'refunded' });
    const cancelled = await data('POST', '/api/v1/va-payments', PAYMENT);
    await call('POST', `/api/v1/va-payments/${cancelled.id}/cancel`);
    await call('POST', `/api/v1/va-payments/${cancelled.id}/cancel`);
    await call('POST', '/api/v1/va-payments', { ...PAYMENT, callbackUrl: receiver.url }, { 'idempotency-key': 'k1' });
    await call('POST', '/api/v1/va-payments', { ...PAYMENT, callbackUrl: receiver.url }, { 'idempotency-key': 'k1' });
    await call('POST', '/api/v1/va-payments', { ...PAYMENT }, { 'idempotency-key': 'k1' });

    // Clients, their ledger and invoices
    const client = await data('POST', '/api/v1/clients', {
      ...CLIENT,
      name: 'Ana',
      taxId: '20-12345678-6',
      cashinCallbackUrl: receiver.url,
      emails: ['ana@example.com'],
    });
    await call('POST', '/api/v1/clients', { ...CLIENT, name: 'Ana again', taxId: '20123456786' });
    await call('GET', '/api/v1/clients?taxId=20-12345678-6');
    await call('GET', `/api/v1/clients/${client.id}`);
    await call('PATCH', `/api/v1/clients/${client.id}`, { externalReference: 'c-1', cashinCallbackUrl: null });
    await call('POST', '/sandbox/v1/transfers', { to: client.alias, total: 500, taxes: 5 });
    const invoice = await data('POST', `/api/v1/clients/${client.id}/invoices`, { invoiceType: 'B', totalAmount: 300 });
    await call('POST', `/api/v1/clients/${client.id}/invoices`, {
      invoiceType: 'B',
      totalAmount: 300,
      total_amount: 200,
    });
    await call('GET', `/api/v1/clients/${client.id}/invoices`);
    await call('GET', `/api/v1/clients/${client.id}/invoices/${invoice.id}`);
    await call('POST', `/sandbox/v1/clients/${client.id}/invoices/${invoice.id}/allocations`, { amount: 100 });
    await call('POST', `/sandbox/v1/clients/${client.id}/invoices/${invoice.id}/allocations`, { amount: 100_000 });
    await call('PATCH', `/api/v1/clients/${client.id}/invoices/${invoice.id}`, { observations: 'first' });
    const credit = await data('POST', `/sandbox/v1/clients/${client.id}/ledger`, {
      entryType: 'credit',
      amount: 50,
      description: 'bonus',
      operationId: 'op-bonus',
    });
    await call('POST', `/sandbox/v1/clients/${client.id}/ledger`, {
      entryType: 'reversal',
      amount: 50,
      description: 'back',
      operationId: credit.operationId,
    });
    await call('POST', `/sandbox/v1/clients/${client.id}/ledger`, {
      entryType: 'reversal',
      amount: 50,
      description: 'again',
      operationId: credit.operationId,
    });
    await call('POST', `/sandbox/v1/clients/${client.id}/debits`, { amount: 20, description: 'fee' });
    await call('GET', `/api/v1/clients/${client.id}/transactions?entryType=cash_in,debit`);
    await call('GET', `/api/v1/clients/${client.id}/balance`);
    await call('PATCH', `/api/v1/clients/${client.id}/invoices/${invoice.id}`, { paymentStatus: 'cancelled' });
    await call('PATCH', `/api/v1/clients/${client.id}/invoices/${invoice.id}`, { paymentStatus: 'cancelled' });
    await call('POST', `/sandbox/v1/clients/${client.id}/cvu`, { cvuStatus: 'disabled' });
    await call('POST', `/sandbox/v1/clients/${client.id}/cvu`, { cvuStatus: 'provisioning' });

    // Hubs
    await call('GET', '/sandbox/v1/hubs');
    await call('GET', '/sandbox/v1/hubs/2');
    await call('PATCH', '/sandbox/v1/hubs/2', { dedicated_client_cvus_enabled: false });
    await call('POST', '/api/v1/clients', { paymentHubId: 2, name: 'No CVU', taxId: '27-1' });

    // Clock, events, deliveries, forwarding and faults
    await call('GET', '/sandbox/v1/clock');
    await call('GET', '/sandbox/v1/progress');
    await call('POST', '/sandbox/v1/clock/advance', { seconds: 60 });
    await call('POST', '/sandbox/v1/clock/set', { at: '2000-01-01T00:00:00.000Z' });
    await call('POST', '/sandbox/v1/clock/set', { at: new Date(Date.now() + 7200_000).toISOString() });
    await receiver.waitFor(3);
    await call('GET', '/sandbox/v1/events');
    await call('GET', '/sandbox/v1/transfers');
    const deliveries = await call('GET', '/sandbox/v1/deliveries?status=delivered,dropped');
    const delivery = deliveries.body.data.find((d: { status: string }) => d.status === 'delivered');
    await call('GET', '/sandbox/v1/deliveries?status=nope');
    await call('GET', `/sandbox/v1/deliveries/${delivery.id}`);
    await call('POST', `/sandbox/v1/deliveries/${delivery.id}/redeliver`);
    await call('POST', `/sandbox/v1/deliveries/${delivery.id}/redeliver`, { url: `${receiver.url}/again` });
    await call('POST', `/sandbox/v1/deliveries/${delivery.id}/release`);
    await call('POST', '/sandbox/v1/deliveries/release');
    await call('GET', '/sandbox/v1/forwarding');
    await call('PUT', '/sandbox/v1/forwarding', { url: `${receiver.url}/forwarded` });
    await call('DELETE', '/sandbox/v1/forwarding');
    await call('GET', '/sandbox/v1/faults');
    await call('PUT', '/sandbox/v1/faults', { duplicate: true });
    await call('PUT', '/sandbox/v1/faults', {});
    // API fault rules, and the error answers they make
    const rule = await data('POST', '/sandbox/v1/api-faults', {
      method: 'GET',
      path: '/api/v1/clients/{id}',
      fault: { type: 'error', status: 503 },
      probability: 1,
    });
    await call('POST', '/sandbox/v1/api-faults', { path: '/api/v1/clients', fault: { type: 'reset' } });
    await call('GET', '/sandbox/v1/api-faults');
    for (const status of [502, 504, 429, 500]) {
      await data('POST', '/sandbox/v1/api-faults', {
        method: 'POST',
        path: '/api/v1/va-payments',
        fault: { type: 'error', status },
        times: 1,
      });
      expect((await call('POST', '/api/v1/va-payments', { ...PAYMENT })).status).toBe(status);
    }
    expect((await call('GET', `/api/v1/clients/${rule.id}`)).status).toBe(503);
    await call('DELETE', `/sandbox/v1/api-faults/${rule.id}`);
    await call('DELETE', '/sandbox/v1/api-faults');
    // The request journal
    const [journaled] = await data('GET', '/sandbox/v1/requests?method=GET&path=/api/v1/clients/{id}');
    await call('GET', `/sandbox/v1/requests/${journaled.id}`);
    await call('GET', '/sandbox/v1/requests?status=abc');
    await call('DELETE', '/sandbox/v1/requests');

    // Export, import (with held deliveries to release), scenario, reset
    const exported = await data('GET', '/sandbox/v1/export');
    await call('GET', '/sandbox/v1/scenario?name=Recorded');
    const incident = await incidentWithOpenDeliveries(server.url, 'sk_openapi_incident', `${receiver.url}/incident`, 2);
    const held = checked(server.url, 'sk_openapi_held');
    await held.call('POST', '/sandbox/v1/import?dryRun=1', incident.doc);
    await held.call('POST', '/sandbox/v1/import', incident.doc);
    await held.call('POST', '/sandbox/v1/import', { ...incident.doc, version: 99 });
    const heldOnes = await held.data('GET', '/sandbox/v1/deliveries?status=held');
    await held.call('POST', `/sandbox/v1/deliveries/${heldOnes[0].id}/release`, { url: `${receiver.url}/released` });
    await held.call('POST', '/sandbox/v1/deliveries/release');
    await call('POST', '/sandbox/v1/import', exported);
    await call('POST', '/sandbox/v1/reset');
    await call('GET', '/sandbox/v1/reset');

    // Refusals before any route: no key, a foreign Host, the rate limit
    const anonymous = await fetch(`${server.url}/api/v1/va-payments`);
    const problem = mismatch('GET', '/api/v1/va-payments', anonymous.status, await anonymous.json());
    if (problem) problems.push(problem);
    seen.add(`get /api/v1/va-payments ${anonymous.status}`);
    const foreign = await server.app.request('/health', { headers: { host: 'evil.example' } });
    expect(foreign.status).toBe(403);
    expect(mismatch('GET', '/health', 403, await foreign.json())).toBeNull();
    const burst = checked(limited.url);
    await burst.call('GET', '/api/v1/clients');
    await burst.call('GET', '/api/v1/clients');
    expect([...seen]).toEqual(
      expect.arrayContaining([
        'get /api/v1/va-payments 401',
        'get /api/v1/clients 429',
        'post /api/v1/va-payments 413',
      ]),
    );

    expect(problems).toEqual([]);
    // Every operation answered with success at least once (the stream's events are not JSON answers).
    const succeeded = new Set([...seen].filter((s) => /\s2\d\d$/.test(s)).map((s) => s.replace(/\s\d+$/, '')));
    const missing = OPERATIONS.filter(
      (op) => op.id !== 'stream' && op.id !== 'openapi' && !succeeded.has(`${op.method} ${op.path}`),
    ).map((op) => `${op.method} ${op.path}`);
    expect(missing).toEqual([]);
  }, 60_000);
});

describe('openapi-typescript on the document', () => {
  it('gives types a project compiles against: each answer typed, its enums closed', async () => {
    const dir = useTmp();
    writeFileSync(join(dir, 'api.d.ts'), astToString(await openapiTS(doc)));
    const payment = doc.components.schemas.VaPayment;
    expect(payment.required).toContain('paymentInstructions');
    writeFileSync(
      join(dir, 'use.ts'),
      [
        "import type { components, paths } from './api.js';",
        "type Payment = components['schemas']['VaPayment'];",
        "type Created = paths['/api/v1/va-payments']['post']['responses'][201]['content']['application/json'];",
        "type Clients = paths['/api/v1/clients']['get']['responses'][200]['content']['application/json'];",
        "type Refused = paths['/api/v1/va-payments/{id}/cancel']['post']['responses'][409]['content']['application/json'];",
        "type Full = paths['/api/v1/va-payments']['post']['responses'][507]['content']['application/json'];",
        `export const created: Created = ${JSON.stringify(doc.paths['/api/v1/va-payments'].post.responses['201'].content['application/json'].example)};`,
        'export const remaining = (answer: Created): number => answer.data.remainingAmount - (answer.data.amount ?? 0);',
        'export const names = (page: Clients): string[] => page.data.map((client) => client.name + page.pagination.totalPages);',
        "export const conflict: Refused['error']['code'] = 'AMOUNT_LOCK_CONFLICT';",
        "export const full: Full['error']['code'] = 'INSUFFICIENT_STORAGE';",
        '// @ts-expect-error: not a VA payment status',
        "export const status: Payment['status'] = 'paid';",
      ].join('\n'),
    );
    const tsc = spawnSync(
      process.execPath,
      [
        join(ROOT, 'node_modules/typescript/bin/tsc'),
        '--noEmit',
        '--strict',
        '--module',
        'nodenext',
        '--target',
        'es2022',
        'use.ts',
      ],
      {
        cwd: dir,
        encoding: 'utf8',
      },
    );
    expect(tsc.stdout + tsc.stderr).toBe('');
    expect(tsc.status).toBe(0);
  }, 60_000);
});
