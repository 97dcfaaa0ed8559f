import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  api,
  type CliProcess,
  eventually,
  freePort,
  PAYMENT,
  ROOT,
  runCli,
  spawnCli,
  stored,
  useReceiver,
  useStream,
  useTmp,
} from './helpers.js';
import { send } from './raw-http.js';

/**
 * docs/scale-out.md's fleet as written: three `va-sandbox start` processes, each with its own database, behind HAProxy
 * (Debian's `haproxy`, which .ci/run installs) with the doc's configuration, its ports changed to free ones.
 */
const DOC = readFileSync(join(ROOT, 'docs', 'scale-out.md'), 'utf8');
const CONFIG = /```haproxy\n([^]*?)```/.exec(DOC)![1]!;
const KEYS = Array.from({ length: 200 }, (_, i) => `sk_fleet_${i}`);
const NAMES = ['a', 'b', 'c'] as const;

const dir = useTmp();
const children: ChildProcess[] = [];
afterAll(() => children.forEach((child) => void child.kill('SIGKILL')));

async function startInstance(name: string, port: number): Promise<CliProcess> {
  const cli = spawnCli(['start', '--port', String(port), '--data', join(dir, `${name}.db`), '--quiet']);
  await eventually(async () => (await fetch(`http://127.0.0.1:${port}/health`)).ok, 15_000, `instance ${name}`);
  return cli;
}

async function startProxy(ports: number[]): Promise<string> {
  const port = await freePort();
  let next = 0;
  const config = CONFIG.replace('bind 127.0.0.1:4580', `bind 127.0.0.1:${port}`).replace(
    /(server \w+ 127\.0\.0\.1:)\d+/g,
    (_, head: string) => head + ports[next++],
  );
  expect(next).toBe(ports.length);
  const file = join(dir, 'fleet.cfg');
  writeFileSync(file, config);
  const proxy = spawn('haproxy', ['-db', '-f', file], { stdio: ['ignore', 'ignore', 'pipe'] });
  let errors = '';
  proxy.stderr!.on('data', (chunk) => (errors += chunk));
  children.push(proxy);
  const url = `http://127.0.0.1:${port}`;
  await eventually(
    async () => {
      if (proxy.exitCode !== null) throw new Error(`haproxy exited with ${proxy.exitCode}: ${errors}`);
      return (await fetch(`${url}/health`)).ok;
    },
    10_000,
    'haproxy',
  );
  return url;
}

/** Runs `work` for every item, `width` at a time. */
async function each<T>(items: T[], width: number, work: (item: T) => Promise<void>): Promise<void> {
  const queue = [...items];
  await Promise.all(
    Array.from({ length: width }, async () => {
      for (let item = queue.shift(); item !== undefined; item = queue.shift()) await work(item);
    }),
  );
}

