import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { CONFIG_MAX_BYTES } from '../src/cli/config-file.js';
import { configJsonSchema, startOptions } from '../src/cli/start-options.js';
import { freePort, ROOT, runCli, spawnCli, spawnServer, useTmp } from './helpers.js';

const SHIPPED = JSON.parse(readFileSync(join(ROOT, 'config.schema.json'), 'utf8'));
const EXAMPLE = JSON.parse(readFileSync(join(ROOT, 'docs', 'va-sandbox.example.json'), 'utf8'));
const validate = new Ajv2020({ strict: false, allErrors: true }).compile(SHIPPED);
/** The contract's list (part 8): every start option by its long name in camelCase (`bufferBudget`: its "Memory" bullet). */
const KEYS = [
  'port',
  'host',
  'allowedHosts',
  'data',
  'memory',
  'fsync',
  'apiKeys',
  'rateLimit',
  'hubs',
  'retryDelays',
  'callbackTimeout',
  'keep',
  'journal',
  'bufferBudget',
  'strictTaxId',
  'quiet',
  'log',
];

const dir = useTmp();
let n = 0;
const configFile = (doc: unknown): string => {
  const file = join(dir, `config-${++n}.json`);
  writeFileSync(file, typeof doc === 'string' ? doc : JSON.stringify(doc));
  return file;
};
const get = (url: string, path: string, key: string) =>
  fetch(url + path, { headers: { authorization: `Bearer ${key}` } });

describe('config.schema.json', () => {
  it('is made from the start options (node scripts/config-schema.js writes it): one key per option, each the contract names', () => {
    expect(SHIPPED).toEqual(configJsonSchema());
    expect(Object.keys(SHIPPED.properties)).toEqual(['$schema', ...KEYS]);
    // Every option but --config itself has a key: a new option gets one.
    expect(startOptions().filter((option) => option.long !== '--config')).toHaveLength(KEYS.length);
    expect(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).files).toContain('config.schema.json');
  });

  it('is named by the example file, which it accepts; it refuses an unknown key and a bad value', () => {
    expect(EXAMPLE.$schema).toBe('../config.schema.json');
    expect(Object.keys(EXAMPLE).sort()).toEqual(['$schema', ...KEYS].sort());
    expect(validate(EXAMPLE), JSON.stringify(validate.errors)).toBe(true);
    expect(validate({ prot: 4580 })).toBe(false);
    expect(validate({ port: 'x' })).toBe(false);
    expect(validate({ log: 'xml' })).toBe(false);
    expect([validate({ bufferBudget: '64MiB' }), validate({ bufferBudget: 1_048_576 })]).toEqual([true, true]);
    expect([validate({ bufferBudget: '64 MB' }), validate({ bufferBudget: 0 })]).toEqual([false, false]);
  });
});

