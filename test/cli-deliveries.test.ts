import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { api, freePort, keyValues, PAYMENT, runCli, spawnCli, useCliSandbox, useReceiver, useTmp } from './helpers.js';

const { account } = await useCliSandbox('sk_cli_deliveries');

/** `va-sandbox receiver` as a child process, and the URL it says it listens on. */
async function receiver(args: string[] = []) {
  const cli = spawnCli(['receiver', '--port', '0', ...args]);
  const url = /listening on (http:\/\/\S+?):? /.exec(await cli.waitFor(/listening on/, 'stderr'))![1]!;
  return { ...cli, url };
}

/** The JSON lines a `--json` stream printed so far. */
const jsonLines = (text: string) =>
  text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));

describe('receiver', () => {
  it('prints each callback: method, path, answered status, key headers and the pretty body, in the order raised', async () => {
    const { cli } = account();
    const catcher = await receiver();
    const created = await cli([
      'payments',
      'create',
      '--amount',
      '1500',
      '--lock',
      'amount',
      '--callback-url',
      `${catcher.url}/callbacks`,
      '--json',
    ]);
    const payment = JSON.parse(created.stdout);
    await cli(['transfer', '--to', 'SANDBOX.HUB.COBROS', '--amount', '1500']);
    const out = await catcher.waitFor(/(POST \/callbacks {2}answered 200[^]*){3}/);
    const callbacks = out.split(/^(?=POST )/m);
    expect(callbacks.map((text) => /X-Service-Event-Type: (\S+)/.exec(text)?.[1])).toEqual([
      'created',
      'cash_in_received',
      'succeeded',
    ]);
    const first = callbacks[0]!.split('\n');
    expect(first[0]).toMatch(/^POST \/callbacks {2}answered 200 {2}\d{4}-\d\d-\d\dT/);
    expect(first).toContain('  Content-Type: application/json');
    expect(first).toContain('  User-Agent: Service-VA-Callback/1.0');
    expect(first.find((line) => line.startsWith('  X-Service-Event-Id: '))).toMatch(
      /^ {2}X-Service-Event-Id: [0-9a-f-]{36}$/,
    );
    expect(first).not.toContain('  Host: ');
    expect(first).toContain('  "eventType": "created",');
    expect(first).toContain(`  "vaPaymentId": "${payment.id}",`);
    expect(callbacks[2]).toContain('"remainingAmount": 0');
  });

  it('--json prints one JSON line per callback; --fail-first N answers 500 to the first N, so the sandbox retries', async () => {
    const { cli, json } = account();
    const catcher = await receiver(['--json', '--fail-first', '1']);
    await cli(['payments', 'create', '--amount', '10', '--callback-url', `${catcher.url}/hook`]);
    await catcher.waitFor(/\n/);
    const [failed] = jsonLines(catcher.stdout());
    expect(failed).toMatchObject({ method: 'POST', path: '/hook', status: 500, body: { eventType: 'created' } });
    expect(failed.headers['x-service-event-type']).toBe('created');

    const retrying = (await json(['deliveries', 'list', '--status', 'retrying'])).data;
    expect(retrying).toHaveLength(1);
    expect(retrying[0]).toMatchObject({
      eventType: 'created',
      attempts: 1,
      lastResponseStatus: 500,
      lastError: 'http_status',
    });

    await cli(['clock', 'advance', '5s']);
    await catcher.waitFor(/\n.*\n/);
    const [, retried] = jsonLines(catcher.stdout());
    expect(retried).toMatchObject({ path: '/hook', status: 200, body: failed.body });
    expect(retried.headers['x-service-event-id']).toBe(failed.headers['x-service-event-id']);
    const shown = JSON.parse((await cli(['deliveries', 'show', retrying[0].id, '--json'])).stdout);
    expect(shown.status).toBe('delivered');
    expect(shown.attempts.map((a: { responseStatus: number }) => a.responseStatus)).toEqual([500, 200]);
  });

  it('--status answers every request with that status', async () => {
    const { cli, json } = account();
    const catcher = await receiver(['--status', '503', '--json']);
    await cli(['payments', 'create', '--callback-url', `${catcher.url}/x`]);
    await catcher.waitFor(/\n/);
    expect(jsonLines(catcher.stdout())[0].status).toBe(503);
    const [delivery] = (await json(['deliveries', 'list'])).data;
    expect(delivery).toMatchObject({ status: 'retrying', lastResponseStatus: 503 });
  });

  it('a port in use is one line and exit 1; a bad --status is a usage error', async () => {
    const taken = await useReceiver();
    const port = new URL(taken.url).port;
    const run = await runCli(['receiver', '--port', port]);
    expect(run).toMatchObject({
      code: 1,
      stderr: `va-sandbox: port ${port} on 127.0.0.1 is already in use; pick another with --port\n`,
    });
    expect((await runCli(['receiver', '--status', '99'])).code).toBe(2);
  });

  it('stops on SIGINT with exit 0', async () => {
    const catcher = await receiver();
    catcher.child.kill('SIGINT');
    expect(await catcher.exited).toBe(0);
  });
});