describe('a fleet of three instances behind HAProxy (docs/scale-out.md)', () => {
  it('keeps each account whole on exactly one instance, and fails only the accounts of an instance that is down', async () => {
    const ports = await Promise.all(NAMES.map(() => freePort()));
    const instances = await Promise.all(NAMES.map((name, i) => startInstance(name, ports[i]!)));
    const proxy = await startProxy(ports);
    const receiver = await useReceiver();

    // Through the proxy, for each key: its live stream, a payment with a callback URL, a transfer that completes it, 60 s of clock.
    const streams = new Map<string, Awaited<ReturnType<typeof useStream>>>();
    await each(KEYS, 20, async (key) => void streams.set(key, await useStream(proxy, key)));
    const payments = new Map<string, string>();
    await each(KEYS, 20, async (key) => {
      const client = api(proxy, key);
      const payment = await client.data('POST', '/api/v1/va-payments', {
        ...PAYMENT,
        amount: 1000,
        callbackUrl: `${receiver.url}/callbacks/${key}`,
      });
      payments.set(key, payment.id);
      await client.data('POST', '/sandbox/v1/transfers', { to: payment.cvu, total: 1000 });
      await client.data('POST', '/sandbox/v1/clock/advance', { seconds: 60 });
    });

    // Every callback arrived once, to its own account's URL, in order.
    await receiver.waitFor(KEYS.length * 3, () => true, 60_000);
    expect(receiver.received).toHaveLength(KEYS.length * 3);
    const owner = new Map<string, string>();
    await each(KEYS, 20, async (key) => {
      const id = payments.get(key)!;
      const callbacks = receiver.received.filter((r) => r.url === `/callbacks/${key}`);
      expect(callbacks.map((r) => [r.body.vaPaymentId, r.body.eventType])).toEqual([
        [id, 'created'],
        [id, 'cash_in_received'],
        [id, 'succeeded'],
      ]);

      // Whole through the proxy: its payment, its transfer, its clock, its deliveries.
      const client = api(proxy, key);
      const list = await client.list('/api/v1/va-payments');
      expect(list.data.map((p: { id: string; status: string }) => [p.id, p.status])).toEqual([[id, 'completed']]);
      expect((await client.list('/sandbox/v1/transfers')).data.map((t: { outcome: string }) => t.outcome)).toEqual([
        'credited',
      ]);
      expect((await client.data('GET', '/sandbox/v1/clock')).offsetSeconds).toBe(60);
      await eventually(
        async () =>
          (await client.list('/sandbox/v1/deliveries')).data.filter((d: { status: string }) => d.status === 'delivered')
            .length === 3,
        15_000,
        `${key}'s deliveries`,
      );

      // Its stream, through the proxy, told its own story and nothing of another account.
      const stream = streams.get(key)!;
      await stream.waitFor(
        (m) => m.event === 'event' && m.data.event.eventType === 'succeeded',
        `${key}'s succeeded event`,
      );
      const events = stream.messages.filter((m) => m.event === 'event');
      expect(events.map((m) => [m.data.event.vaPaymentId, m.data.event.eventType])).toEqual([
        [id, 'created'],
        [id, 'cash_in_received'],
        [id, 'succeeded'],
      ]);
      expect(stream.messages.filter((m) => m.event === 'transfer')).toHaveLength(1);

      // In exactly one instance's database, which holds it whole.
      const holders = NAMES.filter((name) => stored(join(dir, `${name}.db`), key) !== undefined);
      expect(holders).toHaveLength(1);
      expect(Object.keys(stored(join(dir, `${holders[0]}.db`), key).vaPayments)).toEqual([id]);
      owner.set(key, holders[0]!);
    });
    // Hashed over all three.
    for (const name of NAMES) expect([...owner.values()].filter((n) => n === name).length).toBeGreaterThan(20);

    // One instance down: its accounts, and only those, get the proxy's 503 envelope, never another instance's empty account.
    instances[1]!.child.kill('SIGTERM');
    expect(await instances[1]!.exited).toBe(0);
    await each(KEYS, 20, async (key) => {
      const response = await fetch(`${proxy}/api/v1/va-payments`, { headers: { authorization: `Bearer ${key}` } });
      const body: any = await response.json();
      if (owner.get(key) === 'b') {
        expect([response.status, body.error?.code]).toEqual([503, 'SERVICE_UNAVAILABLE']);
      } else {
        expect([response.status, body.data?.map((p: { id: string }) => p.id)]).toEqual([200, [payments.get(key)]]);
      }
    });
    const down = KEYS.find((key) => owner.get(key) === 'b')!;
    const cli = await runCli(['payments', 'list', '--url', proxy, '--api-key', down]);
    expect(cli).toMatchObject({
      code: 1,
      stderr: 'va-sandbox: SERVICE_UNAVAILABLE: the sandbox instance that keeps this API key is down\n',
    });

    // Started again on its database, it serves its accounts as they were.
    await startInstance('b', ports[1]!);
    expect((await api(proxy, down).list('/api/v1/va-payments')).data.map((p: { id: string }) => p.id)).toEqual([
      payments.get(down),
    ]);
  }, 180_000);
  it('sends every spelling of a key the server takes as one to the same instance: 10 keys × 6 spellings', async () => {
    const names = ['spelling-a', 'spelling-b', 'spelling-c'];
    const ports = await Promise.all(names.map(() => freePort()));
    await Promise.all(names.map((name, i) => startInstance(name, ports[i]!)));
    const proxy = await startProxy(ports);
    const keys = Array.from({ length: 10 }, (_, i) => `sk_spelling_${i}`);
    const spellings = (key: string) => [
      `Bearer ${key}`,
      `bearer ${key}`,
      `Bearer  ${key}`,
      `Bearer ${key} `,
      `Bearer\t${key}`,
      `BEARER ${key}`,
    ];
    await each(keys, 10, async (key) => {
      for (const authorization of spellings(key)) {
        const answer = await send(proxy, 'POST', '/api/v1/va-payments', { ...PAYMENT, amount: 10 }, { authorization });
        expect('status' in answer && answer.status, `${JSON.stringify(authorization)}: ${JSON.stringify(answer)}`).toBe(
          201,
        );
      }
    });
    for (const key of keys) {
      const holders = names.filter((name) => stored(join(dir, `${name}.db`), key) !== undefined);
      expect(holders, key).toHaveLength(1);
      expect(Object.keys(stored(join(dir, `${holders[0]}.db`), key).vaPayments), key).toHaveLength(
        spellings(key).length,
      );
    }
  }, 60_000);
  it('an instance killed mid-request: what its clients in flight see, and a retry with the same Idempotency-Key makes nothing twice', async () => {
    const names = ['dying-a', 'dying-b', 'dying-c'];
    const ports = await Promise.all(names.map(() => freePort()));
    const instances = await Promise.all(names.map((name, i) => startInstance(name, ports[i]!)));
    const proxy = await startProxy(ports);
    const key = 'sk_dying';
    const client = api(proxy, key);
    // Each create is carried out and stored at once; its answer leaves 5 s later, long after the kill.
    await client.data('POST', '/sandbox/v1/api-faults', {
      method: 'POST',
      path: '/api/v1/va-payments',
      fault: { type: 'delay', ms: 5000 },
      times: 11,
    });
    const owner = names.findIndex((name) => stored(join(dir, `${name}.db`), key) !== undefined);
    const body = { ...PAYMENT, amount: 10 };
    const headers = (i: number) => ({ authorization: `Bearer ${key}`, 'idempotency-key': `order-${i}` });
    const throughProxy = Array.from({ length: 10 }, (_, i) =>
      send(proxy, 'POST', '/api/v1/va-payments', body, headers(i)),
    );
    // And one sent to the instance itself, as a client of a single sandbox would.
    const direct = send(`http://127.0.0.1:${ports[owner]}`, 'POST', '/api/v1/va-payments', body, headers(10));
    await eventually(
      () => Object.keys(stored(join(dir, `${names[owner]}.db`), key)?.vaPayments ?? {}).length === 11,
      10_000,
      'the creates stored',
    );
    instances[owner]!.child.kill('SIGKILL');
    const outcomes = await Promise.all(throughProxy);
    console.log(
      `killed mid-request: ${JSON.stringify(outcomes.map((o) => ('error' in o ? o.error : `${o.status} ${o.body?.error?.code}`)))}`,
    );
    for (const outcome of outcomes)
      expect('error' in outcome ? outcome.error : [outcome.status, outcome.body.error.code]).toEqual([
        502,
        'BAD_GATEWAY',
      ]);
    expect(await direct).toMatchObject({ error: 'ECONNRESET' });
    // Each was stored before the kill: the retry with its Idempotency-Key replays it, and makes nothing twice.
    await startInstance(names[owner]!, ports[owner]!);
    const retried = await Promise.all(
      Array.from({ length: 11 }, (_, i) =>
        client.post('/api/v1/va-payments', body, { 'idempotency-key': `order-${i}` }),
      ),
    );
    console.log(
      `retried: ${JSON.stringify(retried.map((r) => `${r.status} ${r.headers.get('idempotent-replayed')}`))}`,
    );
    expect(retried.map((r) => [r.status, r.headers.get('idempotent-replayed')])).toEqual(Array(11).fill([201, 'true']));
    expect((await client.list('/api/v1/va-payments?limit=100')).pagination.total).toBe(11);
  }, 60_000);
});
