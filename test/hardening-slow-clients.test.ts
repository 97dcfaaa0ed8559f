import { connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { SLOW_CLIENT_TIMEOUTS } from '../src/sandbox/http/server.js';
import { api, PAYMENT, useServer, useStream } from './helpers.js';

/**
 * Slow clients (slowloris): connections that open and send nothing, send part of a request's headers and stop, trickle
 * the headers a byte at a time, or send whole headers and then too little of the body. The real server, on a loopback
 * port, with short timeouts: meanwhile it answers another client at once, then it closes every such connection itself
 * (408) once its timeout has passed, not before.
 */
const TIMEOUTS = { headersMs: 700, requestMs: 1_400, checkEveryMs: 50 };
/** How late past its timeout a connection may be closed: Node looks every `checkEveryMs`, and 300 sockets take a while. */
const SLACK_MS = 1_500;

type Kind = 'silent' | 'partial-headers' | 'trickle' | 'partial-body';
const KINDS: Record<Kind, number> = { silent: 50, 'partial-headers': 150, trickle: 20, 'partial-body': 80 };

interface SlowClient {
  kind: Kind;
  socket: Socket;
  /** ms from the start of the test to when the server closed it; null while open. */
  closedAt: number | null;
  received: string;
}

function open(port: number, kind: Kind, started: number): Promise<SlowClient> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const client: SlowClient = { kind, socket, closedAt: null, received: '' };
    socket.on('data', (chunk: Buffer) => (client.received += chunk.toString('latin1')));
    socket.on('close', () => (client.closedAt = performance.now() - started));
    socket.once('error', reject);
    socket.once('connect', () => {
      socket.off('error', reject);
      socket.on('error', () => {}); // a reset after the 408 is the server closing it too
      const head = `POST /api/v1/va-payments HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer sk_slow\r\n`;
      if (kind === 'partial-headers') socket.write(head);
      if (kind === 'trickle') socket.write('P');
      if (kind === 'partial-body')
        socket.write(`${head}Content-Type: application/json\r\nContent-Length: 200\r\n\r\n{"paymentHubId":`);
      resolve(client);
    });
  });
}

