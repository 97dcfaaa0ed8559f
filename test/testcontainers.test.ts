import { execFile, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify, stripVTControlCharacters } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, ROOT, useTmp } from './helpers.js';
import { asPodman, podmanMissing, usePodman, type Podman } from './podman.js';

const run = promisify(execFile);

/** The Testcontainers example of docs/container.md, as written. */
const example = () => /<!-- snippet: testcontainers -->\n```ts\n([^]*?)^```/m.exec(readFileSync(join(ROOT, 'docs', 'container.md'), 'utf8'))![1]!;

const missing = podmanMissing();
const image = `va-sandbox-test-${randomUUID().slice(0, 8)}`;

/**
 * The docs' Testcontainers example, run by vitest in a project of its own against the image built from this
 * repository, through Podman's Docker-compatible socket (`podman system service`).
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
    await eventually(async () => (await run('podman', ['--url', `unix://${socket}`, 'version'], { env: podman.env })).stdout, 30_000, 'the Podman socket');
  }, 900_000);

  afterAll(async () => {
    service?.kill('SIGTERM');
    await serviceExited;
    await podman?.('rmi', '-f', image).catch(() => {});
  }, 60_000);

  it('the example starts the image, waits for /health and hands the test a base URL that takes a payment', async () => {
    const code = example();
    expect(code).toMatch(/new GenericContainer\('va-sandbox'\)/);
    const dir = useTmp();
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
    // This run's image for the README's name.
    writeFileSync(join(dir, 'sandbox.test.ts'), code.replace("new GenericContainer('va-sandbox')", `new GenericContainer('localhost/${image}')`));
    const env = {
      ...podman.env,
      DOCKER_HOST: `unix://${socket}`,
      // This machine's two limits (docs/container.md): Ryuk's image cannot be pulled, and a /.dockerenv makes
      // Testcontainers answer the bridge's gateway as the host.
      TESTCONTAINERS_RYUK_DISABLED: 'true',
      TESTCONTAINERS_HOST_OVERRIDE: '127.0.0.1',
    };
    const vitest = join(ROOT, 'node_modules', 'vitest', 'vitest.mjs');
    const result = await run(process.execPath, [vitest, 'run', '--reporter=verbose'], { cwd: dir, env, timeout: 240_000 }).catch(
      (error: { stdout: string; stderr: string }) => error,
    );
    const output = stripVTControlCharacters(`${result.stdout}\n${result.stderr}`);
    expect(output).toMatch(/✓ sandbox\.test\.ts > the sandbox in a container takes a payment/);
    expect(output).toMatch(/Tests +1 passed/);
  }, 300_000);
});
