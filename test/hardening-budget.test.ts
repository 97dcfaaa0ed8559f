import { readdirSync } from 'node:fs';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../src/core/index.js';
import { type BudgetView, HELD_CONNECTIONS } from '../src/sandbox/http/budget.js';
import { withFunctions } from '../src/sandbox/store/schema.js';
import { api, eventually, PAYMENT, type Spawned, spawnServer, useServer, useTmp } from './helpers.js';
import { nonReader, rssMiB } from './raw-http.js';

/**
 * The buffer budget (issue 47, point 1): what the whole process holds for its clients is bounded, not only what one
 * connection holds. Before it, a 26.5 MB export asked by 50 connections that never read took the server from 207 to
 * 1,931 MiB, and a `hang` rule with 100 connections of 8 pipelined 1 MB creates from 93 to 2,466 MiB, with no cap on
 * the connections it held. Each test runs a real server process and measures its resident memory.
 */

/** How many descriptors a process has open (Linux). */
const descriptors = (pid: number): number => readdirSync(`/proc/${pid}/fd`).length;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `/health`'s `bufferBudget`. */
const budgetOf = async (url: string) =>
  ((await (await fetch(`${url}/health`)).json()) as { bufferBudget: BudgetView }).bufferBudget;

/** A connection that sends `text` and reads nothing (`reading`: 4 KB every 100 ms). */
async function client(port: number, text: string, reading = false): Promise<Socket> {
  const socket = await nonReader(port, text);
  if (reading) {
    const ticker = setInterval(() => socket.read(4096), 100);
    socket.once('close', () => clearInterval(ticker));
  }
  return socket;
}

/** Polls `/health` and a small read of another account for `ms`, each answered in time; the peak RSS seen meanwhile. */
async function servedMeanwhile(server: Spawned, ms: number): Promise<{ peak: number; answered: number; health: any }> {
  const pid = server.child.pid!;
  let peak = 0;
  let answered = 0;
  let health: any;
  const other = api(server.url, 'sk_budget_other');
  for (const until = performance.now() + ms; performance.now() < until; ) {
    const answer = await fetch(`${server.url}/health`, { signal: AbortSignal.timeout(5_000) });
    expect(answer.status).toBe(200);
    health = await answer.json();
    expect((await other.get('/api/v1/va-payments?limit=1')).status).toBe(200);
    answered++;
    peak = Math.max(peak, rssMiB(pid));
    await pause(100);
  }
  return { peak, answered, health };
}

/**
 * A database whose account `sk_big` holds `count` payments (its export about 0.7 KB each): one made through the API,
 * then copied row by row in SQL under new ids (a payment's row keeps its id beside its JSON, so its checksum holds).
 */
