import { execFile, spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { api, BIN, freePort, keyValues, PAYMENT, runCli, useCliSandbox } from './helpers.js';

const { server, account } = await useCliSandbox('sk_cli_payments');

/** The only line on stderr, asserting there is exactly one. */
const oneLine = (stderr: string) => {
  const lines = stderr.trimEnd().split('\n');
  expect(lines).toHaveLength(1);
  return lines[0];
};

describe('payments create', () => {
  it('--json prints exactly the created VA payment: every option lands in its contract field', async () => {
    const { cli, api } = account();
    const run = await cli([
      'payments',
      'create',
      '--json',
      '--amount',
      '2500.50',
      '--lock',
      'amount_and_time',
      '--ttl',
      '15m',
      '--currency',
      'ARS',
      '--client-id',
      '3f1c2b1e-1a2b-4c3d-8e9f-0a1b2c3d4e5f',
      '--client-tax-id',
      '20-12345678-3',
      '--client-name',
      'Ana Pérez',
      '--success-url',
      'https://shop.test/ok',
      '--failure-url',
      'https://shop.test/ko',
      '--external-reference',
      'order-17',
      '--metadata',
      'order=A-17',
      '--metadata',
      'note=a=b',
      '--hub',
      '1',
    ]);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    const payment = JSON.parse(run.stdout);
    expect(payment).toMatchObject({
      status: 'waiting',
      lockMode: 'amount_and_time',
      amount: 2500.5,
      currency: 'ARS',
      ttlSeconds: 900,
      clientId: '3f1c2b1e-1a2b-4c3d-8e9f-0a1b2c3d4e5f',
      clientTaxId: '20-12345678-3',
      clientName: 'Ana Pérez',
      callbackUrl: null,
      successUrl: 'https://shop.test/ok',
      failureUrl: 'https://shop.test/ko',
      externalReference: 'order-17',
      metadata: { order: 'A-17', note: 'a=b' },
      paymentHubId: 1,
      remainingAmount: 2500.5,
    });
    // Only the response's data: the very object the API now returns for this id.
    expect(payment).toEqual(await api.data('GET', `/api/v1/va-payments/${payment.id}`));
  });

  it('--callback-url alone, and an open amount when --amount is absent', async () => {
    const { cli } = account();
    const run = await cli(['payments', 'create', '--callback-url', 'http://127.0.0.1:9/callbacks', '--json']);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({
      lockMode: 'time',
      amount: null,
      ttlSeconds: 1800,
      callbackUrl: 'http://127.0.0.1:9/callbacks',
      successUrl: null,
    });
  });

  it('human mode: a key/value block with the amount in ARS, and on stderr how to pay it', async () => {
    const { cli } = account();
    const run = await cli([
      'payments',
      'create',
      '--amount',
      '1500',
      '--lock',
      'amount',
      '--external-reference',
      'ref-1',
      '--metadata',
      'order=42',
    ]);
    expect(run.code).toBe(0);
    expect(keyValues(run.stdout)).toMatchObject({
      status: 'waiting',
      lockMode: 'amount',
      amount: 'ARS 1500.00',
      alias: 'SANDBOX.HUB.COBROS',
      remainingAmount: 'ARS 1500.00',
      externalReference: 'ref-1',
      metadata: 'order=42',
      callbackDelivery: '1 event: 1 dropped; last created',
    });
    expect(keyValues(run.stdout).id).toMatch(/^[0-9a-f-]{36}$/);
    expect(run.stdout).not.toMatch(/\x1b\[/); // stdout is not a terminal: no colour codes
    expect(run.stderr).toBe('pay it: va-sandbox transfer --to SANDBOX.HUB.COBROS --amount 1500\n');
  });
});

describe('payments list', () => {
  it('--json prints the page: vaPayments newest first and pagination; filters reach the API', async () => {
    const { api, json } = account();
    const first = await api.data('POST', '/api/v1/va-payments', {
      ...PAYMENT,
      amount: 100,
      externalReference: 'a',
      clientTaxId: '20-1',
    });
    const second = await api.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 200, externalReference: 'b' });
    const third = await api.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 300, externalReference: 'a' });
    await api.data('POST', `/api/v1/va-payments/${second.id}/cancel`);

    const all = await json(['payments', 'list']);
    expect(all.data.map((p: { id: string }) => p.id)).toEqual([third.id, second.id, first.id]);
    expect(all.pagination).toEqual({ page: 1, limit: 20, total: 3, totalPages: 1 });

    const byRef = await json(['payments', 'list', '--external-reference', 'a', '--status', 'waiting']);
    expect(byRef.data.map((p: { id: string }) => p.id)).toEqual([third.id, first.id]);
    const cancelled = await json(['payments', 'list', '--status', 'cancelled,expired']);
    expect(cancelled.data.map((p: { id: string }) => p.id)).toEqual([second.id]);
    const byTaxId = await json(['payments', 'list', '--client-tax-id', '20-1']);
    expect(byTaxId.data.map((p: { id: string }) => p.id)).toEqual([first.id]);
    const paged = await json(['payments', 'list', '--limit', '1', '--page', '2']);
    expect(paged.data.map((p: { id: string }) => p.id)).toEqual([second.id]);
    expect(paged.pagination).toEqual({ page: 2, limit: 1, total: 3, totalPages: 3 });
    const window = await json(['payments', 'list', '--created-from', third.createdAt, '--created-to', third.createdAt]);
    expect(window.data.map((p: { id: string }) => p.id)).toEqual([third.id]);
  });

  it('human mode: an aligned table with a header, amounts in ARS, and where the page stands', async () => {
    const { cli, api } = account();
    const payment = await api.data('POST', '/api/v1/va-payments', {
      ...PAYMENT,
      amount: 1234.5,
      externalReference: 'inv-9',
    });
    const run = await cli(['payments', 'list']);
    expect(run.code).toBe(0);
    const [header, row, footer] = run.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^id\s+status\s+lockMode\s+amount\s+totalReceived\s+alias\s+externalReference\s+createdAt$/);
    expect(row).toContain(payment.id);
    expect(row).toMatch(/waiting\s+time\s+ARS 1234\.50\s+ARS 0\.00\s+\S+\s+inv-9/);
    // Aligned: every column starts where its header does.
    expect(row!.indexOf('waiting')).toBe(header!.indexOf('status'));
    expect(row!.indexOf(payment.createdAt)).toBe(header!.indexOf('createdAt'));
    expect(footer).toBe('page 1 of 1 · 1 VA payment');
    expect((await account().cli(['payments', 'list'])).stdout).toBe('no VA payments\n');
  });

  it("an unknown status is the API's validation error: exit 1 with its code and the bad field", async () => {
    const { cli } = account();
    const run = await cli(['payments', 'list', '--status', 'paid']);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(oneLine(run.stderr)).toMatch(/^va-sandbox: VALIDATION_ERROR: Invalid query: --status: /);
  });
});