// Each test has a server of its own: they run at once.
describe.concurrent('slow clients are timed out', () => {
  it('300 idle or trickling connections neither delay another client nor stay open past the timeouts', async () => {
    const server = await useServer({ timeouts: TIMEOUTS });
    const started = performance.now();
    const clients = (
      await Promise.all(
        (Object.entries(KINDS) as [Kind, number][]).map(([kind, count]) =>
          Promise.all(Array.from({ length: count }, () => open(server.port, kind, started))),
        ),
      )
    ).flat();
    expect(clients).toHaveLength(300);
    // One more byte of headers every 100 ms to the trickling ones: they keep sending, never finish.
    const trickle = `OST /health HTTP/1.1\r\nX-Slow: ${'x'.repeat(10_000)}`;
    let sent = 0;
    const ticker = setInterval(() => {
      const byte = trickle[sent++]!;
      for (const client of clients)
        if (client.kind === 'trickle' && client.closedAt === null) client.socket.write(byte);
    }, 100);

    try {
      // Another client, meanwhile: answered at once, a write as well as a read.
      const sandbox = api(server.url, 'sk_other');
      const before = performance.now();
      const created = await sandbox.post('/api/v1/va-payments', { ...PAYMENT, amount: 100 });
      const health = await sandbox.get('/health');
      const took = performance.now() - before;
      expect(created.status).toBe(201);
      expect(health.status).toBe(200);
      expect(took).toBeLessThan(TIMEOUTS.headersMs / 2);
      expect(
        clients.filter((client) => client.closedAt !== null).map(({ kind, received }) => ({ kind, received })),
      ).toEqual([]);

      // Then the server closes every slow one, each after its own timeout: headers for all but the partial bodies.
      await new Promise((resolve) => setTimeout(resolve, TIMEOUTS.requestMs + SLACK_MS));
      const open = clients.filter((client) => client.closedAt === null).map((client) => client.kind);
      expect(open, 'connections the server left open').toEqual([]);
      for (const client of clients) {
        const timeout = client.kind === 'partial-body' ? TIMEOUTS.requestMs : TIMEOUTS.headersMs;
        expect(
          client.closedAt!,
          `${client.kind} closed after ${Math.round(client.closedAt!)} ms`,
        ).toBeGreaterThanOrEqual(timeout - 50);
        expect(client.closedAt!, `${client.kind} closed after ${Math.round(client.closedAt!)} ms`).toBeLessThan(
          timeout + SLACK_MS,
        );
        expect(client.received, client.kind).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
      }
      // The slow key never got a request through.
      expect((await api(server.url, 'sk_slow').get('/api/v1/va-payments')).body.pagination.total).toBe(0);
    } finally {
      clearInterval(ticker);
      for (const client of clients) client.socket.destroy();
    }
  });

  it('a keep-alive connection is closed when idle past its timeout, and its next request has the headers timeout from its first byte', async () => {
    const server = await useServer({ timeouts: { ...TIMEOUTS, keepAliveMs: 400 } });
    const exchange = async (pauseMs: number) => {
      const socket = connect(server.port, '127.0.0.1');
      const started = performance.now();
      let received = '';
      socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
      const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(performance.now() - started)));
      socket.write(`GET /health HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\n\r\n`);
      if (pauseMs > 0) {
        await new Promise((resolve) => setTimeout(resolve, pauseMs));
        socket.write(`GET /health HTTP/1.1\r\nHost: 127.0.0`);
      }
      return { closedAfter: await closed, received };
    };
    const idle = await exchange(0);
    expect(idle.received).toMatch(/^HTTP\/1\.1 200 /);
    expect(idle.closedAfter).toBeGreaterThanOrEqual(400 - 50);
    expect(idle.closedAfter).toBeLessThan(400 + SLACK_MS);
    // Past the headers timeout counted from the connection's start, but not from the second request's first byte.
    const second = await exchange(300);
    expect(second.closedAfter).toBeGreaterThanOrEqual(300 + TIMEOUTS.headersMs - 50);
    expect(second.closedAfter).toBeLessThan(300 + TIMEOUTS.headersMs + SLACK_MS);
  });

  it('the request timeout bounds receiving a request, not its answer: a live stream outlives it', async () => {
    const server = await useServer({ timeouts: TIMEOUTS });
    const stream = await useStream(server.url, 'sk_stream');
    await new Promise((resolve) => setTimeout(resolve, TIMEOUTS.requestMs + 500));
    await api(server.url, 'sk_stream').post('/api/v1/va-payments', { ...PAYMENT, amount: 100 });
    const message = await stream.waitFor(
      (m) => m.event === 'event' && m.data.event?.eventType === 'created',
      'the created event',
    );
    expect(message.data.event.eventType).toBe('created');
  });

  it('by default a request has 10 s for its headers and 30 s in all, and an idle keep-alive connection 5 s', () => {
    expect(SLOW_CLIENT_TIMEOUTS).toMatchObject({ headersMs: 10_000, requestMs: 30_000, keepAliveMs: 5_000 });
    expect(SLOW_CLIENT_TIMEOUTS.checkEveryMs).toBeLessThanOrEqual(1_000);
  });
});

describe('a client that hangs up mid-body', () => {
  it('is logged as that, not as an internal error, and nothing of its request is done', async () => {
    const lines: string[] = [];
    const server = await useServer({ log: (line) => lines.push(line) }, 'test');
    const socket = connect(server.port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(
      'POST /api/v1/va-payments HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer sk_gone\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n{"paymentHubId": 1,',
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    socket.destroy();
    const deadline = Date.now() + 5_000;
    while (!lines.some((line) => line.includes('hung up')) && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(lines).toContain(
      "POST /api/v1/va-payments: the client hung up before the request's body ended; nothing was done",
    );
    expect(lines.filter((line) => line.includes('internal error'))).toEqual([]);
    expect((await api(server.url, 'sk_gone').list('/api/v1/va-payments')).pagination.total).toBe(0);
  });
});
