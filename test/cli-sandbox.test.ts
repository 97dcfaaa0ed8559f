import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { freePort, keyValues, PAYMENT, runCli, spawnCli, spawnServer, useCliSandbox, useTmp } from './helpers.js';

const { account } = await useCliSandbox('sk_cli_sandbox');

describe('transfer', () => {
  it('--json prints the transfer: gross total, taxes, net amount, payer, outcome and target', async () => {
    const { api, json } = account();
    const payment = await api.data('POST', '/api/v1/va-payments', {
      ...PAYMENT,
      amount: 5000,
      lockMode: 'amount_and_time',
    });
    const transfer = await json([
      'transfer',
      '--to',
      payment.alias,
      '--amount',
      '5000',
      '--taxes',
      '30',
      '--from-name',
      'Ana Pérez',
      '--from-tax-id',
      '20-12345678-3',
      '--from-cbu',
      '0110599520000001234567',
    ]);
    expect(transfer).toMatchObject({
      to: payment.alias,
      cvu: payment.cvu,
      total: 5000,
      taxes: 30,
      netAmount: 4970,
      from: { name: 'Ana Pérez', taxId: '20-12345678-3', cbu: '0110599520000001234567' },
      outcome: 'credited',
      reason: null,
      target: { type: 'va_payment', id: payment.id },
    });
    expect(transfer.eventIds).toHaveLength(2);
    expect(await api.data('GET', `/api/v1/va-payments/${payment.id}`)).toMatchObject({
      status: 'completed',
      receivedAmount: 4970,
    });
  });

  it('human mode: a returned transfer says so and why', async () => {
    const { cli, api } = account();
    await api.data('GET', '/sandbox/v1/hubs/1'); // the hub whose collection alias the transfer goes to
    const run = await cli(['transfer', '--to', 'SANDBOX.HUB.COBROS', '--amount', '99.90']);
    expect(run.code).toBe(0);
    expect(keyValues(run.stdout)).toMatchObject({
      outcome: 'returned',
      reason: 'no active amount-locked VA payment waits for 99.9 ARS',
      total: 'ARS 99.90',
      taxes: 'ARS 0.00',
      netAmount: 'ARS 99.90',
    });
  });

  it('an unknown account is a 404 (exit 1); --to and --amount are required (exit 2)', async () => {
    const { cli } = account();
    const unknown = await cli(['transfer', '--to', 'NO.SUCH.ALIAS', '--amount', '1']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe('va-sandbox: NOT_FOUND: Account (CVU or alias) NO.SUCH.ALIAS not found\n');
    const missing = await cli(['transfer', '--amount', '1']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe(
      "va-sandbox: required option '--to <cvu-or-alias>' not specified (see va-sandbox transfer --help)\n",
    );
    const taxes = await cli(['transfer', '--to', 'SANDBOX.HUB.COBROS', '--amount', '10', '--taxes', '10']);
    expect(taxes.code).toBe(1);
    expect(taxes.stderr).toBe(
      'va-sandbox: VALIDATION_ERROR: Invalid request body: --taxes: must be less than --amount\n',
    );
    const zero = await cli(['transfer', '--to', 'SANDBOX.HUB.COBROS', '--amount', '0']);
    expect(zero).toMatchObject({
      code: 1,
      stderr: 'va-sandbox: VALIDATION_ERROR: Invalid request body: --amount: must be greater than 0\n',
    });
    const cbu = await cli(['transfer', '--to', 'SANDBOX.HUB.COBROS', '--amount', '1', '--from-cbu', '12']);
    expect(cbu).toMatchObject({
      code: 1,
      stderr: 'va-sandbox: VALIDATION_ERROR: Invalid request body: --from-cbu: must be 22 digits\n',
    });
  });
});

describe('clock', () => {
  it('clock shows the sandbox time; clock advance 90s|15m|2h|1h30m moves it by that many seconds', async () => {
    const { cli, json } = account();
    const before = await json(['clock']);
    expect(before.offsetSeconds).toBe(0);
    let offset = 0;
    for (const [text, seconds] of [
      ['90s', 90],
      ['15m', 900],
      ['2h', 7200],
      ['1h30m', 5400],
      ['45', 45],
    ] as const) {
      offset += seconds;
      expect((await json(['clock', 'advance', text])).offsetSeconds).toBe(offset);
    }
    const human = await cli(['clock']);
    expect(keyValues(human.stdout).offsetSeconds).toBe(String(offset));
    expect(Date.parse(keyValues(human.stdout).now!) - Date.parse(before.now)).toBeGreaterThanOrEqual(offset * 1000);
  });

  it('advancing past expiresAt expires a waiting payment', async () => {
    const { api, json } = account();
    const payment = await api.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 10, ttlSeconds: 60 });
    expect((await json(['clock', 'advance', '2m'])).offsetSeconds).toBe(120);
    expect((await api.data('GET', `/api/v1/va-payments/${payment.id}`)).status).toBe('expired');
  });

  it('a duration it cannot read is a usage error', async () => {
    const run = await account().cli(['clock', 'advance', '2 hours']);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      "va-sandbox: command-argument value '2 hours' is invalid for argument 'duration'. must be seconds or a duration like 90s, 15m, 2h or 1h30m (see va-sandbox clock advance --help)\n",
    );
  });
});

