import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { api, PAYMENT, useServer } from './helpers.js';

const server = await useServer();
let keyN = 0;
const account = () => api(server.url, `sk_conv_${++keyN}`);

const expectEnvelope = (body: any, code: string, path: string) => {
  expect(body).toMatchObject({
    success: false,
    error: { code, message: expect.any(String), details: expect.any(Array) },
    path,
  });
  expect(Date.parse(body.timestamp)).not.toBeNaN();
};

describe('authentication and accounts', () => {
  it('a missing, empty or non-Bearer key is 401 UNAUTHORIZED', async () => {
    for (const authorization of [undefined, '', 'Bearer ', 'Basic abc', 'Bearer']) {
      const response = await fetch(`${server.url}/api/v1/va-payments`, {
        headers: authorization === undefined ? {} : { authorization },
      });
      expect(response.status).toBe(401);
      expectEnvelope(await response.json(), 'UNAUTHORIZED', '/api/v1/va-payments');
    }
  });

  it('headers are read as a fetch Request holds them: two Authorization headers are one value (joined), not a key', async () => {
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const headers = [
        'Host',
        new URL(server.url).host,
        'Authorization',
        'Bearer sk_conv_first',
        'Authorization',
        'Bearer sk_conv_second',
      ];
      const sent = request(`${server.url}/api/v1/va-payments`, { headers }, (response) => {
        let body = '';
        response
          .on('data', (chunk) => (body += chunk))
          .on('end', () => resolve({ status: response.statusCode!, body }));
      });
      sent.on('error', reject).end();
    });
    expect(answer.status).toBe(401);
    expectEnvelope(JSON.parse(answer.body), 'UNAUTHORIZED', '/api/v1/va-payments');
  });

  it('each API key is an isolated account: payments, transfers, hub and clock are its own', async () => {
    const a = account();
    const b = account();
    const payment = await a.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 10 });
    expect((await b.list('/api/v1/va-payments')).data).toEqual([]);
    expect((await b.get(`/api/v1/va-payments/${payment.id}`)).status).toBe(404);
    expect((await b.post('/sandbox/v1/transfers', { to: payment.cvu, total: 10 })).status).toBe(404);
    await b.data('POST', '/sandbox/v1/clock/advance', { seconds: 3600 });
    expect((await a.data('GET', '/sandbox/v1/clock')).offsetSeconds).toBe(0);
    expect((await a.data('GET', `/api/v1/va-payments/${payment.id}`)).status).toBe('waiting');
    await b.data('PATCH', '/sandbox/v1/hubs/1', { cvuProvisioning: 'fail' });
    expect((await a.data('GET', '/sandbox/v1/hubs/1')).cvuProvisioning).toBe('inline');
  });

  it('with --api-key, only the listed keys are accepted', async () => {
    const strict = await useServer({ apiKeys: ['sk_one', 'sk_two'] }, 'test');
    expect((await api(strict.url, 'sk_one').get('/api/v1/va-payments')).status).toBe(200);
    const other = await api(strict.url, 'sk_three').get('/api/v1/va-payments');
    expect(other.status).toBe(401);
    expect(other.body.error.message).toBe(
      'Unknown API key …hree: this sandbox accepts only the keys it was started with (--api-key)',
    );
  });

  it('GET /health answers without a key', async () => {
    const response = await fetch(`${server.url}/health`);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ status: 'ok' });
  });
});

describe('paths spelled as a route pattern', () => {
  // Found by hardening-fuzz (seed 206618668): Hono ran the /sandbox/v1/* middleware twice for the path "/sandbox/v1/*",
  // and the second run waited forever for a body the first had read.
  it('a path with a `*` segment is 404 NOT_FOUND at once, with or without a body', async () => {
    for (const [method, path] of [
      ['POST', '/sandbox/v1/*'],
      ['DELETE', '/sandbox/v1/*'],
      ['POST', '/api/v1/*'],
      ['POST', '/api/v1/va-payments/*/cancel'],
    ] as const) {
      const response = await fetch(`${server.url}${path}`, {
        method,
        headers: { authorization: 'Bearer sk_conv_star', 'content-type': 'application/json' },
        body: method === 'POST' ? '{"amount":1}' : undefined,
        signal: AbortSignal.timeout(5_000),
      });
      expect(response.status).toBe(404);
      expectEnvelope(await response.json(), 'NOT_FOUND', path);
    }
  });
});

