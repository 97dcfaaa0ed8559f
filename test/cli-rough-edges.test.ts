import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { api, PAYMENT, ROOT, runCli, spawnCli, spawnServer, useCliSandbox, useServer, useTmp } from './helpers.js';

/** `start` with these arguments: its exit code, or `running` once it prints its banner (then it is stopped). */
async function startExit(args: string[], env: Record<string, string> = {}) {
  const start = spawnCli([...args, '--memory', '--port', '0'], env);
  const running = start.waitFor(/try: /).then(
    () => 'running' as const,
    () => start.exited,
  );
  const code = await Promise.race([start.exited, running]);
  if (code === 'running') start.child.kill('SIGINT');
  return { code, stdout: start.stdout(), stderr: start.stderr() };
}

describe('start refuses an API key the server could never match (exit 2, one line)', () => {
  const refused = (key: string, why: RegExp) => ({
    code: 2,
    stdout: '',
    stderr: expect.stringMatching(new RegExp(`^va-sandbox: .*"${key}".*${why.source}.*\\n$`)),
  });
  const SPACE = /visible ASCII, no spaces/;
  const BEARER = /without "Bearer "/;

  it('from --api-key, given after start or before it', async () => {
    expect(await startExit(['start', '--api-key', 'sk ci'])).toEqual(refused('sk ci', SPACE));
    expect(await startExit(['start', '--api-key', 'sk_ok', '--api-key', 'Bearer sk_x'])).toEqual(
      refused('Bearer sk_x', BEARER),
    );
    expect(await startExit(['--api-key', 'Bearer sk_x', 'start'])).toEqual(refused('Bearer sk_x', BEARER));
    expect(await startExit(['start', '--api-key', 'sk_\u00f1'])).toEqual(refused('sk_\u00f1', SPACE));
  });

  it('from VA_SANDBOX_API_KEYS and from apiKeys in a config file', async () => {
    expect(await startExit(['start'], { VA_SANDBOX_API_KEYS: 'sk_a,sk b' })).toEqual(refused('sk b', SPACE));
    const config = join(useTmp(), 'va-sandbox.json');
    writeFileSync(config, JSON.stringify({ apiKeys: ['sk_a', 'Bearer sk_x'] }));
    expect(await startExit(['start', '--config', config])).toEqual(refused('Bearer sk_x', BEARER));
  });

  it('a token starts as before', async () => {
    const start = await startExit(['start', '--api-key', 'sk_ci-1.x~/+='], { VA_SANDBOX_API_KEYS: '' });
    expect(start.code).toBe('running');
    expect(start.stdout).toContain("-H 'Authorization: Bearer sk_ci-1.x~/+='");
  });
});

describe('listen --events: what is said of the other events', () => {
  it('README, docs/cli.md and listen --help say the others still go to their own URLs', async () => {
    const said = [
      readFileSync(join(ROOT, 'README.md'), 'utf8'),
      readFileSync(join(ROOT, 'docs', 'cli.md'), 'utf8'),
      (await runCli(['listen', '--help'])).stdout,
    ];
    for (const text of said) {
      const flat = text.replace(/\s+/g, ' ');
      // What follows the first mention of --events, up to the end of its sentence or option.
      expect(flat.slice(flat.indexOf('--events'), flat.indexOf('--events') + 250)).toMatch(
        /the others still go to their own URLs/,
      );
    }
  });
});

describe('a sandbox started with "hubs": [123, 4] in its config file', () => {
  it('hub list shows those hubs before any create; a hub not among them is refused naming them and --hub', async () => {
    const config = join(useTmp(), 'va-sandbox.json');
    writeFileSync(config, JSON.stringify({ hubs: [123, 4] }));
    const server = await spawnServer(['--memory', '--config', config]);
    const env = { VA_SANDBOX_URL: server.url, VA_SANDBOX_API_KEY: 'sk_edges_hubs' };
    const hubs = await runCli(['hub', 'list', '--json'], env);
    expect(JSON.parse(hubs.stdout).data.map((hub: { id: number }) => hub.id)).toEqual([4, 123]);
    const hint = 'Payment hub 1 not found; --hub: must be one of 4, 123 (the hubs this sandbox was started with)';
    for (const args of [
      ['payments', 'create', '--amount', '10'],
      ['hub', 'show'],
    ]) {
      expect(await runCli(args, env)).toMatchObject({ code: 1, stderr: `va-sandbox: NOT_FOUND: ${hint}\n` });
    }
    const refused = await api(server.url, 'sk_edges_hubs').post('/api/v1/va-payments', {
      ...PAYMENT,
      amount: 10,
      paymentHubId: 7,
    });
    expect(refused.body.error).toMatchObject({ code: 'NOT_FOUND', details: ['paymentHubId: must be one of 4, 123'] });
    expect(await runCli(['payments', 'create', '--amount', '10', '--hub', '4', '--json'], env)).toMatchObject({
      code: 0,
    });
  });

  it('--hub is listed among the options of the commands that take it, not under "Global options"', async () => {
    for (const command of [
      ['payments', 'create'],
      ['clients', 'create'],
      ['hub', 'show'],
      ['hub', 'set'],
    ]) {
      const help = (await runCli([...command, '--help'])).stdout;
      // The help's sections by heading (`Options:`, `Global options:`, `Example:`), and the one that lists --hub.
      const sections = help.split(/\n(?=\S[^\n]*:\n)/);
      expect({
        command,
        in: sections.filter((section) => section.includes('  --hub <id>')).map((section) => section.split('\n')[0]),
      }).toEqual({
        command,
        in: ['Options:'],
      });
    }
    expect((await runCli(['--help'])).stdout).not.toContain('--hub');
  });
});

