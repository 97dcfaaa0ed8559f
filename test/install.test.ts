import { execFile, execFileSync, spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { freePort, ROOT, useTmp } from './helpers.js';

/**
 * The package as a user gets it, outside this repository: packed, installed into a new ESM project from the
 * tarball, a local folder and a git URL, and used there the way the README says (its snippets, taken from
 * README.md itself, so the README cannot drift from what works). Slow by nature: it runs npm.
 */

const run = promisify(execFile);
// A build in a fresh clone, then installs from the npm cache; a git URL's install builds once more with its dev tools.
const TIMEOUT = 600_000;
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));

/** npm in `cwd`, from the local cache when it can (CI runs right after `npm ci` filled it). */
const npm = (cwd: string, ...args: string[]) =>
  run('npm', [...args, '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'], {
    cwd,
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, CI: 'true' },
  });

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
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({ name: 'consumer', version: '1.0.0', private: true, type: 'module' }, null, 2),
  );
  return dir;
}

/** The README's code blocks marked `<!-- snippet: path -->`, by path. */
function readmeSnippets(lang = 'ts'): Map<string, string> {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  return new Map(
    [...readme.matchAll(new RegExp(`<!-- snippet: (\\S+) -->\n\`\`\`${lang}\n([\\s\\S]*?)\`\`\``, 'g'))].map(
      (match) => [match[1]!, match[2]!],
    ),
  );
}

/**
 * The README's install command for the snippets (`line` 0: from the tarball, 1: from the git URL), as npm arguments:
 * its tarball or git URL is the one given, and the packages it names beside va-sandbox get the versions this
 * repository tests with (so npm finds them in its cache).
 */
function readmeInstall(line: 0 | 1, source: string): string[] {
  const command = readmeSnippets('sh')
    .get('install')
    ?.split('\n')
    [line]?.replace(/\s+#.*$/, '');
  expect(command).toMatch(/^npm install --save-dev /);
  const [, , ...args] = command!.split(/\s+/);
  return args.map((arg) => {
    if (arg.startsWith('-')) return arg;
    if (arg === [`./${pkg.name}-${pkg.version}.tgz`, `git+https://…/${pkg.name}.git`][line]) return source;
    const version = pkg.devDependencies[arg];
    expect({ arg, pinned: typeof version }).toEqual({ arg, pinned: 'string' });
    return `${arg}@${version}`;
  });
}

/** The README's commands that pack the tarball in a clone of this repository, each as npm arguments. */
function readmePack(): string[][] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8').replace(/\s+/g, ' ');
  const command = /a tarball packed in a clone of it \(`([^`]+)`/.exec(readme)?.[1];
  expect(command).toBe('npm ci && npm pack');
  return command!.split(' && ').map((part) => part.split(' ').slice(1));
}

/**
 * `npx va-sandbox --version`, then `npx va-sandbox start` until /health answers, and Ctrl-C stops it cleanly. npx
 * does not pass a signal on to its child: like a terminal's Ctrl-C, the signal goes to the whole process group.
 */
async function startsThere(dir: string): Promise<void> {
  const { stdout } = await run('npx', ['va-sandbox', '--version'], { cwd: dir });
  expect(stdout).toBe(`${pkg.version}\n`);
  const port = await freePort();
  const server = spawn('npx', ['va-sandbox', 'start', '--memory', '--port', String(port)], {
    cwd: dir,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  server.stdout.on('data', (chunk) => (output += chunk));
  server.stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise<void>((done) => server.once('exit', () => done()));
  try {
    for (
      let i = 0;
      !(await fetch(`http://127.0.0.1:${port}/health`).then(
        (r) => r.ok,
        () => false,
      ));
      i++
    ) {
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
      // As the README says, in a fresh clone: `npm pack` alone fails there (its build needs the dev tools). `npm ci`
      // installs the lockfile's tree, which this repository's node_modules already is: linked in its place
      // (`copyOfRoot`), so the test does not spend minutes copying the dev tools again.
      const clone = copyOfRoot();
      const [ci, pack] = readmePack();
      expect(ci).toEqual(['ci']);
      await timed(`npm ${pack!.join(' ')} in a fresh clone`, () => npm(clone, ...pack!));
      const tarball = join(useTmp(), readdirSync(clone).find((name) => name.endsWith('.tgz'))!);
      copyFileSync(join(clone, basename(tarball)), tarball);
      const contents = (await run('tar', ['-tzf', tarball])).stdout.split('\n').filter(Boolean);
      // What a user needs and nothing else: the built code, the executable, the scenario fixtures, the two JSON Schemas.
      expect(
        contents.filter(
          (file) =>
            !/^package\/(bin|dist|fixtures)\/|^package\/(package\.json|README\.md|LICENSE|scenario\.schema\.json|config\.schema\.json)$/.test(
              file,
            ),
        ),
      ).toEqual([]);
      expect(contents.some((file) => file.endsWith('.map'))).toBe(false);
      // The license's text travels with the code (package.json says MIT; the MIT license asks for its text).
      expect(contents).toContain('package/LICENSE');
      expect((await run('tar', ['-xzOf', tarball, 'package/LICENSE'])).stdout).toMatch(
        /^MIT License\n\nCopyright \(c\) \d{4} va-sandbox contributors\n/,
      );

      const dir = consumer();
      // Exactly what the README says to install.
      const install = readmeInstall(0, tarball);
      expect(install).toEqual([
        '--save-dev',
        tarball,
        `vitest@${pkg.devDependencies.vitest}`,
        `msw@${pkg.devDependencies.msw}`,
      ]);
      await timed('install tarball', () => npm(dir, 'install', ...install));
      await timed('start', () => startsThere(dir));
      const snippets = readmeSnippets();
      expect([...snippets.keys()]).toEqual(['test/sandbox.test.ts', 'test/msw.test.ts']);
      for (const [path, code] of snippets) {
        mkdirSync(dirname(join(dir, path)), { recursive: true });
        writeFileSync(join(dir, path), code);
      }
      const tests = await timed('README snippets under vitest', () =>
        run('npx', ['vitest', 'run', '--reporter=verbose'], { cwd: dir }),
      );
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
      const install = readmeInstall(1, `git+file://${ROOT}`);
      const versions = [`vitest@${pkg.devDependencies.vitest}`, `msw@${pkg.devDependencies.msw}`];
      expect(install).toEqual(['--save-dev', `git+file://${ROOT}`, ...versions]);
      await timed('install git URL', () => npm(fromGit, 'install', ...install));
      await startsThere(fromGit);
      console.log(`folder and git installs: ${times.join(', ')}`);
    },
    TIMEOUT,
  );
});
