import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { spawnServer, useServer } from './helpers.js';

/**
 * Issue 15 item 9: the DNS-rebinding guard. A web page whose name was rebound to 127.0.0.1 reaches the sandbox with
 * its own name in `Host`; only loopback names and addresses, the `--host` value and `--allowed-host` names are served.
 */
interface Answer {
  status: number;
  body: any;
}

/** One request over real HTTP with the given Host header (fetch will not let a caller choose it). */
function withHost(baseUrl: string, host: string, method: string, path: string, body?: unknown): Promise<Answer> {
  const { port } = new URL(baseUrl);
  const text = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        headers: { host, authorization: 'Bearer sk_sandbox', ...(text ? { 'content-type': 'application/json' } : {}) },
      },
      (res) => {
        let raw = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (raw += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, body: raw ? JSON.parse(raw) : null }));
      },
    );
    req.on('error', reject);
    req.end(text);
  });
}

const create = { paymentHubId: 1, currency: 'ARS', lockMode: 'time', amount: 10 };

describe('DNS-rebinding guard: the Host header', () => {
  it('a foreign Host is 403 HOST_NOT_ALLOWED in the envelope on every route, /health included, and changes nothing', async () => {
    const server = await useServer();
    const evil = (method: string, path: string, body?: unknown) =>
      withHost(server.url, 'rebind.evil.example', method, path, body);
    for (const [method, path, body] of [
      ['GET', '/health'],
      ['GET', '/openapi.json'],
      ['GET', '/api/v1/va-payments'],
      ['POST', '/api/v1/va-payments', create],
      ['GET', '/sandbox/v1/export'],
      ['GET', '/no/such/route'],
    ] as const) {
      const answer = await evil(method, path, body);
      expect(answer.status, `${method} ${path}`).toBe(403);
      expect(answer.body).toMatchObject({
        success: false,
        error: {
          code: 'HOST_NOT_ALLOWED',
          details: [
            'Host: rebind.evil.example is not a loopback name or address, the --host value or an --allowed-host',
          ],
        },
        path,
      });
    }
    // The same names with a port, upper case or a trailing dot are the same names.
    for (const host of [
      'rebind.evil.example:4580',
      'REBIND.evil.example',
      'rebind.evil.example.',
      '127.0.0.1.evil.example',
      'localhost.evil.example',
      '[::2]',
    ]) {
      expect((await withHost(server.url, host, 'GET', '/health')).status, host).toBe(403);
    }
    const list = await withHost(server.url, `127.0.0.1:${server.port}`, 'GET', '/api/v1/va-payments');
    expect(list.status).toBe(200);
    // Nothing was created.
    expect(list.body.pagination.total).toBe(0);
  });

  it('loopback names and addresses are served, with or without a port', async () => {
    const server = await useServer();
    for (const host of [
      'localhost',
      `localhost:${server.port}`,
      'LocalHost.',
      '127.0.0.1',
      `127.0.0.1:${server.port}`,
      '127.45.6.7:80',
      '[::1]',
      `[::1]:${server.port}`,
    ]) {
      expect((await withHost(server.url, host, 'GET', '/health')).status, host).toBe(200);
      expect((await withHost(server.url, host, 'POST', '/api/v1/va-payments', create)).status, host).toBe(201);
    }
    // Not an address (and not a name that can be served): refused, as malformed or as not allowed.
    expect([400, 403]).toContain((await withHost(server.url, '127.0.0.256', 'GET', '/health')).status);
  });

  it('allowedHosts adds names; others stay refused', async () => {
    const server = await useServer({ allowedHosts: ['sandbox.internal', 'Dev.Example'] });
    expect((await withHost(server.url, 'sandbox.internal:4580', 'GET', '/health')).status).toBe(200);
    expect((await withHost(server.url, 'dev.example', 'GET', '/api/v1/va-payments')).status).toBe(200);
    expect((await withHost(server.url, 'other.internal', 'GET', '/health')).status).toBe(403);
  });

  it('va-sandbox start --allowed-host (repeatable) serves those names, and refuses a foreign one', {
    timeout: 20_000,
  }, async () => {
    const server = await spawnServer([
      '--memory',
      '--allowed-host',
      'ci-runner.local',
      '--allowed-host',
      'sandbox.test',
    ]);
    expect((await withHost(server.url, 'ci-runner.local', 'GET', '/health')).status).toBe(200);
    expect((await withHost(server.url, 'sandbox.test:8080', 'POST', '/api/v1/va-payments', create)).status).toBe(201);
    const refused = await withHost(server.url, 'rebind.evil.example', 'GET', '/api/v1/va-payments');
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('HOST_NOT_ALLOWED');
  });
});