describe('request bodies', () => {
  const post = (body: string | undefined, headers: Record<string, string>) =>
    fetch(`${server.url}/api/v1/va-payments`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk_bodies', ...headers },
      body,
    });

  it('malformed JSON is 400 INVALID_JSON; an empty body too', async () => {
    for (const body of ['{', '{"amount": 10,}', 'nul', "{'a':1}", '']) {
      const response = await post(body, { 'content-type': 'application/json' });
      expect(response.status).toBe(400);
      expectEnvelope(await response.json(), 'INVALID_JSON', '/api/v1/va-payments');
    }
  });

  it('a body that is not application/json is 415 UNSUPPORTED_MEDIA_TYPE', async () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/jsonx']) {
      const response = await post('{"amount": 10}', { 'content-type': type });
      expect(response.status).toBe(415);
      expectEnvelope(await response.json(), 'UNSUPPORTED_MEDIA_TYPE', '/api/v1/va-payments');
    }
    expect(
      (await post(JSON.stringify({ ...PAYMENT, amount: 10 }), { 'content-type': 'application/json; charset=utf-8' }))
        .status,
    ).toBe(201);
  });

  it('a body over 1 MiB is 413 PAYLOAD_TOO_LARGE, declared or streamed', async () => {
    const big = JSON.stringify({ clientName: 'x'.repeat(2 * 1024 * 1024) });
    const response = await post(big, { 'content-type': 'application/json' });
    expect(response.status).toBe(413);
    expectEnvelope(await response.json(), 'PAYLOAD_TOO_LARGE', '/api/v1/va-payments');
    const stream = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(big));
        controller.close();
      },
    });
    const streamed = await fetch(`${server.url}/api/v1/va-payments`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk_bodies', 'content-type': 'application/json' },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    expect(streamed.status).toBe(413);
  });

  it.each([
    ['an array', '[1,2]'],
    ['a string', '"hello"'],
    ['a number', '42'],
    ['null', 'null'],
  ])('a JSON body that is %s is 400 VALIDATION_ERROR', async (_what, body) => {
    const response = await post(body, { 'content-type': 'application/json' });
    expect(response.status).toBe(400);
    expectEnvelope(await response.json(), 'VALIDATION_ERROR', '/api/v1/va-payments');
  });

  it('wrong types, huge numbers and deep nesting never give a 5xx', async () => {
    const deep = `{"metadata":${'{"a":'.repeat(50_000)}1${'}'.repeat(50_000)}}`;
    for (const body of [
      '{"amount": "ten"}',
      '{"amount": 1e400}',
      '{"amount": 123456789012345678901234567890}',
      '{"ttlSeconds": 1e308}',
      '{"metadata": "x"}',
      '{"lockMode": null, "amount": null}',
      '{"callbackUrl": 12}',
      deep,
      '{"amount": 10, "__proto__": {"admin": true}}',
      '{"amount": 10, "constructor": {"prototype": {}}}',
    ]) {
      const response = await post(body, { 'content-type': 'application/json' });
      expect(response.status, body.slice(0, 60)).toBeLessThan(500);
      expect(response.status, body.slice(0, 60)).toBeGreaterThanOrEqual(400);
      const json = (await response.json()) as { success: boolean; error: { details: string[] } };
      expect(json.success).toBe(false);
      expect(json.error.details.length).toBeGreaterThan(0);
    }
  });
});

describe('routes', () => {
  it('an unknown route is 404 NOT_FOUND in the envelope', async () => {
    const response = await account().get('/api/v1/nothing-here');
    expect(response.status).toBe(404);
    expectEnvelope(response.body, 'NOT_FOUND', '/api/v1/nothing-here');
  });

  it('a known path with the wrong method is 405 METHOD_NOT_ALLOWED with Allow', async () => {
    const client = account();
    const response = await client.call('DELETE', '/api/v1/va-payments');
    expect(response.status).toBe(405);
    expectEnvelope(response.body, 'METHOD_NOT_ALLOWED', '/api/v1/va-payments');
    expect(response.headers.get('allow')).toContain('POST');
    const put = await client.call('PUT', '/api/v1/va-payments/00000000-0000-4000-8000-000000000000');
    expect(put.status).toBe(405);
    expect(put.headers.get('allow')).toContain('GET');
  });
});