describe('payments get and cancel', () => {
  it('get --json is the API object; human mode shows the cash-ins and the callback delivery summary', async () => {
    const { cli, api } = account();
    const payment = await api.data('POST', '/api/v1/va-payments', {
      ...PAYMENT,
      amount: 5000,
      lockMode: 'amount_and_time',
    });
    const transfer = await api.data('POST', '/sandbox/v1/transfers', { to: payment.cvu, total: 5000, taxes: 30 });

    const json = await cli(['payments', 'get', payment.id, '--json']);
    expect(json.code).toBe(0);
    const got = JSON.parse(json.stdout);
    expect(got).toEqual(await api.data('GET', `/api/v1/va-payments/${payment.id}`));
    expect(got).toMatchObject({ status: 'completed', totalReceived: 5000, receivedAmount: 4970, remainingAmount: 0 });

    const human = await cli(['payments', 'get', payment.id]);
    expect(keyValues(human.stdout)).toMatchObject({
      status: 'completed',
      totalReceived: 'ARS 5000.00',
      receivedAmount: 'ARS 4970.00',
      remainingAmount: 'ARS 0.00',
      callbackDelivery: '3 events: 3 dropped; last succeeded',
    });
    expect(human.stdout).toMatch(/^cashIns$/m);
    expect(human.stdout).toMatch(
      new RegExp(`^${transfer.operationId}\\s+ARS 5000\\.00\\s+ARS 30\\.00\\s+ARS 4970\\.00\\s`, 'm'),
    );
  });

  it('cancel --json is the cancelled payment; human mode leads with the API message; a second cancel is INVALID_STATE', async () => {
    const { cli, api } = account();
    const payment = await api.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 10 });
    const json = await cli(['payments', 'cancel', payment.id, '--json']);
    expect(json.code).toBe(0);
    const cancelled = JSON.parse(json.stdout);
    expect(cancelled).toMatchObject({ id: payment.id, status: 'cancelled' });
    expect(cancelled.cancelledAt).not.toBeNull();

    const other = await api.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 11 });
    const human = await cli(['payments', 'cancel', other.id]);
    const [message, ...rest] = human.stdout.split('\n');
    expect(message).toBe('VA payment cancelled');
    expect(keyValues(rest.join('\n'))).toMatchObject({ id: other.id, status: 'cancelled' });

    const again = await cli(['payments', 'cancel', payment.id]);
    expect(again.code).toBe(1);
    expect(oneLine(again.stderr)).toMatch(/^va-sandbox: INVALID_STATE: .*cancelled/);
  });
});