describe('events', () => {
  it('--json lists the events newest first with their deliveries; human mode shows type, delivery status and where it went', async () => {
    const { cli, api, json } = account();
    const payment = await api.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 300, lockMode: 'amount' });
    await api.data('POST', '/sandbox/v1/transfers', { to: 'SANDBOX.HUB.COBROS', total: 300 });
    const { data: events, pagination } = await json(['events']);
    expect(events.map((e: { eventType: string }) => e.eventType)).toEqual(['succeeded', 'cash_in_received', 'created']);
    expect(events.every((e: { vaPaymentId: string }) => e.vaPaymentId === payment.id)).toBe(true);
    expect(events[0].deliveries[0]).toMatchObject({ status: 'dropped' });
    expect(pagination.total).toBe(3);

    const human = await cli(['events', '--limit', '2']);
    const lines = human.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^createdAt\s+eventType\s+delivery\s+vaPaymentId\/clientId\s+url$/);
    expect(lines[1]).toMatch(
      new RegExp(`succeeded\\s+dropped\\s+${payment.id}\\s+no callbackUrl or successUrl/failureUrl configured`),
    );
    expect(lines.at(-1)).toBe('page 1 of 2 · 3 events');
  });
});

describe('hub', () => {
  it('hub show; hub set changes exactly the settings given', async () => {
    const { cli, json } = account();
    const hub = await json(['hub', 'show']);
    expect(hub).toMatchObject({
      id: 1,
      name: 'Sandbox Hub 1',
      brand: 'SANDBOX',
      dedicated_client_cvus_enabled: true,
      cvuProvisioning: 'inline',
    });
    const changed = await json([
      'hub',
      'set',
      '--cvu-provisioning',
      'delayed',
      '--dedicated-client-cvus-enabled',
      'false',
      '--name',
      'Tienda',
    ]);
    expect(changed).toEqual({
      ...hub,
      name: 'Tienda',
      dedicated_client_cvus_enabled: false,
      cvuProvisioning: 'delayed',
    });
    const human = await cli(['hub', 'show']);
    expect(keyValues(human.stdout)).toMatchObject({
      name: 'Tienda',
      dedicated_client_cvus_enabled: 'false',
      cvuProvisioning: 'delayed',
      collectionAlias: 'SANDBOX.HUB.COBROS',
    });
  });

  it('hub set: nothing to set or a bad choice is a usage error; a value the API refuses is its validation error', async () => {
    const { cli } = account();
    expect(await cli(['hub', 'set'])).toMatchObject({
      code: 2,
      stderr: 'va-sandbox: nothing to set: give at least one option (see va-sandbox hub set --help)\n',
    });
    expect((await cli(['hub', 'set', '--cvu-provisioning', 'later'])).code).toBe(2);
    expect((await cli(['hub', 'set', '--dedicated-client-cvus-enabled', 'yes'])).code).toBe(2);
    const brand = await cli(['hub', 'set', '--brand', 'NOT A BRAND']);
    expect(brand.code).toBe(1);
    expect(brand.stderr).toMatch(/^va-sandbox: VALIDATION_ERROR: .*--brand: must be 1 to 10 letters or digits\n$/);
  });
});