describe('a short id under 4 characters', () => {
  it('every command that takes a short id refuses it before asking (exit 2), saying to give at least 4 characters', async () => {
    const { account } = await useCliSandbox('sk_edges_short');
    const { cli } = account();
    const commands: [string[], string][] = [
      [['payments', 'get', '4e8'], 'VA payment'],
      [['payments', 'cancel', '4E8'], 'VA payment'],
      [['clients', 'get', '4e'], 'client'],
      [['deliveries', 'show', '4'], 'delivery'],
      [['deliveries', 'redeliver', '4e-'], 'delivery'],
    ];
    for (const [args, noun] of commands) {
      const id = args[2]!;
      expect({ args, ...(await cli(args)) }).toEqual({
        args,
        code: 2,
        stdout: '',
        stderr: `va-sandbox: ${id} is too short to look up a ${noun}: give at least 4 characters of its id\n`,
      });
    }
  });
});

describe('export and import of the same file', () => {
  it('say the same number of each kind, and their deliveries are what the list counts (a dropped one included)', async () => {
    const { account } = await useCliSandbox('sk_edges_counts');
    const source = account();
    // A created event with successUrl and failureUrl is dropped: its delivery is the event itself.
    await source.api.data('POST', '/api/v1/va-payments', {
      ...PAYMENT,
      amount: 5,
      successUrl: 'http://127.0.0.1:9/ok',
      failureUrl: 'http://127.0.0.1:9/ko',
    });
    await source.api.data('POST', '/api/v1/va-payments', {
      ...PAYMENT,
      amount: 6,
      callbackUrl: 'http://127.0.0.1:9/hook',
    });
    const file = join(useTmp(), 'incident.json');
    const exported = await source.cli(['export', '--out', file]);
    const target = account();
    const imported = await target.cli(['import', file]);
    const counts = (line: string) =>
      Object.fromEntries([...line.matchAll(/(\d+) (\w+)/g)].map(([, n, name]) => [name, Number(n)]));
    const listed = (await target.json(['deliveries', 'list'])).pagination.total;
    expect(listed).toBe(2);
    expect({ exported: counts(exported.stdout).deliveries, imported: counts(imported.stdout).deliveries }).toEqual({
      exported: listed,
      imported: listed,
    });
    expect(counts(imported.stdout)).toMatchObject(counts(exported.stdout));
  });
});

describe('a kind that no discriminated union has, in an API request', () => {
  it('is named with the kinds there are and the closest one', async () => {
    const server = await useServer();
    const refused = await api(server.url, 'sk_edges_kinds').post('/sandbox/v1/api-faults', {
      path: '/api/v1/va-payments',
      fault: { type: 'delai' },
    });
    expect(refused.body.error.details).toContain(
      'fault.type: Invalid option "delai": did you mean "delay"? expected one of "error"|"delay"|"reset"|"hang"|"lost_answer"',
    );
  });
});

describe('an unknown command', () => {
  it('that starts a command name suggests it, as commander suggests one a typo away (exit 2, one line)', async () => {
    expect(await runCli(['pay'])).toEqual({
      code: 2,
      stdout: '',
      stderr: "va-sandbox: unknown command 'pay' (Did you mean payments?) (see va-sandbox --help)\n",
    });
    expect((await runCli(['cl'])).stderr).toBe(
      "va-sandbox: unknown command 'cl' (Did you mean one of clients, clock?) (see va-sandbox --help)\n",
    );
    expect((await runCli(['payments', 'ge'])).stderr).toBe(
      "va-sandbox: unknown command 'ge' (Did you mean get?) (see va-sandbox payments --help)\n",
    );
    expect((await runCli(['paymnets'])).stderr).toBe(
      "va-sandbox: unknown command 'paymnets' (Did you mean payments?) (see va-sandbox --help)\n",
    );
    expect((await runCli(['zzz'])).stderr).toBe("va-sandbox: unknown command 'zzz' (see va-sandbox --help)\n");
  });
});

describe("start's banner, bound to every interface (as in the container)", () => {
  it('suggests a curl to an address one can connect to, and that curl is answered', async () => {
    for (const [host, reachable] of [
      ['0.0.0.0', '127.0.0.1'],
      ['::', 'localhost'],
    ] as const) {
      const start = spawnCli(['start', '--memory', '--port', '0', '--host', host]);
      const banner = await start.waitFor(/try: .*\n/);
      const [, url, key] = /try: +curl -s (\S+) -H 'Authorization: Bearer (\S+)'/.exec(banner)!;
      expect(new URL(url!).hostname).toBe(reachable);
      expect((await fetch(url!, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
      start.child.kill('SIGINT');
      await start.exited;
    }
  });
});