describe('errors', () => {
  it("an unknown id is the API's 404: exit 1, one line with NOT_FOUND and its message, nothing on stdout", async () => {
    const { cli } = account();
    const run = await cli(['payments', 'get', '00000000-0000-4000-8000-000000000000']);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(oneLine(run.stderr)).toBe(
      'va-sandbox: NOT_FOUND: VA payment 00000000-0000-4000-8000-000000000000 not found',
    );
    const json = await cli(['payments', 'get', '00000000-0000-4000-8000-000000000000', '--json']);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stderr)).toEqual({
      code: 'NOT_FOUND',
      message: 'VA payment 00000000-0000-4000-8000-000000000000 not found',
      details: [],
      status: 404,
    });
  });

  it('a body the API refuses is its validation error: exit 1 naming the flag the user typed, not the API field', async () => {
    const { cli } = account();
    const run = await cli(['payments', 'create', '--lock', 'amount']);
    expect(run.code).toBe(1);
    expect(oneLine(run.stderr)).toBe(
      'va-sandbox: VALIDATION_ERROR: Invalid request body: --amount: is required with --lock "amount"',
    );
    const ttl = await cli(['payments', 'create', '--ttl', '0']);
    expect(ttl.code).toBe(1);
    expect(oneLine(ttl.stderr)).toMatch(/^va-sandbox: VALIDATION_ERROR: Invalid request body: --ttl: /);
    const hub = await cli(['payments', 'create', '--hub', '99999999999999999999']);
    expect(oneLine(hub.stderr)).toMatch(/^va-sandbox: VALIDATION_ERROR: Invalid request body: --hub: /);
    // With --json the message names the flag too; details stay the API's field paths, for scripts.
    const json = await cli(['payments', 'create', '--ttl', '0', '--json']);
    expect(JSON.parse(json.stderr)).toMatchObject({
      code: 'VALIDATION_ERROR',
      message: expect.stringMatching(/^Invalid request body: --ttl: /),
      details: [expect.stringMatching(/^ttlSeconds: /)],
    });
    const currency = await cli(['payments', 'create', '--currency', 'USD']);
    expect(oneLine(currency.stderr)).toMatch(/^va-sandbox: UNSUPPORTED_CURRENCY: /);
  });

  it('usage errors exit 2 with one line, before anything reaches the API', async () => {
    const { cli, api } = account();
    const cases: [string[], RegExp][] = [
      [
        ['payments', 'create', '--amount', '1.234'],
        /^va-sandbox: option '--amount <ars>' argument '1\.234' is invalid\. must be an amount in ARS with at most 2 decimals/,
      ],
      [
        ['payments', 'create', '--lock', 'sometimes'],
        /^va-sandbox: option '--lock <mode>' argument 'sometimes' is invalid\. Allowed choices are time, amount, amount_and_time/,
      ],
      [
        ['payments', 'create', '--callback-url', 'http://a.test/cb', '--success-url', 'http://a.test/ok'],
        /^va-sandbox: option '--callback-url <url>' cannot be used with option '--success-url <url>'/,
      ],
      [['payments', 'create', '--callback-url', 'not a url'], /must be a URL/],
      [['payments', 'create', '--ttl', '5x'], /must be seconds or a duration like 90s/],
      [
        ['payments', 'list', '--bogus'],
        /^va-sandbox: unknown option '--bogus' \(see va-sandbox payments list --help\)$/,
      ],
      [['payments', 'list', '--limit', 'ten'], /--limit <n>.*must be a whole number/],
      [['payments', 'get'], /^va-sandbox: missing required argument 'id' \(see va-sandbox payments get --help\)$/],
      [['payments', 'refund'], /^va-sandbox: unknown command 'refund'/],
      [['--url', 'ftp://x', 'payments', 'list'], /--url <url>.*must be an http\(s\) URL/],
    ];
    for (const [args, message] of cases) {
      const run = await cli(args);
      expect({ args, code: run.code, stdout: run.stdout }).toEqual({ args, code: 2, stdout: '' });
      expect(oneLine(run.stderr)).toMatch(message);
    }
    expect((await api.list('/api/v1/va-payments')).pagination.total).toBe(0);
  });

  it('no server at the URL: exit 3 with the hint to start one; with --json, one JSON object', async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const run = await runCli(['payments', 'list'], { VA_SANDBOX_URL: url });
    expect(run).toMatchObject({
      code: 3,
      stdout: '',
      stderr: `va-sandbox: no sandbox at ${url} — start one with \`va-sandbox start\`\n`,
    });
    const json = await runCli(['payments', 'list', '--json'], { VA_SANDBOX_URL: url });
    expect(json.code).toBe(3);
    expect(json.stdout).toBe('');
    expect(json.stderr.endsWith('\n') && json.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(JSON.parse(json.stderr)).toEqual({
      code: 'NO_SANDBOX',
      message: `no sandbox at ${url} — start one with \`va-sandbox start\``,
      details: [],
      status: null,
    });
  });

  it('errors for machines: a refusal exits 1 and, with --json, is the envelope’s code, message, details and HTTP status; a usage error exits 2', async () => {
    const { env } = account();
    const refused = await runCli(['payments', 'cancel', '00000000-0000-4000-8000-000000000000', '--json'], env);
    expect(refused.code).toBe(1);
    const error = JSON.parse(refused.stderr);
    expect(error).toMatchObject({ code: 'NOT_FOUND', status: 404, details: [] });
    expect(error.message).toMatch(/00000000-0000-4000-8000-000000000000/);
    const usage = await runCli(['payments', 'create', '--lock', 'sometimes', '--json'], env);
    expect(usage.code).toBe(2);
    expect(JSON.parse(usage.stderr)).toMatchObject({ code: 'USAGE', status: null, details: [] });
    const plain = await runCli(['payments', 'create', '--lock', 'sometimes'], env);
    expect(plain.code).toBe(2);
    expect(plain.stderr).toMatch(/^va-sandbox: .*\(see va-sandbox payments create --help\)\n$/);
  });
});

