import { execFile, spawn } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { eventually, freePort, ROOT, useTmp } from './helpers.js';

/**
 * A local npm registry for the tests (Verdaccio, a dev dependency): started on a free loopback port with a storage
 * folder and config of its own and no uplink, so it serves only what was published to it.
 */

const run = promisify(execFile);

/**
 * The environment of an npm whose whole configuration is `config` (an npmrc): the caller's npm settings dropped
 * (those of `npm test` itself come as npm_config_* variables), no global config, a cache of its own.
 */
export function npmEnv(config: string, cache: string): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)));
  const empty = join(useTmp(), 'empty-npmrc');
  writeFileSync(empty, '');
  return {
    ...env,
    npm_config_userconfig: config,
    npm_config_globalconfig: empty,
    npm_config_cache: cache,
    npm_config_update_notifier: 'false',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
  };
}

export interface LocalRegistry {
  url: string;
  /** An npmrc that publishes to it, as a user made by the test. */
  publisherConfig: string;
  close(): Promise<void>;
}

/** Starts Verdaccio and signs up a publisher; `close` stops it. */
export async function startRegistry(): Promise<LocalRegistry> {
  const dir = useTmp();
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/`;
  const config = join(dir, 'config.yaml');
  writeFileSync(
    config,
    [
      `storage: ${join(dir, 'storage')}`,
      'auth:',
      `  htpasswd: { file: ${join(dir, 'htpasswd')} }`,
      // No uplinks: a package not published here is not found.
      'uplinks: {}',
      'packages:',
      "  '**': { access: $all, publish: $authenticated }",
      'web: { enable: false }',
      'middlewares: { audit: { enabled: false } }',
      'log: { type: stdout, format: pretty, level: warn }',
    ].join('\n'),
  );
  const bin = join(ROOT, 'node_modules', 'verdaccio', 'bin', 'verdaccio');
  const child = spawn(process.execPath, [bin, '--config', config, '--listen', `127.0.0.1:${port}`], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const close = async () => {
    child.kill('SIGTERM');
    await exited;
  };
  try {
    await eventually(async () => (await fetch(`${url}-/ping`)).ok, 30_000, `Verdaccio on ${url}`);
  } catch (error) {
    await close();
    throw new Error(`${(error as Error).message}: ${output}`);
  }
  const signUp = await fetch(`${url}-/user/org.couchdb.user:publisher`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'publisher', password: 'publisher-password' }),
  });
  const { token } = (await signUp.json()) as { token: string };
  const publisherConfig = join(dir, 'publisher-npmrc');
  writeFileSync(publisherConfig, `registry=${url}\n//127.0.0.1:${port}/:_authToken=${token}\n`);
  return { url, publisherConfig, close };
}

const MODULES = 'node_modules/';

/** `name@version` of every package a plain install of this package pulls: the lockfile's entries that are not dev. */
export function productionClosure(): string[] {
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8'));
  return Object.entries(lock.packages as Record<string, { version: string; dev?: boolean }>)
    .filter(([path, entry]) => path !== '' && !entry.dev)
    .map(([path, entry]) => `${path.slice(path.lastIndexOf(MODULES) + MODULES.length)}@${entry.version}`);
}

/**
 * Publishes this package (packed as built, without running `prepare` again) and every package of its production
 * closure, each the tarball the public registry serves (from npm's cache when it is there), to `registry`.
 */
export async function publishHere(registry: LocalRegistry): Promise<void> {
  const packed = useTmp();
  const publisher = npmEnv(registry.publisherConfig, useTmp());
  // Packing takes this machine's npm settings; publishing, only the publisher's.
  const npm = (env: NodeJS.ProcessEnv, ...args: string[]) =>
    run('npm', [...args, '--loglevel=error'], { cwd: packed, env, maxBuffer: 16 * 1024 * 1024 });
  await npm(process.env, 'pack', ROOT, '--ignore-scripts');
  await npm(process.env, 'pack', '--prefer-offline', ...productionClosure());
  // --ignore-scripts: a dependency's tarball is published as it is, with no script of its own run here.
  const publish = (tarball: string) =>
    npm(publisher, 'publish', tarball, '--registry', registry.url, '--provenance=false', '--ignore-scripts');
  await Promise.all(
    readdirSync(packed)
      .filter((name) => name.endsWith('.tgz'))
      .map((name) => publish(join(packed, name))),
  );
}
