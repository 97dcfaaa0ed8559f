import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { eventually, freePort, ROOT, useTmp } from './helpers.js';
import { asPodman, podmanMissing, usePodman } from './podman.js';

/**
 * docs/ci-example.yml as pasted: each job's `run:` steps, as written, in a project laid out as the workflow expects
 * (va-sandbox in node_modules, the scenarios under fixtures/). `npm ci` is the project's own install: here the
 * package is this repository's build, linked in its place, so that step alone is not run.
 */
const yml = readFileSync(join(ROOT, 'docs', 'ci-example.yml'), 'utf8');

/** A job's text: from its `  name:` line under `jobs:` to the next job's. */
function job(name: string): string {
  return new RegExp(`^  ${name}:\\n([^]*?)(?=^  \\S|(?![^]))`, 'm').exec(yml.slice(yml.indexOf('\njobs:\n')))![1]!;
}

/** A job's `run:` scripts, in order: a one-line `run: X` or a block `run: |` (the lines indented past `run:`). */
function runSteps(text: string): string[] {
  const lines = text.split('\n');
  const steps: string[] = [];
  lines.forEach((line, i) => {
    const match = /^(\s*)(?:- )?run: (.*)$/.exec(line);
    if (!match) return;
    if (match[2] !== '|') {
      steps.push(match[2]!);
      return;
    }
    const indent = /^\s*/.exec(lines[i + 1]!)![0];
    const block = [];
    for (let j = i + 1; j < lines.length && (lines[j]!.startsWith(indent) || lines[j] === ''); j++)
      block.push(lines[j]!.slice(indent.length));
    steps.push(block.join('\n').trim());
  });
  return steps;
}