describe('deliveries list, show, redeliver', () => {
  it('show prints the request exactly as sent (headers and body bytes) and each attempt with its response', async () => {
    const { cli, api, json } = account();
    const target = await useReceiver((_request, index) =>
      index === 0 ? { status: 500, body: 'try later' } : { status: 204, body: '' },
    );
    const payment = await api.data('POST', '/api/v1/va-payments', { ...PAYMENT, callbackUrl: `${target.url}/cb` });
    await target.waitFor(1);
    await api.data('POST', '/sandbox/v1/clock/advance', { seconds: 5 });
    const [sent] = await target.waitFor(2);

    const list = await json(['deliveries', 'list', '--event-type', 'created']);
    expect(list.pagination.total).toBe(1);
    const [delivery] = list.data;
    expect(delivery).toMatchObject({
      eventType: 'created',
      url: `${target.url}/cb`,
      status: 'delivered',
      attempts: 2,
      lastResponseStatus: 204,
    });

    const show = await cli(['deliveries', 'show', delivery.id]);
    expect(show.code).toBe(0);
    const [summary, request, body, ...attempts] = show.stdout.trimEnd().split('\n\n');
    expect(keyValues(summary!)).toMatchObject({
      id: delivery.id,
      status: 'delivered',
      eventType: 'created',
      vaPaymentId: payment.id,
      attempts: '2',
    });
    expect(request!.split('\n')).toEqual([
      'request (as sent)',
      `POST ${target.url}/cb`,
      'Content-Type: application/json',
      'User-Agent: Service-VA-Callback/1.0',
      `X-Service-Event-Id: ${sent!.headers['x-service-event-id']}`,
      'X-Service-Event-Type: created',
    ]);
    expect(body).toBe(sent!.raw);
    expect(attempts).toHaveLength(2);
    // Each attempt says where it went.
    expect(attempts[0]).toMatch(
      new RegExp(`^attempt 1 {2}\\S+ {2}HTTP 500 {2}\\d+ ms {2}=> ${target.url}/cb\\ntry later$`),
    );
    expect(attempts[1]).toMatch(new RegExp(`^attempt 2 {2}\\S+ {2}HTTP 204 {2}\\d+ ms {2}=> ${target.url}/cb$`));
  });

  it('redeliver makes a new delivery of the same event: same eventId, sent again', async () => {
    const { cli, api, json } = account();
    const target = await useReceiver();
    await api.data('POST', '/api/v1/va-payments', { ...PAYMENT, callbackUrl: `${target.url}/cb` });
    const [first] = await target.waitFor(1);
    const [original] = (await json(['deliveries', 'list'])).data;

    const run = await cli(['deliveries', 'redeliver', original.id, '--json']);
    expect(run.code).toBe(0);
    const redelivery = JSON.parse(run.stdout);
    expect(redelivery).toMatchObject({ eventId: original.eventId, redeliveryOf: original.id, eventType: 'created' });
    expect(redelivery.id).not.toBe(original.id);
    const [, again] = await target.waitFor(2);
    expect(again!.headers['x-service-event-id']).toBe(first!.headers['x-service-event-id']);
    expect(again!.raw).toBe(first!.raw);

    const human = await cli(['deliveries', 'redeliver', original.id]);
    expect(human.stdout.split('\n')[0]).toMatch(new RegExp(`^redelivery [0-9a-f-]{36} of ${original.id} queued$`));
  });

  it('human list: a table of the deliveries; a dropped one says why', async () => {
    const { cli, api } = account();
    const payment = await api.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 1 });
    const run = await cli(['deliveries', 'list']);
    const [header, row, footer] = run.stdout.trimEnd().split('\n');
    expect(header).toMatch(
      /^id\s+status\s+eventType\s+for\s+attempts\s+lastResponseStatus\s+lastError\s+url\s+updatedAt$/,
    );
    expect(row).toMatch(
      new RegExp(
        `^[0-9a-f-]{36}\\s+dropped\\s+created\\s+payment ${payment.id}\\s+0\\s+-\\s+-\\s+no callbackUrl or successUrl/failureUrl configured\\s+\\S+$`,
      ),
    );
    expect(footer).toBe('page 1 of 1 · 1 delivery');
  });

  it('errors: an unknown delivery is 404, a dropped one cannot be redelivered, a bad filter is the API validation error', async () => {
    const { cli, api } = account();
    const unknown = await cli(['deliveries', 'show', '00000000-0000-4000-8000-000000000000']);
    expect(unknown).toMatchObject({
      code: 1,
      stderr: 'va-sandbox: NOT_FOUND: Delivery 00000000-0000-4000-8000-000000000000 not found\n',
    });
    await api.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 1 });
    const [dropped] = (await api.list('/sandbox/v1/deliveries')).data;
    const redeliver = await cli(['deliveries', 'redeliver', dropped.id]);
    expect(redeliver.code).toBe(1);
    expect(redeliver.stderr).toMatch(/^va-sandbox: INVALID_STATE: .*no URL to redeliver to: give one as \{"url"\}\n$/);
    const filter = await cli(['deliveries', 'list', '--status', 'lost']);
    expect(filter.code).toBe(1);
    expect(filter.stderr).toMatch(/^va-sandbox: VALIDATION_ERROR: Invalid query: --status: /);
  });
});