describe('reset', () => {
  it('clears the account of the key, and only that account', async () => {
    const mine = account();
    const theirs = account();
    await mine.api.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 1 });
    await theirs.api.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 2 });
    await mine.api.data('POST', '/sandbox/v1/clock/advance', { seconds: 60 });
    expect(await mine.json(['reset'])).toEqual({ reset: true });
    expect((await mine.api.list('/api/v1/va-payments')).pagination.total).toBe(0);
    expect((await mine.api.data('GET', '/sandbox/v1/clock')).offsetSeconds).toBe(0);
    expect((await theirs.api.list('/api/v1/va-payments')).pagination.total).toBe(1);
    expect((await theirs.cli(['reset'])).stdout).toBe('account reset\n');
  });
});

describe('start and the two --api-key options', () => {
  it('start --api-key (repeatable) limits the accepted keys; the CLI --api-key picks one of them', async () => {
    const sandbox = await spawnServer(['--memory', '--api-key', 'sk_one', '--api-key', 'sk_two']);
    expect(sandbox.stdout()).toContain('API key: sk_one\n');
    const ok = await runCli(['payments', 'list', '--url', sandbox.url, '--api-key', 'sk_two', '--json']);
    expect(ok.code).toBe(0);
    const refused = await runCli(['payments', 'list', '--url', sandbox.url, '--api-key', 'sk_three']);
    expect(refused).toMatchObject({
      code: 1,
      stderr:
        'va-sandbox: UNAUTHORIZED: Unknown API key …hree: this sandbox accepts only the keys it was started with (--api-key)\n',
    });
  });

  it('`va-sandbox --api-key K start` means `start --api-key K`; VA_SANDBOX_API_KEY does not restrict the server', async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const sandbox = spawnCli(['--api-key', 'sk_only', 'start', '--memory', '--port', String(port)], {
      VA_SANDBOX_API_KEY: 'sk_env',
    });
    await sandbox.waitFor(/listening on/);
    expect((await runCli(['payments', 'list', '--url', url, '--api-key', 'sk_only'])).code).toBe(0);
    expect((await runCli(['payments', 'list', '--url', url, '--api-key', 'sk_env'])).code).toBe(1);

    const open = await spawnServer(['--memory'], { VA_SANDBOX_API_KEY: 'sk_env' });
    expect((await runCli(['payments', 'list', '--url', open.url, '--api-key', 'anything'])).code).toBe(0);
  });

  it('every start option has a VA_SANDBOX_* variable, listed in start --help; a flag wins over it; a switch set to 0 or false is off', async () => {
    // Each option's entry (its first line starts with two spaces and the flag), with its wrapped lines joined.
    const entries = (await runCli(['start', '--help'])).stdout
      .split(/\n(?= {2}-)/)
      .filter((entry) => /^ {2}(-\w, )?--/.test(entry) && !entry.includes('--help'))
      .map((entry) => entry.replace(/\s+/g, ' '));
    expect(entries).toHaveLength(18);
    for (const entry of entries) expect(entry).toMatch(/env: VA_SANDBOX_[A-Z_]+\)$/);

    const dir = useTmp();
    const env = {
      VA_SANDBOX_DATA: join(dir, 'env.db'),
      VA_SANDBOX_API_KEYS: 'sk_env_one, sk_env_two',
      VA_SANDBOX_RATE_LIMIT: '5',
      VA_SANDBOX_HUBS: '7',
      VA_SANDBOX_MEMORY: 'false',
      VA_SANDBOX_LOG: 'json',
    };
    const sandbox = await spawnServer(['--rate-limit', '9'], env);
    expect(sandbox.stderr()).toContain(`data:    ${join(dir, 'env.db')}`); // not in memory: MEMORY=false is off; the banner on stderr with --log json
    const two = await fetch(`${sandbox.url}/api/v1/va-payments`, { headers: { authorization: 'Bearer sk_env_two' } });
    expect(two.status).toBe(200);
    expect(two.headers.get('x-ratelimit-limit')).toBe('9'); // the flag wins
    expect(
      (await fetch(`${sandbox.url}/api/v1/va-payments`, { headers: { authorization: 'Bearer sk_other' } })).status,
    ).toBe(401);
    const hub = (id: number) =>
      fetch(`${sandbox.url}/sandbox/v1/hubs/${id}`, { headers: { authorization: 'Bearer sk_env_one' } });
    expect([(await hub(7)).status, (await hub(8)).status]).toEqual([200, 404]);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(JSON.parse(sandbox.stdout().trim().split('\n')[0]!)).toMatchObject({ type: 'request', method: 'GET' });
  });

  it('SIGINT stops a started server cleanly (exit 0)', async () => {
    const sandbox = await spawnServer(['--memory']);
    sandbox.child.kill('SIGINT');
    expect(await sandbox.exited).toBe(0);
    expect(sandbox.stdout()).toContain('va-sandbox stopped');
  });
});

