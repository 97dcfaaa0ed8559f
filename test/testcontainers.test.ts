import { type ChildProcess, execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify, stripVTControlCharacters } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, ROOT, useTmp } from './helpers.js';
import { asPodman, type Podman, podmanMissing, usePodman } from './podman.js';

const run = promisify(execFile);

/** The Testcontainers example of docs/container.md, as written. */
const example = () =>
  /<!-- snippet: testcontainers -->\n```ts\n([^]*?)^```/m.exec(
    readFileSync(join(ROOT, 'docs', 'container.md'), 'utf8'),
  )![1]!;

const missing = podmanMissing();
const image = `va-sandbox-test-${randomUUID().slice(0, 8)}`;

/** The module's options, each seen from outside the container; `IMAGE` is this run's image. */
const OPTIONS_TEST = `
import { get } from 'node:http';
import { sandboxClient } from 'va-sandbox';
import { VaSandboxContainer, type StartedVaSandboxContainer } from 'va-sandbox/testcontainers';
import { expect, test } from 'vitest';

/** A payment on a hub, through the container's own client. */
const create = (sandbox: StartedVaSandboxContainer, paymentHubId: number) =>
  sandbox.client.vaPayments.create({ currency: 'ARS', lockMode: 'amount', amount: 1500, paymentHubId });
const statusWithHost = (url: string, host: string) =>
  new Promise<number>((done, fail) => get(url, { headers: { host } }, (res) => (res.resume(), done(res.statusCode!))).on('error', fail));

test('withApiKeys and withHubs: only those keys and hubs, the first key handed back', async () => {
  const sandbox = await new VaSandboxContainer(IMAGE).withApiKeys('sk_one', 'sk_two').withHubs(123).start();
  try {
    expect(sandbox.apiKey).toBe('sk_one');
    expect(sandbox.url).toBe(\`http://\${sandbox.getHost()}:\${sandbox.getMappedPort(4580)}\`);
    expect(await create(sandbox, 123)).toMatchObject({ status: 'waiting' });
    await expect(create(sandbox, 1)).rejects.toMatchObject({ status: 404 });
    await expect(sandboxClient(sandbox.url, 'sk_three').vaPayments.list()).rejects.toMatchObject({ status: 401 });
    expect(await sandboxClient(sandbox.url, 'sk_two').vaPayments.list()).toMatchObject({ data: [] });
  } finally {
    await sandbox.stop();
  }
}, 120_000);

test('without keys: any key works, and the one handed back is a fresh one (an account of its own)', async () => {
  const sandbox = await new VaSandboxContainer(IMAGE).start();
  try {
    expect(sandbox.apiKey).toMatch(/^sk_test_[0-9a-f-]{36}$/);
    expect(await create(sandbox, 1)).toMatchObject({ status: 'waiting' });
    expect(await sandboxClient(sandbox.url, 'sk_other').vaPayments.list()).toMatchObject({ data: [] });
  } finally {
    await sandbox.stop();
  }
}, 120_000);

test('withConfig: the file is read, its key handed back, its allowed hosts kept beside the module\\'s', async () => {
  const config = { apiKeys: ['sk_file'], hubs: [4], allowedHosts: ['va-sandbox.test'] };
  const sandbox = await new VaSandboxContainer(IMAGE).withConfig(config).start();
  try {
    expect(sandbox.apiKey).toBe('sk_file');
    expect(await create(sandbox, 4)).toMatchObject({ status: 'waiting' });
    await expect(create(sandbox, 1)).rejects.toMatchObject({ status: 404 });
    expect(await statusWithHost(\`\${sandbox.url}/health\`, 'va-sandbox.test')).toBe(200);
    expect(await statusWithHost(\`\${sandbox.url}/health\`, 'evil.example')).toBe(403);
  } finally {
    await sandbox.stop();
  }
}, 120_000);
`;

/**
 * `va-sandbox/testcontainers` against the image built from this repository, through Podman's Docker-compatible
 * socket (`podman system service`): the docs' example as written (a payment through the handed-back client, its
 * callback at a receiver on this machine) and each option, run by vitest in a project of its own.
 */
describe.skipIf(missing !== null)(`Testcontainers${missing ? `: skipped, ${missing}` : ''}`, () => {
  let podman: Podman;
  let socket: string;
  let service: ChildProcess | undefined;
  let serviceExited: Promise<unknown> | undefined;

  beforeAll(async () => {
    podman = await usePodman();
    await podman.build(asPodman(podman, ['docker', 'build', '-t', image, '.']));
    socket = join(useTmp(), 'podman.sock');
    service = podman.spawn(['system', 'service', '--time=0', `unix://${socket}`]);
    serviceExited = new Promise((done) => service!.once('exit', done));
    await eventually(
      async () => (await run('podman', ['--url', `unix://${socket}`, 'version'], { env: podman.env })).stdout,
      30_000,
      'the Podman socket',
    );
  }, 900_000);

  afterAll(async () => {
    service?.kill('SIGTERM');
    await serviceExited;
    await podman?.removeImage(image).catch(() => {});
  }, 60_000);

  it('the example starts the image through the module; its client makes a payment whose callback reaches a receiver', async () => {
    const code = example();
    expect(code).toMatch(/new VaSandboxContainer\('va-sandbox'\)/);
    const dir = useTmp();
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
    // The package as a dependency of the project (this repository, built), beside the tools the example imports.
    mkdirSync(join(dir, 'node_modules'));
    symlinkSync(ROOT, join(dir, 'node_modules', 'va-sandbox'));
    for (const name of ['vitest', 'testcontainers']) {
      symlinkSync(join(ROOT, 'node_modules', name), join(dir, 'node_modules', name));
    }
    const thisImage = `'localhost/${image}'`;
    const asWritten = "new VaSandboxContainer('va-sandbox')";
    writeFileSync(join(dir, 'sandbox.test.ts'), code.replace(asWritten, `new VaSandboxContainer(${thisImage})`));
    writeFileSync(join(dir, 'options.test.ts'), `const IMAGE = ${thisImage};\n${OPTIONS_TEST}`);
    const env = {
      ...podman.env,
      DOCKER_HOST: `unix://${socket}`,
      // Ryuk's image cannot be pulled here (docs/container.md). No TESTCONTAINERS_HOST_OVERRIDE: this machine's
      // /.dockerenv makes getHost() the bridge's gateway, which the module allows through the Host guard.
      TESTCONTAINERS_RYUK_DISABLED: 'true',
    };
    const vitest = join(ROOT, 'node_modules', 'vitest', 'vitest.mjs');
    const result = await run(process.execPath, [vitest, 'run', '--reporter=verbose'], {
      cwd: dir,
      env,
      timeout: 240_000,
    }).catch((error: { stdout: string; stderr: string }) => error);
    const output = stripVTControlCharacters(`${result.stdout}\n${result.stderr}`);
    expect(output).toMatch(/✓ sandbox\.test\.ts > the sandbox in a container takes a payment and calls back/);
    expect(output).toMatch(/✓ options\.test\.ts > withApiKeys and withHubs/);
    expect(output).toMatch(/✓ options\.test\.ts > without keys/);
    expect(output).toMatch(/✓ options\.test\.ts > withConfig/);
    expect(output).toMatch(/Tests +4 passed/);
  }, 300_000);
});