describe('start --config FILE', () => {
  it('takes the options from the file; a variable wins over it and a flag over both', async () => {
    const file = configFile({
      $schema: '../config.schema.json',
      data: join(dir, 'file.db'),
      apiKeys: ['sk_file'],
      rateLimit: 3,
      hubs: [7],
      memory: true,
      log: 'json',
    });
    const sandbox = await spawnServer(['--config', file, '--rate-limit', '9'], {
      VA_SANDBOX_RATE_LIMIT: '5',
      VA_SANDBOX_HUBS: '8',
      VA_SANDBOX_MEMORY: 'false',
    });
    // from the file: the data file (MEMORY=false wins over the file's memory), the keys, the JSON log (banner on stderr)
    expect(sandbox.stderr()).toContain(`data:    ${join(dir, 'file.db')}`);
    expect((await get(sandbox.url, '/api/v1/va-payments', 'sk_other')).status).toBe(401);
    const list = await get(sandbox.url, '/api/v1/va-payments', 'sk_file');
    expect(list.headers.get('x-ratelimit-limit')).toBe('9'); // the flag, over VA_SANDBOX_RATE_LIMIT=5 and the file's 3
    expect([
      (await get(sandbox.url, '/sandbox/v1/hubs/8', 'sk_file')).status,
      (await get(sandbox.url, '/sandbox/v1/hubs/7', 'sk_file')).status,
    ]).toEqual([200, 404]);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(JSON.parse(sandbox.stdout().trim().split('\n')[0]!)).toMatchObject({ type: 'request' });
  });

  it('is named by VA_SANDBOX_CONFIG too; the file wins over the defaults, which fill what it leaves out', async () => {
    const file = configFile({ rateLimit: 3, memory: true, bufferBudget: '64MiB' });
    const sandbox = await spawnServer([], { VA_SANDBOX_CONFIG: file });
    expect(sandbox.stdout()).toContain('data:    (memory only)');
    const list = await get(sandbox.url, '/api/v1/va-payments', 'sk_any');
    expect(list.status).toBe(200);
    expect(list.headers.get('x-ratelimit-limit')).toBe('3');
    expect(
      ((await (await fetch(`${sandbox.url}/health`)).json()) as { bufferBudget: { limit: number } }).bufferBudget.limit,
    ).toBe(64 * 1024 * 1024);
    const plain = await spawnServer(['--memory']);
    expect((await get(plain.url, '/api/v1/va-payments', 'sk_any')).headers.get('x-ratelimit-limit')).toBe('6000');
    expect(
      ((await (await fetch(`${plain.url}/health`)).json()) as { bufferBudget: { limit: number } }).bufferBudget.limit,
    ).toBe(256 * 1024 * 1024);
  });

  it("`va-sandbox --api-key K start` is a flag too: it wins over the file's apiKeys", async () => {
    const port = await freePort();
    const sandbox = spawnCli([
      '--api-key',
      'sk_flag',
      'start',
      '--memory',
      '--port',
      String(port),
      '--config',
      configFile({ apiKeys: ['sk_file'] }),
    ]);
    await sandbox.waitFor(/listening on/);
    const url = `http://127.0.0.1:${port}`;
    expect([
      (await get(url, '/api/v1/va-payments', 'sk_flag')).status,
      (await get(url, '/api/v1/va-payments', 'sk_file')).status,
    ]).toEqual([200, 401]);
  });

  it.each([
    [{ prot: 4580 }, /^va-sandbox: config \S+: unknown key "prot" \(the keys are port, host, .*\)/],
    [{ port: 'x' }, /^va-sandbox: config \S+: port must be a whole number/],
    [{ port: 70000 }, /^va-sandbox: config \S+: port must be a port number from 0 to 65535/],
    [{ hubs: [0] }, /^va-sandbox: config \S+: hubs must be positive whole numbers/],
    [{ retryDelays: [] }, /^va-sandbox: config \S+: retryDelays must not be empty/],
    [{ apiKeys: 'sk_one' }, /^va-sandbox: config \S+: apiKeys must be a list of strings/],
    [{ memory: 'yes' }, /^va-sandbox: config \S+: memory must be true or false/],
    [{ log: 'xml' }, /^va-sandbox: config \S+: log must be one of "text", "json"/],
    [{ bufferBudget: '64 MB' }, /^va-sandbox: config \S+: bufferBudget must be a size of 1 byte or more/],
    [{ bufferBudget: true }, /^va-sandbox: config \S+: bufferBudget must be a number of bytes or a size/],
    [[4580], /^va-sandbox: config \S+: must be a JSON object of start options/],
    ['{"port": 45', /^va-sandbox: config \S+: not JSON: /],
  ])('refuses %j with one line naming it, exit 2', async (doc, message) => {
    const run = await runCli(['start', '--memory', '--port', '0', '--config', configFile(doc)]);
    expect(run.stderr).toMatch(message);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.code).toBe(2);
  });

  it('reads only a regular file of at most 1 MiB: /dev/zero, /dev/null, a FIFO, a directory or a larger file is one line, exit 2, at once', {
    timeout: 30_000,
  }, async () => {
    const fifo = join(dir, 'config.fifo');
    execFileSync('mkfifo', [fifo]);
    const large = configFile(`{"port": 0${' '.repeat(CONFIG_MAX_BYTES)}}`);
    const cases: [string, RegExp][] = [
      ['/dev/zero', /: not a regular file \(a device\)/],
      ['/dev/null', /: not a regular file \(a device\)/],
      [fifo, /: not a regular file \(a FIFO\)/],
      [dir, /: not a regular file \(a directory\)/],
      [large, new RegExp(`: ${CONFIG_MAX_BYTES + 11} bytes, over the ${CONFIG_MAX_BYTES} a config file may hold`)],
    ];
    for (const [file, problem] of cases) {
      const started = performance.now();
      const run = await runCli(['start', '--memory', '--port', '0', '--config', file]);
      expect(run.code, `${file}: ${JSON.stringify(run)}`).toBe(2);
      expect(run.stderr.trim().split('\n'), file).toHaveLength(1);
      expect(run.stderr.trim(), file).toMatch(new RegExp(`^va-sandbox: config ${file}${problem.source}`));
      expect(performance.now() - started, file).toBeLessThan(10_000);
    }
  });

  it('refuses a file it cannot read, exit 2', async () => {
    const run = await runCli(['start', '--memory', '--config', join(dir, 'missing.json')]);
    expect(run).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/^va-sandbox: config \S+missing\.json: cannot read it \(ENOENT\)/),
    });
  });
});