describe('help and start-up', () => {
  it('--help on every command exits 0 with usage and an Example section of real commands', async () => {
    // Every command is found from the help itself, so a command added later is held to the same rule.
    const subcommands = (help: string) =>
      (/\nCommands:\n([^]*?)(\n\n|$)/.exec(help)?.[1] ?? '')
        .split('\n')
        .map((line) => /^ {2}(\S+)/.exec(line)?.[1])
        .filter((name): name is string => name !== undefined && name !== 'help');
    const seen: string[] = [];
    for (let queue: string[][] = [[]]; queue.length > 0; ) {
      const command = queue.shift()!;
      const name = ['va-sandbox', ...command].join(' ');
      const run = await runCli([...command, '--help']);
      expect({ name, code: run.code }).toEqual({ name, code: 0 });
      expect(run.stdout).toContain(`Usage: ${name}`);
      expect(run.stdout).toMatch(new RegExp(`\\nExample:\\n  \\$ (\\S+=\\S+ )?${name}`));
      seen.push(name);
      queue.push(...subcommands(run.stdout).map((sub) => [...command, sub]));
    }
    for (const name of [
      'payments create',
      'clients transactions',
      'invoices update',
      'deliveries redeliver',
      'clock advance',
      'hub set',
      'receiver',
      'reset',
    ]) {
      expect(seen).toContain(`va-sandbox ${name}`);
    }
    expect((await runCli(['--version'])).stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
  });

  it('--version, --help, API commands and completion load neither the server (hono, lowdb, undici), nor zod, nor ink or react', async () => {
    const dir = useTmp();
    const log = join(dir, 'loaded.txt');
    writeFileSync(
      join(dir, 'hooks.mjs'),
      `import { appendFileSync } from 'node:fs';
       export async function resolve(specifier, context, next) {
         const result = await next(specifier, context);
         appendFileSync(${JSON.stringify(log)}, result.url + '\\n');
         return result;
       }`,
    );
    writeFileSync(
      join(dir, 'register.mjs'),
      `import { register } from 'node:module'; register(${JSON.stringify(pathToFileURL(join(dir, 'hooks.mjs')).href)});`,
    );
    const { cli } = account();
    for (const args of [
      ['--version'],
      ['payments', 'list', '--json'],
      ['deliveries', 'list', '--help'],
      ['ui', '--help'],
      ['completion', 'bash'],
      ['complete', '--', 'payments', 'cr'],
    ]) {
      writeFileSync(log, '');
      const run = await cli(args, { NODE_OPTIONS: `--import ${pathToFileURL(join(dir, 'register.mjs')).href}` });
      expect(run.code).toBe(0);
      const urls = readFileSync(log, 'utf8').split('\n').filter(Boolean);
      // The CLI runs from a bundle (scripts/build-cli.js): a chunk loaded names what it holds in its `// <path>` lines.
      const held = urls
        .filter((url) => url.includes('/dist/bundle/'))
        .flatMap((url) => readFileSync(fileURLToPath(url), 'utf8').match(/^\/\/ \S+$/gm) ?? []);
      const loaded = [...urls, ...held].join('\n');
      expect(loaded).toContain('/bin/va-sandbox.js'); // the hook sees what loads
      // --version is answered from package.json before the CLI itself loads; the rest see the bundle's commander.
      expect(loaded.includes('/dist/bundle/main.js')).toBe(args[0] !== '--version');
      expect(loaded.includes('// node_modules/commander/')).toBe(args[0] !== '--version');
      for (const heavy of [
        'node_modules/hono/',
        'node_modules/lowdb/',
        'node_modules/undici/',
        'node_modules/zod/',
        'node_modules/ink/',
        'node_modules/react/',
        'dist/sandbox/server.js',
      ]) {
        expect({ args, heavy, loaded: loaded.includes(heavy) }).toEqual({ args, heavy, loaded: false });
      }
    }
  });
});