/** `KEY: value` lines of a mapping (the job's `env:`, a service's `env:`) given its header line. */
function mapping(text: string, header: RegExp): Record<string, string> {
  const start = text.split('\n').findIndex((line) => header.test(line));
  const indent = /^\s*/.exec(text.split('\n')[start]!)![0].length;
  const entries: Record<string, string> = {};
  for (const line of text.split('\n').slice(start + 1)) {
    if (/^\s*#/.test(line)) continue;
    const match = /^(\s*)([A-Z_]+): (.*)$/.exec(line);
    if (!match || match[1]!.length <= indent) break;
    entries[match[2]!] = match[3]!;
  }
  return entries;
}

/** A project as the workflow finds it after checkout and `npm ci`: its fixtures, va-sandbox installed. */
function project(): string {
  const dir = useTmp();
  cpSync(join(ROOT, 'fixtures'), join(dir, 'fixtures'), { recursive: true });
  mkdirSync(join(dir, 'node_modules', '.bin'), { recursive: true });
  symlinkSync(ROOT, join(dir, 'node_modules', 'va-sandbox'));
  symlinkSync('../va-sandbox/bin/va-sandbox.js', join(dir, 'node_modules', '.bin', 'va-sandbox'));
  return dir;
}

/** Runs a command in a process group of its own; resolves with its exit code and output, and the group's id. */
function inGroup(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }) {
  const child = spawn(command, args, { ...options, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  return {
    group: child.pid!,
    done: new Promise<{ code: number | null; output: string }>((done) =>
      child.once('close', (code) => done({ code, output })),
    ),
  };
}

/** The JUnit report the scenarios wrote: every fixture ran, none failed. */
function expectAllPassed(dir: string) {
  const report = readFileSync(join(dir, 'reports', 'scenarios.xml'), 'utf8');
  expect(report).toMatch(/<testsuites [^>]*failures="0"/);
  expect(report.match(/<testsuite /g)).toHaveLength(
    readdirSync(join(ROOT, 'fixtures')).filter((name) => name.endsWith('.json')).length,
  );
}

describe('docs/ci-example.yml', () => {
  it('job "scenarios": Node 24, the sandbox started in the background, the scenarios run, the report written (4580 moved to a free port)', async () => {
    const text = job('scenarios');
    expect(text).toMatch(/node-version: 24\n/);
    const port = String(await freePort());
    const env = Object.fromEntries(
      Object.entries(mapping(text, /^ {4}env:$/)).map(([key, value]) => [key, value.replaceAll('4580', port)]),
    );
    const steps = runSteps(text);
    expect(steps[0]).toBe('npm ci');
    const dir = project();
    const groups: number[] = [];
    try {
      for (const step of steps.slice(1)) {
        // As GitHub runs a step on Linux: bash -e, one shell per step (what a step leaves in the background goes on).
        const { group, done } = inGroup(
          'bash',
          ['--noprofile', '--norc', '-eo', 'pipefail', '-c', step.replaceAll('4580', port)],
          { cwd: dir, env: { ...process.env, ...env } },
        );
        groups.push(group);
        const result = await done;
        expect({ step, ...result }).toMatchObject({ step, code: 0 });
      }
      expectAllPassed(dir);
      expect(readFileSync(join(dir, 'sandbox.log'), 'utf8')).toMatch(/listening on http:\/\/127\.0\.0\.1:/);
    } finally {
      // The background sandbox of the start step: its step's process group, as the runner ends a job.
      for (const group of groups) {
        try {
          process.kill(-group, 'SIGTERM');
        } catch {}
      }
    }
  }, 120_000);

  const missing = podmanMissing();
  it.skipIf(missing !== null)(
    `job "scenarios-with-the-image": the image as a service named va-sandbox, the steps in a node:24 job container on its network${missing ? `: skipped, ${missing}` : ''}`,
    async () => {
      const text = job('scenarios-with-the-image');
      expect(text).toMatch(/^ {4}container: node:24$/m);
      expect(text).toMatch(/^ {6}va-sandbox:\n {8}image: /m);
      const podman = await usePodman();
      const run = randomUUID().slice(0, 8);
      const [image, network, service] = [`va-sandbox-test-${run}`, `va-sandbox-ci-${run}`, `va-sandbox-service-${run}`];
      await podman.build(asPodman(podman, ['docker', 'build', '-t', image, '.']));
      try {
        await podman('network', 'create', network);
        // The service as the runner starts it: its name as its network alias, its env.
        const serviceEnv = Object.entries(mapping(text, /^ {8}env:$/)).flatMap(([key, value]) => [
          '-e',
          `${key}=${value}`,
        ]);
        expect(serviceEnv).toEqual(['-e', 'VA_SANDBOX_ALLOWED_HOSTS=va-sandbox']);
        await podman(
          'run',
          '-d',
          '--name',
          service,
          '--network',
          network,
          '--network-alias',
          'va-sandbox',
          ...serviceEnv,
          image,
        );
        // The runner waits for the image's health check before the job's steps.
        await eventually(
          () => podman('healthcheck', 'run', service).then(() => true),
          60_000,
          'the service to be healthy',
        );
        const jobEnv = Object.entries(mapping(text, /^ {4}env:$/)).flatMap(([key, value]) => ['-e', `${key}=${value}`]);
        expect(jobEnv).toEqual(['-e', 'VA_SANDBOX_URL=http://va-sandbox:4580']);
        const steps = runSteps(text);
        expect(steps[0]).toBe('npm ci');
        const dir = project();
        // The job container: node:24 (here the local stand-in when there is one), the project and the package it
        // links to mounted at their own paths. Its shell is sh where the image has no bash.
        const node = podman.base ?? 'node:24';
        for (const step of steps.slice(1)) {
          const mounts = ['-v', `${ROOT}:${ROOT}:ro`, '-v', `${dir}:${dir}`, '-w', dir];
          const result = await podman(
            'run',
            '--rm',
            '--network',
            network,
            ...mounts,
            ...jobEnv,
            node,
            'sh',
            '-e',
            '-c',
            step,
          ).then(
            (output) => ({ code: 0, output }),
            (error: Error) => ({ code: 1, output: error.message }),
          );
          expect({ step, ...result }).toMatchObject({ step, code: 0 });
        }
        expect(existsSync(join(dir, 'reports', 'scenarios.xml'))).toBe(true);
        expectAllPassed(dir);
      } finally {
        await podman('rm', '-f', '-v', '-t', '0', service).catch(() => {});
        await podman('network', 'rm', '-f', network).catch(() => {});
        await podman.removeImage(image).catch(() => {});
      }
    },
    900_000,
  );
});