describe('Idempotency-Key', () => {
  it('replays the first response (status and body) for the same key and body, creating nothing new', async () => {
    const client = account();
    const body = { ...PAYMENT, amount: 99 };
    const first = await client.post('/api/v1/va-payments', body, { 'idempotency-key': 'k-1' });
    const again = await client.post('/api/v1/va-payments', body, { 'idempotency-key': 'k-1' });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect((await client.list('/api/v1/va-payments')).pagination.total).toBe(1);
  });

  it('the same key with another body is 409 IDEMPOTENCY_KEY_CONFLICT', async () => {
    const client = account();
    await client.post('/api/v1/va-payments', { ...PAYMENT, amount: 1 }, { 'idempotency-key': 'k-2' });
    const response = await client.post('/api/v1/va-payments', { ...PAYMENT, amount: 2 }, { 'idempotency-key': 'k-2' });
    expect(response.status).toBe(409);
    expect(response.body.error.code).toBe('IDEMPOTENCY_KEY_CONFLICT');
  });

  it('works for transfers too, and is forgotten after 24 h of sandbox clock', async () => {
    const client = account();
    const payment = await client.data('POST', '/api/v1/va-payments', { ...PAYMENT, ttlSeconds: 28800 });
    const body = { to: payment.cvu, total: 5 };
    const first = await client.post('/sandbox/v1/transfers', body, { 'idempotency-key': 't-1' });
    const again = await client.post('/sandbox/v1/transfers', body, { 'idempotency-key': 't-1' });
    expect(again.body.data.id).toBe(first.body.data.id);
    expect((await client.list('/sandbox/v1/transfers')).pagination.total).toBe(1);
    await client.data('POST', '/sandbox/v1/clock/advance', { seconds: 24 * 3600 });
    const later = await client.post('/sandbox/v1/transfers', body, { 'idempotency-key': 't-1' });
    expect(later.headers.get('idempotent-replayed')).toBeNull();
    expect(later.body.data.id).not.toBe(first.body.data.id);
  });

  it('keys are per account, and an error is not remembered', async () => {
    const a = account();
    const b = account();
    await a.post('/api/v1/va-payments', { ...PAYMENT, amount: 1 }, { 'idempotency-key': 'shared' });
    expect(
      (await b.post('/api/v1/va-payments', { ...PAYMENT, amount: 2 }, { 'idempotency-key': 'shared' })).status,
    ).toBe(201);
    const bad = await a.post('/api/v1/va-payments', { ...PAYMENT, amount: -1 }, { 'idempotency-key': 'err' });
    expect(bad.status).toBe(400);
    expect((await a.post('/api/v1/va-payments', { ...PAYMENT, amount: 3 }, { 'idempotency-key': 'err' })).status).toBe(
      201,
    );
  });
});

describe('--rate-limit', () => {
  it('adds X-RateLimit headers and answers 429 RATE_LIMIT_EXCEEDED with Retry-After past the limit, per key', async () => {
    const limited = await useServer({ rateLimit: 3 }, 'test');
    const client = api(limited.url, 'sk_rl');
    // A burst far over the limit: whatever second boundaries it crosses, some calls must be refused.
    const responses = await Promise.all(Array.from({ length: 30 }, () => client.get('/api/v1/va-payments')));
    const ok = responses.filter((r) => r.status === 200);
    const refused = responses.filter((r) => r.status === 429);
    expect(refused.length).toBeGreaterThan(0);
    expect(ok.length).toBeGreaterThan(0);
    expect(ok[0]!.headers.get('x-ratelimit-limit')).toBe('3');
    expect(Number(ok[0]!.headers.get('x-ratelimit-remaining'))).toBeLessThanOrEqual(2);
    expect(Number(ok[0]!.headers.get('x-ratelimit-reset'))).toBeGreaterThan(0);
    expect(refused[0]!.body.error.code).toBe('RATE_LIMIT_EXCEEDED');
    expect(Number(refused[0]!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(refused[0]!.headers.get('x-ratelimit-remaining')).toBe('0');
    expect((await api(limited.url, 'sk_other').get('/api/v1/va-payments')).status).toBe(200);
  });

  it('is off by default', async () => {
    const client = account();
    const responses = await Promise.all(Array.from({ length: 50 }, () => client.get('/sandbox/v1/clock')));
    expect(responses.every((r) => r.status === 200 && !r.headers.has('x-ratelimit-limit'))).toBe(true);
  });
});

describe('hub and reset', () => {
  it('GET /sandbox/v1/hubs/1 shows the contract hub; PATCH changes its settings and validates them', async () => {
    const client = account();
    const hub = await client.data('GET', '/sandbox/v1/hubs/1');
    expect(hub).toMatchObject({
      id: 1,
      name: 'Sandbox Hub 1',
      brand: 'SANDBOX',
      dedicated_client_cvus_enabled: true,
      cvuProvisioning: 'inline',
    });
    expect(
      await client.data('PATCH', '/sandbox/v1/hubs/1', {
        cvuProvisioning: 'delayed',
        dedicated_client_cvus_enabled: false,
      }),
    ).toMatchObject({
      cvuProvisioning: 'delayed',
      dedicated_client_cvus_enabled: false,
    });
    const bad = await client.patch('/sandbox/v1/hubs/1', { cvuProvisioning: 'later', id: 2 });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.map((d: string) => d.split(':')[0]).sort()).toEqual(['cvuProvisioning', 'id']);
  });

  it('POST /sandbox/v1/reset clears the account and its clock, and nothing else', async () => {
    const a = account();
    const b = account();
    await a.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 10 });
    await b.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 10 });
    await a.data('POST', '/sandbox/v1/clock/advance', { seconds: 10 });
    expect(await a.data('POST', '/sandbox/v1/reset')).toEqual({ reset: true });
    expect((await a.list('/api/v1/va-payments')).data).toEqual([]);
    expect((await a.list('/sandbox/v1/events')).data).toEqual([]);
    expect((await a.data('GET', '/sandbox/v1/clock')).offsetSeconds).toBe(0);
    expect((await b.list('/api/v1/va-payments')).data).toHaveLength(1);
  });
});