describe('deliveries list --follow', () => {
  it('--json streams one JSON line per new attempt until interrupted, then exits 0', async () => {
    const { env, api } = account();
    const target = await useReceiver();
    const follow = spawnCli(['deliveries', 'list', '--follow', '--json'], env);
    await follow.waitFor(/following delivery attempts/, 'stderr');
    const payment = await api.data('POST', '/api/v1/va-payments', {
      ...PAYMENT,
      amount: 700,
      lockMode: 'amount',
      callbackUrl: `${target.url}/cb`,
    });
    await api.data('POST', '/sandbox/v1/transfers', { to: 'SANDBOX.HUB.COBROS', total: 700 });
    await follow.waitFor(/(\n.*){3}/);
    const lines = jsonLines(follow.stdout());
    expect(
      lines.map((line) => [
        line.type,
        line.delivery.eventType,
        line.delivery.status,
        line.attempt.n,
        line.attempt.responseStatus,
      ]),
    ).toEqual([
      ['delivery', 'created', 'delivered', 1, 200],
      ['delivery', 'cash_in_received', 'delivered', 1, 200],
      ['delivery', 'succeeded', 'delivered', 1, 200],
    ]);
    expect(lines[0].delivery.url).toBe(`${target.url}/cb`);
    expect((await target.waitFor(3))[0]!.body.vaPaymentId).toBe(payment.id);
    follow.child.kill('SIGINT');
    expect(await follow.exited).toBe(0);
  });

  it('human mode prints the list, then a line per attempt; filters apply to the live attempts too', async () => {
    const { env, api } = account();
    const target = await useReceiver((_request, index) => ({ status: index === 0 ? 500 : 200 }));
    const follow = spawnCli(['deliveries', 'list', '--follow', '--event-type', 'created'], env);
    await follow.waitFor(/following/, 'stderr');
    expect(follow.stdout()).toBe('no deliveries\n');
    const payment = await api.data('POST', '/api/v1/va-payments', {
      ...PAYMENT,
      amount: 5,
      lockMode: 'amount',
      callbackUrl: `${target.url}/cb`,
    });
    await api.data('POST', '/sandbox/v1/transfers', { to: 'SANDBOX.HUB.COBROS', total: 5 });
    await target.waitFor(3);
    await api.data('POST', '/sandbox/v1/clock/advance', { seconds: 5 });
    await target.waitFor(4);
    const out = await follow.waitFor(/attempt 2/);
    const lines = out.trimEnd().split('\n').slice(1);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(
      new RegExp(
        `^\\S+Z {2}retrying {3}created {11}payment ${payment.id} {2}attempt 1 {2}HTTP 500 +${target.url}/cb {2}[0-9a-f-]{36}$`,
      ),
    );
    expect(lines[1]).toMatch(
      new RegExp(
        `^\\S+Z {2}delivered {2}created {11}payment ${payment.id} {2}attempt 2 {2}HTTP 200 +${target.url}/cb {2}[0-9a-f-]{36}$`,
      ),
    );
    follow.child.kill('SIGINT');
    expect(await follow.exited).toBe(0);
  });

  it('a bad filter ends --follow at once with the API validation error (exit 1), instead of streaming', async () => {
    const { cli } = account();
    const run = await cli(['deliveries', 'list', '--follow', '--event-type', 'paid']);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^va-sandbox: VALIDATION_ERROR: Invalid query: --event-type: /);
  });

  it('no sandbox to follow: exit 3 with the hint to start one', async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const run = await runCli(['deliveries', 'list', '--follow'], { VA_SANDBOX_URL: url });
    expect(run).toMatchObject({
      code: 3,
      stdout: '',
      stderr: `va-sandbox: no sandbox at ${url} — start one with \`va-sandbox start\`\n`,
    });
  });
});

