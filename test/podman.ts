import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from './helpers.js';

/**
 * Podman for the container tests: where it is, the base image to build on, and the settings that make it run here.
 *
 * This workplace's machines cannot pull from a public image registry: `../shared/tools/local-node-base.sh` (beside
 * the repository in CI) builds a local stand-in for node:24-slim and writes the Podman settings this sandbox needs
 * (runc, cgroupfs, no default ulimits). Elsewhere the Dockerfile's own base (node:24-slim) is pulled as usual, or
 * VA_SANDBOX_IMAGE_BASE names another.
 */
const run = promisify(execFile);
// shared/ sits beside the repository in CI; VA_SANDBOX_SHARED names it from a checkout elsewhere.
const SHARED_BASE_SCRIPT = join(
  process.env.VA_SANDBOX_SHARED ?? join(ROOT, '..', 'shared'),
  'tools',
  'local-node-base.sh',
);
// The settings the shared script writes (and tells on stderr); runc and cgroupfs go with them.
const LOCAL_SETTINGS = ['--runtime', 'runc', '--cgroup-manager=cgroupfs'];

const onPath = (command: string) => {
  try {
    execFileSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

/** Why the container tests cannot run here, or null when they can: in CI they must (the shared script installs podman). */
export function podmanMissing(): string | null {
  if (onPath('podman') || existsSync(SHARED_BASE_SCRIPT) || process.env.CI) return null;
  return 'podman is not installed (apt-get install podman runc; .ci/run installs it)';
}

export interface Podman {
  /** podman with this machine's settings; resolves with stdout, rejects with stderr in the message. */
  (...args: string[]): Promise<string>;
  /**
   * A `podman build …`, one at a time on this machine: the test files that build the image run side by side, and the
   * second build of the same Dockerfile reuses the first one's layers instead of running npm ci again beside it.
   */
  build: (args: string[]) => Promise<string>;
  /**
   * `podman rmi -f`, under the build's lock: a build reuses the cached layers of another file's image, and removing
   * that image mid-build took the layers from under it ("layer not known").
   */
  removeImage: (image: string) => Promise<string>;
  /** The same, as a long-running child (a foreground `podman run`). */
  spawn: (args: string[]) => ChildProcess;
  /** The base image to build on (and run Node in) when it is not the Dockerfile's node:24-slim. */
  base: string | undefined;
  /** `--build-arg BASE=…` when the build needs another base than the Dockerfile's. */
  baseArgs: string[];
  env: NodeJS.ProcessEnv;
}

/** Podman set up for this machine: the shared base image built when the script is there. */
export async function usePodman(): Promise<Podman> {
  let base = process.env.VA_SANDBOX_IMAGE_BASE;
  let flags: string[] = [];
  const env = { ...process.env };
  if (existsSync(SHARED_BASE_SCRIPT)) {
    // One at a time: it may install podman (apt) and build the base, and several test files may ask at once.
    const made = await run('flock', [join(tmpdir(), 'va-sandbox-podman-base.lock'), 'bash', SHARED_BASE_SCRIPT], {
      env,
      maxBuffer: 16 * 1024 * 1024,
    });
    base ??= made.stdout.trim();
    const conf = /CONTAINERS_CONF=(\S+)/.exec(made.stderr)?.[1];
    if (conf) env.CONTAINERS_CONF = conf;
    flags = LOCAL_SETTINGS;
  }
  const call = async (command: string[], args: string[]) => {
    try {
      return (
        await run(command[0]!, [...command.slice(1), ...flags, ...args], {
          env,
          cwd: ROOT,
          maxBuffer: 64 * 1024 * 1024,
        })
      ).stdout;
    } catch (error) {
      const { stderr, message } = error as { stderr?: string; message: string };
      throw new Error(`podman ${args.join(' ')}: ${stderr?.trim() || message}`);
    }
  };
  const podman = ((...args: string[]) => call(['podman'], args)) as Podman;
  const locked = ['flock', join(tmpdir(), 'va-sandbox-podman-build.lock'), 'podman'];
  podman.build = (args) => call(locked, args);
  podman.removeImage = (image) => call(locked, ['rmi', '-f', image]);
  podman.spawn = (args) => spawn('podman', [...flags, ...args], { env, cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  podman.base = base;
  podman.baseArgs = base ? ['--build-arg', `BASE=${base}`] : [];
  podman.env = env;
  return podman;
}

/**
 * `docker …` as written in a document, run by Podman: `build` keeps HEALTHCHECK (`--format docker`; Docker's own
 * format) and builds on the base this machine has, with the host's network for npm.
 */
export function asPodman(podman: Podman, words: string[]): string[] {
  if (words[0] !== 'docker') throw new Error(`not a docker command: ${words.join(' ')}`);
  const [, command, ...rest] = words;
  return command === 'build'
    ? ['build', '--format', 'docker', '--network', 'host', ...podman.baseArgs, ...rest]
    : [command!, ...rest];
}