/** Runs the CLI with a terminal as its stdout, through util-linux `script`. */
const onTerminal = (args: string[], env: Record<string, string>) =>
  new Promise<string>((done, fail) => {
    const command = [process.execPath, BIN, ...args].map((word) => `'${word}'`).join(' ');
    // Without CI: Node (util.styleText) turns colour off under a CI variable it does not recognise (CI=true), on a terminal too.
    const { CI: _ci, FORCE_COLOR: _forced, ...rest } = process.env;
    execFile('script', ['-qec', command, '/dev/null'], { env: { ...rest, ...env } }, (error, stdout) =>
      error ? fail(error) : done(stdout),
    );
  });
const hasScript = spawnSync('script', ['--version']).status === 0;

describe('colour', () => {
  it.skipIf(!hasScript)('statuses are coloured on a terminal, and never with NO_COLOR or TERM=dumb', async () => {
    const { key, api } = account();
    await api.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 5 });
    const env = { VA_SANDBOX_URL: server.url, VA_SANDBOX_API_KEY: key };
    expect(await onTerminal(['payments', 'list'], { ...env, NO_COLOR: '' })).toContain('\x1b[33mwaiting\x1b[39m');
    const plain = await onTerminal(['payments', 'list'], { ...env, NO_COLOR: '1' });
    expect(plain).toMatch(/waiting/);
    expect(plain).not.toContain('\x1b[');
    expect(await onTerminal(['payments', 'list'], { ...env, NO_COLOR: '', TERM: 'dumb' })).not.toContain('\x1b[');
  });

  it('FORCE_COLOR colours what is not a terminal (a CI log)', async () => {
    const { key, api } = account();
    await api.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 5 });
    const env = { VA_SANDBOX_URL: server.url, VA_SANDBOX_API_KEY: key };
    expect((await runCli(['payments', 'list'], { ...env, NO_COLOR: '', FORCE_COLOR: '1' })).stdout).toContain(
      '\x1b[33mwaiting\x1b[39m',
    );
    expect((await runCli(['payments', 'list'], env)).stdout).not.toContain('\x1b[');
  });
});

describe('global options', () => {
  it('--url and --api-key work before the command and after it, and win over the environment', async () => {
    const { key, api } = account();
    const payment = await api.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 77 });
    const elsewhere = { VA_SANDBOX_URL: `http://127.0.0.1:${await freePort()}`, VA_SANDBOX_API_KEY: 'sk_someone_else' };
    const before = await runCli(['--url', server.url, '--api-key', key, '--json', 'payments', 'list'], elsewhere);
    const after = await runCli(['payments', 'list', '--url', server.url, '--api-key', key, '--json'], elsewhere);
    for (const run of [before, after]) {
      expect(run.code).toBe(0);
      expect(JSON.parse(run.stdout).data.map((p: { id: string }) => p.id)).toEqual([payment.id]);
    }
  });

  it('each API key is its own account; without one the CLI sends sk_sandbox', async () => {
    const { cli } = account();
    await cli(['payments', 'create', '--amount', '5']);
    expect(
      JSON.parse((await cli(['payments', 'list', '--json'], { VA_SANDBOX_API_KEY: 'sk_cli_other' })).stdout).pagination
        .total,
    ).toBe(0);
    const defaults = api(server.url, 'sk_sandbox');
    await defaults.data('POST', '/sandbox/v1/reset');
    await runCli(['payments', 'create', '--amount', '6'], { VA_SANDBOX_URL: server.url, VA_SANDBOX_API_KEY: '' });
    expect((await defaults.list('/api/v1/va-payments')).data.map((p: { amount: number }) => p.amount)).toEqual([6]);
  });
});
