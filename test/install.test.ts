import { execFile, execFileSync, spawn } from 'node:child_process';
import { copyFileSync, readdirSync, readFileSync, symlinkSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { freePort, ROOT, useTmp } from './helpers.js';

/**
 * The package as a user gets it, outside this repository: packed, installed into a new ESM project from the
 * tarball, a local folder and a git URL, and used there the way the README says (its snippets, taken from
 * README.md itself, so the README cannot drift from what works). Slow by nature: it runs npm.
 */

const run = promisify(execFile);
const TIMEOUT = 300_000;
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));

/** npm in `cwd`, from the local cache when it can (CI runs right after `npm ci` filled it). */
const npm = (cwd: string, ...args: string[]) =>
  run('npm', [...args, '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'], { cwd, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, CI: 'true' } });

/**
 * The repository's files (tracked, and new ones not ignored) copied into a temp folder, its node_modules linked in:
 * packed and installed from there, whose `prepare` build rewrites the copy's dist, not the dist the CLI tests running
 * beside this file use.
 */
function copyOfRoot(): string {
  const dir = useTmp();
  const files = execFileSync('git', ['ls-files', '-co', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' });
  for (const file of files.split('\n').filter(Boolean)) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    copyFileSync(join(ROOT, file), join(dir, file));
  }
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  return dir;
}

/** A new ESM project, as `npm init` plus `"type": "module"` makes it. */
function consumer(): string {
  const dir = useTmp();
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true, type: 'module' }, null, 2));
  return dir;
}

/** The README's code blocks marked `<!-- snippet: path -->`, by path. */
function readmeSnippets(lang = 'ts'): Map<string, string> {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  return new Map([...readme.matchAll(new RegExp(`<!-- snippet: (\\S+) -->\n\`\`\`${lang}\n([\\s\\S]*?)\`\`\``, 'g'))].map((match) => [match[1]!, match[2]!]));
}

/**
 * The README's install command for the snippets, as npm arguments: its tarball is the one just packed, and the
 * packages it names beside va-sandbox get the versions this repository tests with (so npm finds them in its cache).
 */
function readmeInstall(tarball: string): string[] {
  const line = readmeSnippets('sh').get('install')?.split('\n')[0]?.replace(/\s+#.*$/, '');
  expect(line).toMatch(/^npm install --save-dev /);
  const [, , ...args] = line!.split(/\s+/);
  return args.map((arg) => {
    if (arg.startsWith('-')) return arg;
    if (arg === `./${pkg.name}-${pkg.version}.tgz`) return tarball;
    const version = pkg.devDependencies[arg];
    expect({ arg, pinned: typeof version }).toEqual({ arg, pinned: 'string' });
    return `${arg}@${version}`;
  });
}

/**
 * `npx va-sandbox --version`, then `npx va-sandbox start` until /health answers, and Ctrl-C stops it cleanly. npx
 * does not pass a signal on to its child: like a terminal's Ctrl-C, the signal goes to the whole process group.
 */
async function startsThere(dir: string): Promise<void> {
  const { stdout } = await run('npx', ['va-sandbox', '--version'], { cwd: dir });
  expect(stdout).toBe(`${pkg.version}\n`);
  const port = await freePort();
  const server = spawn('npx', ['va-sandbox', 'start', '--memory', '--port', String(port)], { cwd: dir, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  server.stdout.on('data', (chunk) => (output += chunk));
  server.stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise<void>((done) => server.once('exit', () => done()));
  try {
    for (let i = 0; !(await fetch(`http://127.0.0.1:${port}/health`).then((r) => r.ok, () => false)); i++) {
      if (i > 400) throw new Error(`npx va-sandbox start did not answer: ${output}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    process.kill(-server.pid!, 'SIGINT');
    await exited;
  }
  expect(output).toContain(`listening on http://127.0.0.1:${port}`);
  expect(output).toContain('va-sandbox stopped; it kept nothing (--memory)');
}

describe('installed outside this repository', () => {
  const times: string[] = [];
  const timed = async <T>(what: string, work: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    const result = await work();
    times.push(`${what} ${((performance.now() - started) / 1000).toFixed(1)} s`);
    return result;
  };

  it(
    'from a packed tarball: npx va-sandbox works, and the README snippets pass under vitest in a new ESM project',
    async () => {
      const packed = useTmp();
      await timed('pack', () => npm(copyOfRoot(), 'pack', '--pack-destination', packed));
      const tarball = join(packed, readdirSync(packed).find((name) => name.endsWith('.tgz'))!);
      const contents = (await run('tar', ['-tzf', tarball])).stdout.split('\n').filter(Boolean);
      // What a user needs and nothing else: the built code, the executable, the scenario fixtures, the two JSON Schemas.
      expect(contents.filter((file) => !/^package\/(bin|dist|fixtures)\/|^package\/(package\.json|README\.md|LICENSE|scenario\.schema\.json|config\.schema\.json)$/.test(file))).toEqual([]);
      expect(contents.some((file) => file.endsWith('.map'))).toBe(false);
      // The license's text travels with the code (package.json says MIT; the MIT license asks for its text).
      expect(contents).toContain('package/LICENSE');
      expect((await run('tar', ['-xzOf', tarball, 'package/LICENSE'])).stdout).toMatch(/^MIT License\n\nCopyright \(c\) \d{4} va-sandbox contributors\n/);

      const dir = consumer();
      // Exactly what the README says to install.
      const install = readmeInstall(tarball);
      expect(install).toEqual(['--save-dev', tarball, `vitest@${pkg.devDependencies.vitest}`, `msw@${pkg.devDependencies.msw}`]);
      await timed('install tarball', () => npm(dir, 'install', ...install));
      await timed('start', () => startsThere(dir));
      const snippets = readmeSnippets();
      expect([...snippets.keys()]).toEqual(['test/sandbox.test.ts', 'test/msw.test.ts']);
      for (const [path, code] of snippets) {
        mkdirSync(dirname(join(dir, path)), { recursive: true });
        writeFileSync(join(dir, path), code);
      }
      const tests = await timed('README snippets under vitest', () => run('npx', ['vitest', 'run', '--reporter=verbose'], { cwd: dir }));
      expect(tests.stdout).toMatch(/2 passed/);
      console.log(`pack and install: ${times.join(', ')}`);
    },
    TIMEOUT,
  );

  it(
    'from a local folder and from a git URL (prepare builds it): npx va-sandbox works',
    async () => {
      const fromFolder = consumer();
      await timed('install folder', () => npm(fromFolder, 'install', copyOfRoot()));
      await startsThere(fromFolder);
      // A git URL is cloned at its commit and built by `prepare`: the committed code, as a team would install it.
      const fromGit = consumer();
      await timed('install git URL', () => npm(fromGit, 'install', `git+file://${ROOT}`));
      await startsThere(fromGit);
      console.log(`folder and git installs: ${times.join(', ')}`);
    },
    TIMEOUT,
  );
});