describe('deliveries list --follow through a restart of the server', () => {
  it('says on stderr that the sandbox went away, reconnects when it is back, and goes on printing attempts', async () => {
    const receiver = await useReceiver();
    const data = join(useTmp(), 'state.db');
    const port = String(await freePort());
    const start = async () => {
      const server = spawnCli(['start', '--port', port, '--data', data, '--quiet']);
      await server.waitFor(/listening on/);
      return server;
    };
    const url = `http://127.0.0.1:${port}`;
    const client = api(url, 'sk_follow_restart');
    const env = { VA_SANDBOX_URL: url, VA_SANDBOX_API_KEY: client.key };
    let server = await start();
    const follow = spawnCli(['deliveries', 'list', '--follow'], env);
    await follow.waitFor(/following/, 'stderr');
    await client.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 1, callbackUrl: `${receiver.url}/before` });
    await follow.waitFor(/delivered +created +payment \S+ +attempt 1 +HTTP 200 +http:\/\/127\.0\.0\.1:\d+\/before/);

    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
    await follow.waitFor(/went away; reconnecting/, 'stderr');
    server = await start();
    await follow.waitFor(/reconnected to the sandbox/, 'stderr', 15_000);
    await client.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 2, callbackUrl: `${receiver.url}/after` });
    await follow.waitFor(/delivered +created +payment \S+ +attempt 1 +HTTP 200 +http:\/\/127\.0\.0\.1:\d+\/after/);
    expect(follow.child.exitCode).toBeNull();
    follow.child.kill('SIGINT');
    expect(await follow.exited).toBe(0);
    expect(follow.stderr()).not.toMatch(/aborted/);
  }, 30_000);
});
