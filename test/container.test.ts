import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, eventually, freePort, PAYMENT, ROOT, useReceiver, useTmp } from './helpers.js';
import { asPodman, type Podman, podmanMissing, usePodman } from './podman.js';

/** The `docker …` lines of the README's Container section, as written (comments dropped). */
function readmeCommands(): string[][] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = /^## Container\n([^]*?)^## /m.exec(readme)![1]!;
  const block = /^```sh\n([^]*?)^```/m.exec(section)![1]!;
  return block
    .split('\n')
    .map((line) => line.replace(/\s+#.*$/, '').trim())
    .filter(Boolean)
    .map((line) => line.split(/\s+/));
}

/** A GET with a Host header of our choosing (fetch sets its own). */
const getWithHost = (url: string, host: string) =>
  new Promise<number>((done, fail) =>
    get(url, { headers: { host } }, (res) => (res.resume(), done(res.statusCode!))).on('error', fail),
  );

const missing = podmanMissing();
// Names of this run only, so parallel runs on one machine never share an image, a container or a volume.
const run = randomUUID().slice(0, 8);
const image = `va-sandbox-test-${run}`;
const volume = `va-sandbox-data-${run}`;
const names: string[] = [];

/**
 * The image as the README builds and runs it, driven by Podman (`docker` → `podman`): ports moved to free ones, and
 * this run's own image, container and volume names. Skipped only where podman is absent and this is not CI.
 */
describe.skipIf(missing !== null)(
  `the container image (README "Container")${missing ? `: skipped, ${missing}` : ''}`,
  () => {
    let podman: Podman;
    const [build, published, hostNetwork] = readmeCommands();
    const buildSeconds: number[] = [];

    /** A README `docker run` line as this run's: a name, free ports, this run's volume and image; `extra` before the image. */
    const runLine = (words: string[], hostPort: number, extra: string[] = []) => {
      const name = `va-sandbox-test-${run}-${names.length}`;
      names.push(name);
      const args = asPodman(podman, words).map((word) =>
        word === '4580:4580'
          ? `${hostPort}:4580`
          : word === 'va-sandbox-data:/data'
            ? `${volume}:/data`
            : word === 'va-sandbox'
              ? image
              : word,
      );
      args.splice(args.indexOf(image), 0, '--name', name, ...extra);
      return { name, child: podman.spawn(args), url: `http://127.0.0.1:${hostPort}` };
    };

    /** Runs a README `docker run` line; its output (stdout and stderr) is kept, whole once `exited` resolves. */
    const running = (words: string[], hostPort: number, extra: string[] = []) => {
      const container = runLine(words, hostPort, extra);
      let output = '';
      container.child.stdout!.on('data', (chunk) => (output += chunk));
      container.child.stderr!.on('data', (chunk) => (output += chunk));
      return {
        ...container,
        output: () => output,
        exited: new Promise<number | null>((done) => container.child.once('close', done)),
      };
    };

    /** The container's own lines of an output: without podman's log lines (e.g. no systemd to run health checks here). */
    const containerLines = (output: string) =>
      output.split('\n').filter((line) => line && !/^time="[^"]*" level=/.test(line));

    /** Waits until a container serves (its /health answers) or ends: `'serving'`, or its exit code. */
    const outcome = async (container: ReturnType<typeof running>) => {
      let code: number | null | undefined;
      void container.exited.then((exit) => (code = exit));
      await eventually(
        async () => code !== undefined || (await fetch(`${container.url}/health`)).ok,
        60_000,
        `/health of ${container.name}`,
      );
      return code === undefined ? 'serving' : code;
    };

    /** Runs a README `docker run` line and waits for its /health; podman's output is kept for the failure message. */
    const started = async (words: string[], hostPort: number, extra: string[] = []) => {
      const container = running(words, hostPort, extra);
      const result = await outcome(container);
      if (result !== 'serving') throw new Error(`${container.name} exited ${result}: ${container.output()}`);
      return container;
    };

    beforeAll(async () => {
      podman = await usePodman();
      expect(build!.slice(0, 2)).toEqual(['docker', 'build']);
      const started = performance.now();
      await podman.build(asPodman(podman, build!).map((word) => (word === 'va-sandbox' ? image : word)));
      buildSeconds.push((performance.now() - started) / 1000);
      // Once more with nothing changed: the layers are reused (what a second CI run on the same machine costs).
      const again = performance.now();
      await podman.build(asPodman(podman, build!).map((word) => (word === 'va-sandbox' ? image : word)));
      buildSeconds.push((performance.now() - again) / 1000);
      console.log(`image build: ${buildSeconds.map((s) => `${s.toFixed(1)} s`).join(', then ')} (unchanged)`);
    }, 900_000);

    afterAll(async () => {
      if (!podman) return;
      for (const name of names) await podman('rm', '-f', '-t', '0', name).catch(() => {});
      await podman('volume', 'rm', '-f', volume).catch(() => {});
      await podman.removeImage(image).catch(() => {});
    }, 120_000);

    it('has the README three commands: build, run with the port published, run on the host network', () => {
      expect(readmeCommands().map((words) => words.slice(0, 2).join(' '))).toEqual([
        'docker build',
        'docker run',
        'docker run',
      ]);
      expect(hostNetwork).toContain('--network');
    });

    it('is built non-root, with a HEALTHCHECK on /health, the state in /data, listening on 0.0.0.0:4580; any command runs', async () => {
      const [{ Config: config, Healthcheck: healthcheck }] = JSON.parse(await podman('image', 'inspect', image));
      expect(config.User).toBe('node');
      expect(config.Volumes).toHaveProperty(['/data']);
      expect(healthcheck.Test.join(' ')).toMatch(/\/health/);
      expect(config.Env).toEqual(
        expect.arrayContaining(['VA_SANDBOX_HOST=0.0.0.0', 'VA_SANDBOX_PORT=4580', 'VA_SANDBOX_DATA=/data/state.db']),
      );
      // Arguments after the image replace `start`: any va-sandbox command.
      const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
      expect(await podman('run', '--rm', image, '--version')).toBe(`${pkg.version}\n`);
      // The package's own files (package.json "files") are in /app.
      const listed = (await podman('run', '--rm', '--entrypoint', 'ls', image, '/app')).split('\n');
      expect(listed).toEqual(expect.arrayContaining(pkg.files.filter((file: string) => !file.startsWith('!'))));
    });

    it('serves the API on the published port, stops cleanly on SIGTERM, and a new container on the volume has the same accounts; on the host network it calls a receiver on the host', async () => {
      const first = await started(published!, await freePort());
      // No /data/va-sandbox.json: the defaults, any key (this run's own) and any hub.
      expect(first.output()).toMatch(/any Bearer key works/);
      expect(await podman('exec', first.name, 'id', '-u')).toBe('1000\n');
      // The image's own health check, run as the engine runs it.
      await podman('healthcheck', 'run', first.name);
      const key = `sk_container_${run}`;
      const account = api(first.url, key);
      const payment = await account.data('POST', '/api/v1/va-payments', {
        ...PAYMENT,
        lockMode: 'amount',
        amount: 1500,
      });
      const transfer = await account.data('POST', '/sandbox/v1/transfers', { to: payment.cvu, total: 1500 });
      expect(transfer.outcome).toBe('credited');
      // The Host guard is on: a laptop's localhost is served, a name that is not loopback is refused unless allowed.
      expect(await getWithHost(`${first.url}/health`, 'localhost:4580')).toBe(200);
      expect(await getWithHost(`${first.url}/health`, 'va-sandbox:4580')).toBe(403);

      // `docker stop`: SIGTERM, and the server's own clean stop (exit 0), well within the engine's 10 s.
      await podman('stop', first.name);
      expect(await first.exited).toBe(0);
      expect(first.output()).toMatch(/va-sandbox stopped; state saved in \/data\/state\.db/);

      // The host-network line, with the port moved to a free one and the setting a CI service needs.
      const port = await freePort();
      const second = await started(hostNetwork!, port, [
        '-e',
        `VA_SANDBOX_PORT=${port}`,
        '-e',
        'VA_SANDBOX_ALLOWED_HOSTS=va-sandbox',
      ]);
      const again = api(second.url, key);
      expect(await again.data('GET', `/api/v1/va-payments/${payment.id}`)).toMatchObject({
        id: payment.id,
        status: 'completed',
        totalReceived: 1500,
      });
      expect(await getWithHost(`${second.url}/health`, 'va-sandbox:4580')).toBe(200);
      expect(await getWithHost(`${second.url}/health`, 'evil.example')).toBe(403);

      // A handler on the host (loopback) gets the callbacks.
      const receiver = await useReceiver();
      const paid = await again.data('POST', '/api/v1/va-payments', {
        ...PAYMENT,
        lockMode: 'amount',
        amount: 700,
        callbackUrl: `${receiver.url}/hooks`,
      });
      await again.data('POST', '/sandbox/v1/transfers', { to: paid.cvu, total: 700 });
      const callbacks = await receiver.waitFor(3);
      expect(callbacks.map((callback) => [callback.url, callback.body.eventType, callback.body.vaPaymentId])).toEqual([
        ['/hooks', 'created', paid.id],
        ['/hooks', 'cash_in_received', paid.id],
        ['/hooks', 'succeeded', paid.id],
      ]);
      await podman('stop', second.name);
      expect(await second.exited).toBe(0);
    }, 180_000);

    it("reads /data/va-sandbox.json when present: its options apply (the image's port and data win); a bad one stops it with one line, exit 2", async () => {
      const dir = useTmp();
      const file = (name: string, options: object) => {
        const path = join(dir, name);
        writeFileSync(path, JSON.stringify(options));
        return path;
      };
      const key = `sk_config_${run}`;
      const config = file('va-sandbox.json', {
        $schema: './config.schema.json',
        apiKeys: [key],
        hubs: [123, 4],
        port: 4999,
        data: '/tmp/other.db',
      });
      const bad = file('bad.json', { prot: 4580 });
      // The file mounted in the volume's place (over this run's volume).
      const asConfig = (path: string) => ['-v', `${path}:/data/va-sandbox.json:ro`];

      // Copied into the volume, then a container on the volume. Its port and data are not used: the image's
      // VA_SANDBOX_PORT and VA_SANDBOX_DATA win, so it answers on 4580, its database /data/state.db.
      await podman(
        'run',
        '--rm',
        '-v',
        `${volume}:/data`,
        '-v',
        `${config}:/config.json:ro`,
        '--entrypoint',
        'cp',
        image,
        '/config.json',
        '/data/va-sandbox.json',
      );
      const configured = await started(published!, await freePort());
      expect(configured.output()).toMatch(/data: +\/data\/state\.db\n/);
      // Its API keys: only this one is served.
      expect((await api(configured.url, `sk_other_${run}`).get('/api/v1/va-payments')).status).toBe(401);
      const account = api(configured.url, key);
      // Its hubs: 123 and 4 only.
      const unknownHub = await account.post('/api/v1/va-payments', PAYMENT);
      expect([unknownHub.status, unknownHub.body.error.code]).toEqual([404, 'NOT_FOUND']);
      expect((await account.post('/api/v1/va-payments', { ...PAYMENT, paymentHubId: 123 })).status).toBe(201);
      await podman('stop', configured.name);
      expect(await configured.exited).toBe(0);

      // A bad file (mounted over the good one): the server does not start; one line names it, exit 2.
      const refused = running(published!, await freePort(), asConfig(bad));
      expect(await outcome(refused)).toBe(2);
      expect(containerLines(refused.output())).toEqual([
        expect.stringMatching(/^va-sandbox: config \/data\/va-sandbox\.json: unknown key "prot" \(the keys are /),
      ]);

      // VA_SANDBOX_CONFIG set on the container wins over the volume's /data/va-sandbox.json: here it names the bad file.
      const named = running(published!, await freePort(), [
        '-v',
        `${bad}:/config/bad.json:ro`,
        '-e',
        'VA_SANDBOX_CONFIG=/config/bad.json',
      ]);
      expect(await outcome(named)).toBe(2);
      expect(containerLines(named.output())).toEqual([
        expect.stringMatching(/^va-sandbox: config \/config\/bad\.json: unknown key "prot"/),
      ]);
    }, 180_000);
  },
);
