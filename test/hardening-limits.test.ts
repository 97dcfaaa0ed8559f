import { spawn } from 'node:child_process';
import { Agent, request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { balance } from '../src/core/clients/ledger.js';
import { MAX_CENTS } from '../src/core/conventions/money.js';
import type { Entry } from '../src/core/records/state.js';
import { api, BIN, eventually, freePort, useReceiver, useServer, useTmp } from './helpers.js';

/** Issue 15 item 11: the sandbox clock is bounded, money sums are exact past 2^53 cents, SIGTERM under EMFILE exits cleanly. */

describe('the sandbox clock is bounded', () => {
  it('advancing past 9999-01-01 is 400 VALIDATION_ERROR on the request that tries; the account answers as before', {
    timeout: 60_000,
  }, async () => {
    const server = await useServer();
    const client = api(server.url, 'sk_far_future');
    let refused = null;
    // Ten years at a time (the most one advance takes): about 800 advances reach the bound.
    for (let i = 0; i < 1000 && !refused; i++) {
      const answer = await client.post('/sandbox/v1/clock/advance', { seconds: 10 * 365 * 24 * 3600 });
      if (answer.status !== 200) refused = answer;
    }
    expect(refused?.status).toBe(400);
    expect(refused?.body.error).toEqual({
      code: 'VALIDATION_ERROR',
      message: 'The sandbox clock cannot pass 9999-01-01T00:00:00.000Z',
      details: ['seconds: would move the clock past 9999-01-01T00:00:00.000Z'],
    });
    const { now } = await client.data('GET', '/sandbox/v1/clock');
    expect(now).toMatch(/^99\d\d-\d\d-\d\dT/);
    const created = await client.post('/api/v1/va-payments', {
      paymentHubId: 1,
      currency: 'ARS',
      lockMode: 'time',
      amount: 1,
      ttlSeconds: 28800,
    });
    expect(created.status).toBe(201);
    expect(created.body.data.expiresAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect((await client.get('/api/v1/va-payments')).status).toBe(200);
  });

  it("an internal error is 500 INTERNAL_ERROR, never the client's fault (a state whose clock is past Date's range)", async () => {
    const logs: string[] = [];
    const server = await useServer({ log: (line) => logs.push(line) });
    const client = api(server.url, 'sk_broken_clock');
    await client.data('GET', '/sandbox/v1/clock');
    // As a state file written before the clock was bounded leaves it.
    server.runtime.sandbox.account('sk_broken_clock').head.clockOffsetMs = 8.64e15;
    const answer = await client.get('/api/v1/va-payments');
    expect(answer.status).toBe(500);
    expect(answer.body).toMatchObject({ success: false, error: { code: 'INTERNAL_ERROR' } });
    expect(logs.some((line) => line.startsWith('internal error on GET') && line.includes('Invalid time value'))).toBe(
      true,
    );
    // Other accounts are untouched.
    expect((await api(server.url, 'sk_fine').get('/api/v1/va-payments')).status).toBe(200);
  });
});

describe('money sums past 2^53 cents', () => {
  it('a balance of totals past 2^53 cents is exact to the cent', () => {
    const entry = (n: number, entryType: Entry['entryType'], amount: number): Entry => ({
      id: `e${n}`,
      clientId: 'c',
      entryType,
      amount,
      currency: 'ARS',
      description: null,
      operationId: null,
      paymentId: null,
      invoiceId: null,
      sourceType: 'sandbox',
      createdAt: '2026-01-01T00:00:00.000Z',
    });
    // 91,000 largest cash-ins and as many largest debits (each total past 2^53 cents), then one cent more in.
    const count = 91_000;
    const entries = [
      ...Array.from({ length: count }, (_, i) => entry(i, 'cash_in', MAX_CENTS)),
      ...Array.from({ length: count }, (_, i) => entry(count + i, 'debit', -MAX_CENTS)),
      entry(2 * count, 'cash_in', 1),
    ];
    expect(count * MAX_CENTS).toBeGreaterThan(Number.MAX_SAFE_INTEGER);
    const result = balance(entries, []);
    expect(result.balance).toBe(1);
    expect(BigInt(result.totalCashOut)).toBe(BigInt(count) * BigInt(MAX_CENTS));
  });
});

describe('SIGTERM under file-descriptor exhaustion', () => {
  it('callbacks fail as attempts (not EMFILE from loading a module) and SIGTERM exits 0 with the state saved', {
    timeout: 60_000,
  }, async () => {
    const data = join(useTmp(), 'state.db');
    const receiver = await useReceiver();
    const port = await freePort();
    // `ulimit -n` on the child only: 256 descriptors, used up below by idle connections.
    const child = spawn(
      'sh',
      ['-c', `ulimit -n 256 && exec "${process.execPath}" "${BIN}" start --port ${port} --data "${data}"`],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, NO_COLOR: '1' },
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const idle: Socket[] = [];
    try {
      await eventually(() => /listening on/.test(stdout), 10_000, 'the server to listen');
      // One kept-alive connection for this test's requests, opened before the descriptors run out.
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      const call = (method: string, path: string, body?: unknown) =>
        new Promise<{ status: number; body: any }>((resolve, reject) => {
          const req = request(
            {
              host: '127.0.0.1',
              port,
              method,
              path,
              agent,
              headers: { authorization: 'Bearer sk_emfile', 'content-type': 'application/json' },
            },
            (res) => {
              let raw = '';
              res.on('data', (chunk) => (raw += chunk));
              res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(raw) }));
            },
          );
          req.on('error', reject);
          req.end(body === undefined ? undefined : JSON.stringify(body));
        });
      expect((await call('GET', '/sandbox/v1/clock')).status).toBe(200);
      for (let i = 0; i < 300; i++) idle.push(connect(port, '127.0.0.1').on('error', () => {}));
      await new Promise((resolve) => setTimeout(resolve, 500));

      const payment = await call('POST', '/api/v1/va-payments', {
        paymentHubId: 1,
        currency: 'ARS',
        lockMode: 'time',
        amount: 10,
        callbackUrl: `${receiver.url}/hook`,
      });
      expect(payment.status).toBe(201);
      // The first attempt cannot open a connection either, and says so in the log as an attempt.
      const delivery = await eventually(
        async () => (await call('GET', '/sandbox/v1/deliveries')).body.data.find((d: any) => d.attempts > 0),
        10_000,
        'the first attempt to be recorded',
      );
      expect(delivery.lastError).toBe('network');
      expect(stderr).not.toMatch(/could not be recorded/);

      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(stdout).toMatch(/va-sandbox stopped; state saved/);
      agent.destroy();
    } finally {
      for (const socket of idle) socket.destroy();
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
    }

    // Nothing acknowledged was lost: a new server on the same file has the payment.
    const again = await useServer({ data });
    const list = await api(again.url, 'sk_emfile').get('/api/v1/va-payments');
    expect(list.body.pagination.total).toBe(1);
  });
});