async function largeAccount(dir: string, count: number): Promise<string> {
  const data = join(dir, `big-${count}.db`);
  const first = await spawnServer(['--data', data, '--quiet']);
  expect((await api(first.url, 'sk_big').post('/api/v1/va-payments', { ...PAYMENT, amount: 1500 })).status).toBe(201);
  first.child.kill('SIGTERM');
  await first.exited;
  const db = withFunctions(new DatabaseSync(data));
  const columns = (
    db.prepare("SELECT name FROM pragma_table_info('va_payments') WHERE name NOT IN ('seq', 'id')").all() as {
      name: string;
    }[]
  ).map((c) => c.name);
  db.exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${count - 1})
    INSERT INTO va_payments (id, ${columns.join(', ')}) SELECT printf('%s-%07d', id, i), ${columns.join(', ')} FROM va_payments, n`);
  db.close();
  return data;
}

const dir = useTmp();

describe('the buffer budget, for the whole process', () => {
  it('a 25 MB export asked by 50 connections that never read, and by slow readers: memory bounded, others served', {
    timeout: 90_000,
  }, async () => {
    const server = await spawnServer(['--data', await largeAccount(dir, 40_000), '--quiet']);
    const pid = server.child.pid!;
    const port = Number(new URL(server.url).port);
    const whole = await (
      await fetch(`${server.url}/sandbox/v1/export`, { headers: { authorization: 'Bearer sk_big' } })
    ).text();
    expect(whole.length).toBeGreaterThan(25_000_000);
    expect(JSON.parse(whole).data.account.vaPayments).toSatisfy(
      (payments: object) => Object.keys(payments).length === 40_000,
    );
    const before = rssMiB(pid);
    const ask = `GET /sandbox/v1/export HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer sk_big\r\n\r\n`;
    const sockets = [
      ...(await Promise.all(Array.from({ length: 50 }, () => client(port, ask)))),
      ...(await Promise.all(Array.from({ length: 5 }, () => client(port, ask, true)))),
    ];
    try {
      const { peak, answered, health } = await servedMeanwhile(server, 6_000);
      console.log(
        `export × 55: RSS ${Math.round(before)} → peak ${Math.round(peak)} MiB; ${answered} rounds answered; budget ${JSON.stringify(health.bufferBudget)}`,
      );
      expect(answered).toBeGreaterThan(5);
      expect(peak - before, `RSS grew from ${Math.round(before)} to ${Math.round(peak)} MiB`).toBeLessThan(300);
      expect(health.bufferBudget.used).toBeLessThan(health.bufferBudget.limit);
    } finally {
      for (const socket of sockets) socket.destroy();
    }
  });

  it('a hang rule with 100 connections of 8 pipelined 1 MB creates: memory bounded, others served, held connections capped', {
    timeout: 90_000,
  }, async () => {
    const server = await spawnServer(['--memory', '--quiet', '--buffer-budget', '64MiB']);
    const pid = server.child.pid!;
    const port = Number(new URL(server.url).port);
    const rule = { method: 'POST', path: '/api/v1/va-payments', fault: { type: 'hang', ms: 9_000 }, times: 10_000 };
    expect((await api(server.url, 'sk_hang').post('/sandbox/v1/api-faults', rule)).status).toBe(201);
    const before = rssMiB(pid);
    const fdsBefore = descriptors(pid);
    const body = JSON.stringify({ ...PAYMENT, amount: 100, unknownField: 'x'.repeat(1_000_000) });
    const create = `POST /api/v1/va-payments HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer sk_hang\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    const creates = create.repeat(8);
    const sockets = await Promise.all(Array.from({ length: 100 }, () => client(port, creates)));
    try {
      const { peak, answered, health } = await servedMeanwhile(server, 6_000);
      const fds = descriptors(pid);
      console.log(
        `hang × 100 × 8 MB: RSS ${Math.round(before)} → peak ${Math.round(peak)} MiB; fds ${fdsBefore} → ${fds}; budget ${JSON.stringify(health.bufferBudget)}`,
      );
      expect(answered).toBeGreaterThan(5);
      expect(peak - before, `RSS grew from ${Math.round(before)} to ${Math.round(peak)} MiB`).toBeLessThan(300);
      expect(health.bufferBudget.heldConnections).toBeLessThanOrEqual(HELD_CONNECTIONS);
      expect(health.bufferBudget.heldConnectionsLimit).toBe(HELD_CONNECTIONS);
      expect(fds - fdsBefore).toBeLessThanOrEqual(HELD_CONNECTIONS + 8);
    } finally {
      for (const socket of sockets) socket.destroy();
    }
    // A connection whose pipelined requests wait is not read, so its client's leaving is seen when the hang ends.
    await expect.poll(async () => (await budgetOf(server.url)).heldConnections, { timeout: 15_000 }).toBe(0);
    // 100 small creates, each on its own connection: the rule holds 64; each next one is answered 503 at once, closed.
    const small = JSON.stringify({ ...PAYMENT, amount: 100 });
    const answers: string[] = Array.from({ length: 100 }, () => '');
    const held = await Promise.all(
      answers.map(async (_, i) => {
        const socket = await client(
          port,
          create.replace(/Content-Length: \d+\r\n\r\n[^]*$/, `Content-Length: ${small.length}\r\n\r\n${small}`),
        );
        socket.on('data', (chunk: Buffer) => (answers[i] += chunk.toString('latin1')));
        socket.resume();
        return socket;
      }),
    );
    try {
      await expect
        .poll(() => answers.filter((answer) => answer.startsWith('HTTP/1.1 503')).length, { timeout: 10_000 })
        .toBe(100 - HELD_CONNECTIONS);
      const refused = answers.find((answer) => answer.startsWith('HTTP/1.1 503'))!;
      expect(refused).toMatch(/\r\nRetry-After: 1\r\n/i);
      expect(refused).toMatch(/\r\nConnection: close\r\n/i);
      expect(refused).toContain('"code":"SERVICE_UNAVAILABLE"');
      await expect.poll(() => held.filter((socket) => socket.closed).length).toBe(100 - HELD_CONNECTIONS);
      expect((await budgetOf(server.url)).heldConnections).toBe(HELD_CONNECTIONS);
      // The held ones, and the few the health checks use: each refused one was closed.
      expect(descriptors(pid) - fdsBefore).toBeLessThanOrEqual(HELD_CONNECTIONS + 8);
    } finally {
      for (const socket of held) socket.destroy();
    }
  });

  it('past the budget a request that would add to it gets 503 with Retry-After; others are served; under it again, served', async () => {
    const server = await useServer({ bufferBudget: 2_000_000 }, 'test');
    const key = 'sk_budget_delay';
    const sandbox = api(server.url, key);
    const rule = { method: 'POST', path: '/api/v1/va-payments', fault: { type: 'delay', ms: 4_000 }, times: 3 };
    expect((await sandbox.post('/sandbox/v1/api-faults', rule)).status).toBe(201);
    const large = JSON.stringify({ ...PAYMENT, amount: 100, unknownField: 'x'.repeat(1_000_000) });
    const post = (body: string) =>
      fetch(`${server.url}/api/v1/va-payments`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body,
      });
    const health = async () =>
      ((await (await fetch(`${server.url}/health`)).json()) as { bufferBudget: { used: number; limit: number } })
        .bufferBudget;
    // Two 1 MB bodies held by the delay, one after the other: the budget (2,000,000 bytes) is spent.
    const held = [post(large)];
    await expect.poll(async () => (await health()).used, { timeout: 5_000 }).toBeGreaterThan(1_000_000);
    held.push(post(large));
    await expect.poll(async () => (await health()).used, { timeout: 5_000 }).toBeGreaterThanOrEqual(2_000_000);
    const refused = await post(JSON.stringify({ ...PAYMENT, amount: 100 }));
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(await refused.json()).toMatchObject({
      success: false,
      error: { code: 'SERVICE_UNAVAILABLE' },
      path: '/api/v1/va-payments',
    });
    expect(
      (await fetch(`${server.url}/sandbox/v1/export`, { headers: { authorization: `Bearer ${key}` } })).status,
    ).toBe(503);
    // What adds nothing is served as usual.
    expect((await health()).limit).toBe(2_000_000);
    expect((await sandbox.get('/api/v1/va-payments?limit=1')).status).toBe(200);
    // The held answers go out; under the budget again, a create is served.
    expect((await Promise.all(held)).map((answer) => answer.status)).toEqual([400, 400]);
    expect((await post(JSON.stringify({ ...PAYMENT, amount: 100 }))).status).toBe(201);
    expect((await health()).used).toBeLessThan(100_000);
  });

  it('the streamed export is byte for byte the one built whole in process: dropped events, attempts, odd keys', async () => {
    const server = await useServer(
      { clock: new FakeClock(Date.parse('2026-11-21T12:00:00Z')), retryDelays: [1] },
      'test',
    );
    const key = 'sk_budget_bytes';
    const sandbox = api(server.url, key);
    await sandbox.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 100 }); // no URL: its event is dropped
    await sandbox.data('POST', '/api/v1/va-payments', {
      ...PAYMENT,
      amount: 200,
      callbackUrl: 'http://127.0.0.1:1/refused',
    });
    for (const idempotencyKey of ['123', '__proto__', 'toString']) {
      const answer = await fetch(`${server.url}/api/v1/va-payments`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          'idempotency-key': idempotencyKey,
        },
        body: JSON.stringify({ ...PAYMENT, amount: 300 }),
      });
      expect(answer.status).toBe(201);
    }
    await eventually(
      async () => (await sandbox.list('/sandbox/v1/deliveries?status=retrying')).pagination.total === 1,
      10_000,
      'a failed attempt',
    );
    const headers = { authorization: `Bearer ${key}` };
    const streamed = await (await fetch(`${server.url}/sandbox/v1/export`, { headers })).text();
    const whole = await (
      await server.app.request('/sandbox/v1/export', { headers: { ...headers, host: '127.0.0.1' } })
    ).text();
    expect(streamed).toBe(whole);
    const doc = JSON.parse(streamed).data;
    expect(Object.keys(doc.account.idempotency)).toEqual(['123', '__proto__', 'toString']);
    // Four dropped events' first deliveries (never stored) and the stored one with its attempt.
    expect(Object.keys(doc.account.deliveries)).toHaveLength(5);
  });
});
