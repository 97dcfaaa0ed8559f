import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { type Api, api, eventually, PAYMENT, useServer, useTmp } from './helpers.js';

/**
 * Hardening (c): four hostile callback receivers at once — one never answers, one answers 1 GiB slowly, one resets the
 * connection, one redirects to itself — while the API keeps answering. Each delivery must end recorded with the right
 * error, and 100 API calls made meanwhile must all succeed. Short timeout and retry delays keep it quick.
 */
const GiB = 1024 ** 3;
const closers: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const close of closers.splice(0)) await close();
});

interface Hostile {
  url: string;
  requests: number;
  /** Bytes of response body written (the 1 GiB one). */
  sent: number;
  /** Whether the last streamed answer was cut by the other side before it ended. */
  cut: boolean;
}

/** A real receiver on loopback that reads each request's body, then misbehaves as told. */
async function hostile(behave: (req: IncomingMessage, res: ServerResponse, self: Hostile) => void): Promise<Hostile> {
  const self: Hostile = { url: '', requests: 0, sent: 0, cut: false };
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      self.requests++;
      behave(req, res, self);
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  self.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  closers.push(
    () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  );
  return self;
}

/** Streams up to 1 GiB in 64 KiB chunks, a little at a time and respecting back-pressure; never holds it in memory. */
async function streamGiB(res: ServerResponse, self: Hostile): Promise<void> {
  const chunk = Buffer.alloc(64 * 1024, 'x');
  res.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(GiB) });
  let closed = false;
  res.on('close', () => (closed = true));
  for (let written = 0; written < GiB && !closed; written += chunk.length) {
    if (!res.write(chunk)) await new Promise((done) => (res.once('drain', done), res.once('close', done)));
    self.sent += chunk.length;
    await sleep(2);
  }
  self.cut = closed && !res.writableFinished;
  if (!closed) res.end();
}

describe('hostile callback receivers while the API keeps answering', () => {
  it('hang, 1 GiB slowly, connection reset and a self-redirect end recorded with the right error; 100 API calls meanwhile succeed', {
    timeout: 60_000,
  }, async () => {
    const server = await useServer({ data: join(useTmp(), 'state.db'), callbackTimeoutMs: 1000, retryDelays: [1, 1] });
    const client = api(server.url, 'sk_hostile');

    const silent = await hostile(() => {
      // Never answers: the request stays open until the sandbox gives up.
    });
    const huge = await hostile((_req, res, self) => void streamGiB(res, self));
    const rude = await hostile((req) => req.socket.resetAndDestroy());
    const loop = await hostile((_req, res, self) => res.writeHead(307, { location: self.url }).end('again'));
    const receivers = { silent, huge, rude, loop };

    const payments: Record<string, string> = {};
    for (const [name, receiver] of Object.entries(receivers)) {
      payments[name] = (
        await client.data('POST', '/api/v1/va-payments', {
          ...PAYMENT,
          amount: 100,
          callbackUrl: receiver.url,
          externalReference: name,
        })
      ).id;
    }

    // While those deliveries misbehave: 100 API calls, ten at a time.
    const target = await client.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 999_999 });
    const busy = await hostile(() => {
      // Never answers either: the new payments' callbacks keep more attempts in flight.
    });
    const statuses: number[] = [];
    for (let batch = 0; batch < 10; batch++) {
      const calls = Array.from({ length: 10 }, (_, i) => {
        const n = batch * 10 + i;
        if (n % 4 === 0)
          return client.post('/api/v1/va-payments', { ...PAYMENT, amount: 100 + n, callbackUrl: busy.url });
        if (n % 4 === 1) return client.post('/sandbox/v1/transfers', { to: target.cvu, total: 1 });
        if (n % 4 === 2) return client.get('/sandbox/v1/deliveries');
        return client.get(`/api/v1/va-payments/${target.id}`);
      });
      statuses.push(...(await Promise.all(calls)).map((r) => r.status));
    }
    expect(statuses.filter((s) => s < 200 || s >= 300)).toEqual([]);
    expect(statuses).toHaveLength(100);

    const finished = async (name: string) => {
      const summary = await eventually(
        async () => {
          const list = (await client.list('/sandbox/v1/deliveries?eventType=created&limit=100')).data;
          const found = list.find(
            (d: any) =>
              d.url === receivers[name as keyof typeof receivers].url &&
              d.status !== 'pending' &&
              d.status !== 'retrying',
          );
          return found ?? null;
        },
        30_000,
        `the ${name} delivery to finish`,
      );
      return delivery(client, summary.id, payments[name]!);
    };

    const hung = await finished('silent');
    expect(hung.status).toBe('failed');
    expect(hung.attempts.map((a: any) => [a.responseStatus, a.error])).toEqual([
      [null, 'timeout'],
      [null, 'timeout'],
      [null, 'timeout'],
    ]);

    const streamed = await finished('huge');
    expect(streamed.status).toBe('delivered');
    expect(streamed.attempts).toHaveLength(1);
    expect(streamed.attempts[0]).toMatchObject({ responseStatus: 200, error: null });
    expect(streamed.attempts[0].responseBody).toBe('x'.repeat(2048));
    // The sandbox stopped reading and closed the connection long before 1 GiB.
    await eventually(() => huge.cut, 10_000, 'the 1 GiB answer to be cut off');
    expect(huge.sent).toBeLessThan(GiB / 16);

    const reset = await finished('rude');
    expect(reset.status).toBe('failed');
    expect(reset.attempts.map((a: any) => [a.responseStatus, a.error])).toEqual([
      [null, 'connection_reset'],
      [null, 'connection_reset'],
      [null, 'connection_reset'],
    ]);

    const redirected = await finished('loop');
    expect(redirected.status).toBe('failed');
    expect(redirected.attempts.map((a: any) => [a.responseStatus, a.error])).toEqual([
      [307, 'redirect'],
      [307, 'redirect'],
      [307, 'redirect'],
    ]);
    // Not followed: one request per attempt, no more.
    expect(loop.requests).toBe(3);
    expect(silent.requests).toBe(3);
    expect(rude.requests).toBe(3);

    // And the server still answers.
    expect((await client.post('/api/v1/va-payments', { ...PAYMENT, amount: 10 })).status).toBe(201);
  });
});

/** One delivery in full, checked to be the `created` event of the expected payment. */
async function delivery(client: Api, id: string, paymentId: string) {
  const shown = await client.data('GET', `/sandbox/v1/deliveries/${id}`);
  expect(shown.event).toMatchObject({ eventType: 'created', vaPaymentId: paymentId });
  return shown;
}
