import { execFile, spawn } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, freePort, PAYMENT, ROOT, useReceiver, useTmp } from './helpers.js';
import { type LocalRegistry, npmEnv, productionClosure, publishHere, startRegistry } from './registry.js';

const run = promisify(execFile);
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));

/** The folders of a node_modules, as package names (scoped ones as `@scope/name`). */
const packagesIn = (dir: string): string[] =>
  readdirSync(dir)
    .filter((name) => !name.startsWith('.'))
    .flatMap((name) =>
      name.startsWith('@') ? readdirSync(join(dir, name)).map((inner) => `${name}/${inner}`) : [name],
    );

/**
 * The package as a registry serves it: published to a local registry (test/registry.ts) with the packages it depends
 * on, then `npx va-sandbox start` from an empty folder whose npm knows only that registry and has an empty cache, so
 * npm installs everything from there, as a user's first `npx` does from the public registry.
 */
describe('published to a registry', () => {
  let registry: LocalRegistry;

  beforeAll(async () => {
    registry = await startRegistry();
    await publishHere(registry);
  }, 120_000);

  afterAll(() => registry?.close());

  it('npx va-sandbox start cold from an empty folder: it installs the dependencies only, serves, calls back', async () => {
    const dir = useTmp();
    const cache = useTmp();
    const config = join(useTmp(), 'npmrc');
    writeFileSync(config, `registry=${registry.url}\n`);
    const env = npmEnv(config, cache);
    const port = await freePort();
    const started = performance.now();
    // Its own process group: npx passes no signal on, so Ctrl-C is sent to the group, as a terminal does.
    const start = ['--yes', '--registry', registry.url, 'va-sandbox', 'start', '--memory', '--port', String(port)];
    const server = spawn('npx', start, { cwd: dir, env, detached: true });
    let output = '';
    server.stdout.on('data', (chunk) => (output += chunk));
    server.stderr.on('data', (chunk) => (output += chunk));
    const exited = new Promise<number | null>((done) => server.once('exit', done));
    try {
      for (
        let i = 0;
        !(await fetch(`http://127.0.0.1:${port}/health`).then(
          (r) => r.ok,
          () => false,
        ));
        i++
      ) {
        if (i > 1200) throw new Error(`npx va-sandbox start did not answer: ${output}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const seconds = (performance.now() - started) / 1000;
      const url = `http://127.0.0.1:${port}`;

      // What npx installed: this package and its production dependencies, no ink or React.
      const [installed] = readdirSync(join(cache, '_npx'));
      const modules = join(cache, '_npx', installed!, 'node_modules');
      const names = productionClosure().map((spec) => spec.slice(0, spec.lastIndexOf('@')));
      expect(packagesIn(modules).sort()).toEqual([...new Set([pkg.name, ...names])].sort());
      const size = (await run('du', ['-sk', modules])).stdout.split('\t')[0];
      const mebibytes = (Number(size) / 1024).toFixed(1);
      console.log(`cold npx install and start: ${seconds.toFixed(1)} s, node_modules ${mebibytes} MiB`);

      // A payment with a callback URL, and its `created` callback at a real receiver.
      const receiver = await useReceiver();
      const payment = await api(url, 'sk_registry').data('POST', '/api/v1/va-payments', {
        ...PAYMENT,
        callbackUrl: `${receiver.url}/va`,
      });
      const [callback] = await receiver.waitFor(1);
      expect(callback!.body).toMatchObject({ eventType: 'created', vaPaymentId: payment.id });

      // An API command of the CLI runs without ink and React; `ui` says in one line how to add them (exit 2, usage).
      const listArgs = ['va-sandbox', 'payments', 'list', '--url', url, '--api-key', 'sk_registry', '--json'];
      const list = await run('npx', listArgs, { cwd: dir, env });
      expect(JSON.parse(list.stdout).data.map((item: { id: string }) => item.id)).toEqual([payment.id]);
      const ui = await run('npx', ['va-sandbox', 'ui'], { cwd: dir, env }).catch(
        (error: { code: number; stderr: string }) => error,
      );
      const { ink, react } = pkg.peerDependencies;
      expect(ui).toMatchObject({ code: 2 });
      expect((ui as { stderr: string }).stderr).toBe(
        `va-sandbox: ui needs ink and react, which a plain install leaves out: npm install --save-dev va-sandbox ink@${ink} react@${react}\n`,
      );
    } finally {
      process.kill(-server.pid!, 'SIGINT');
    }
    await exited;
    expect(output).toContain('va-sandbox stopped; it kept nothing (--memory)');
  }, 120_000);

  it("the README's newcomer path: one install line, `npx va-sandbox start`, `npx va-sandbox trigger succeeded`", async () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const block = /^## In your project[^\n]*\n\n```sh\n([^]*?)```/m.exec(readme)?.[1] ?? '';
    const [install, start, trigger] = block.trim().split('\n');
    expect([install, start, trigger?.split(' --callback-url ')[0]]).toEqual([
      'npm install --save-dev va-sandbox',
      'npx va-sandbox start',
      'npx va-sandbox trigger succeeded',
    ]);
    const dir = useTmp();
    const config = join(useTmp(), 'npmrc');
    writeFileSync(config, `registry=${registry.url}\n`);
    const env = npmEnv(config, useTmp());
    await run('npm', ['init', '-y'], { cwd: dir, env });
    await run('npm', install!.split(' ').slice(1), { cwd: dir, env });
    // As written, on a free port (the default 4580 may be taken on a shared machine), with the callback at a receiver.
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const server = spawn('npx', [...start!.split(' ').slice(1), '--memory', '--port', String(port)], {
      cwd: dir,
      env,
      detached: true,
    });
    const exited = new Promise((done) => server.once('exit', done));
    try {
      for (
        let i = 0;
        !(await fetch(`${url}/health`).then(
          (r) => r.ok,
          () => false,
        ));
        i++
      ) {
        if (i > 1200) throw new Error('npx va-sandbox start did not answer');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const receiver = await useReceiver();
      const args = [...trigger!.split(' ').slice(1, -1), `${receiver.url}/webhooks`, '--url', url];
      const triggered = await run('npx', args, { cwd: dir, env });
      const callbacks = await receiver.waitFor(3);
      expect(callbacks.map((callback) => callback.body.eventType)).toEqual([
        'created',
        'cash_in_received',
        'succeeded',
      ]);
      expect(triggered.stdout).toContain('succeeded');
    } finally {
      process.kill(-server.pid!, 'SIGINT');
    }
    await exited;
  }, 120_000);
});
