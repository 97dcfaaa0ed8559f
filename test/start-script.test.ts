import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain script, without types
import { INPUTS, OUTPUT, staleness } from '../scripts/start.js';
import { ROOT, useTmp } from './helpers.js';

/** A tree shaped like the package: inputs written an hour ago, and the build's output when `built`. */
function tree(built: boolean): string {
  const root = useTmp();
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  };
  write('src/cli/main.ts', '');
  write('scripts/build-cli.js', '');
  write('package.json', '{"type": "module"}');
  const hourAgo = new Date(Date.now() - 3_600_000);
  for (const path of ['src/cli/main.ts', 'scripts/build-cli.js', 'package.json'])
    utimesSync(join(root, path), hourAgo, hourAgo);
  // What the fake build writes: a CLI that prints its arguments and exits with the code given after `--exit`.
  const cli = `export async function main(argv) { console.log('cli ' + argv.join(' ')); const at = argv.indexOf('--exit'); return at < 0 ? 0 : Number(argv[at + 1]); }\n`;
  write(
    'fake-npm.js',
    `import { mkdirSync, writeFileSync } from 'node:fs';\nconsole.log('fake ' + process.argv.slice(2).join(' '));\nmkdirSync('dist/bundle', { recursive: true });\nwriteFileSync(${JSON.stringify(OUTPUT)}, ${JSON.stringify(cli)});\n`,
  );
  if (built) write(OUTPUT, cli);
  return root;
}

/** scripts/start.js and bin/va-sandbox.js copied into `root`, run there with a fake npm as the build. */
function start(root: string, ...args: string[]) {
  mkdirSync(join(root, 'bin'), { recursive: true });
  copyFileSync(join(ROOT, 'scripts', 'start.js'), join(root, 'scripts', 'start.js'));
  copyFileSync(join(ROOT, 'bin', 'va-sandbox.js'), join(root, 'bin', 'va-sandbox.js'));
  utimesSync(join(root, 'scripts', 'start.js'), new Date(0), new Date(0));
  return spawnSync(process.execPath, ['scripts/start.js', ...args], {
    cwd: root,
    env: { ...process.env, npm_execpath: join(root, 'fake-npm.js') },
    encoding: 'utf8',
  });
}

describe('npm start (scripts/start.js)', () => {
  it('the inputs are what the build reads', () => {
    const build = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts.build as string;
    expect(build).toContain('tsconfig.build.json');
    expect(INPUTS).toEqual(expect.arrayContaining(['src', 'scripts', 'package.json', 'tsconfig.build.json']));
    expect(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts.start).toBe('node scripts/start.js');
  });

  it('needs a build without output, or when an input under src, scripts or package.json is newer; not otherwise', () => {
    expect(staleness(tree(false))).toBe(`${OUTPUT} is missing`);
    const root = tree(true);
    expect(staleness(root)).toBeNull();
    const later = new Date(Date.now() + 60_000);
    utimesSync(join(root, 'src/cli/main.ts'), later, later);
    expect(staleness(root)).toBe('src changed since the last build');
    utimesSync(join(root, 'package.json'), later, later);
    expect(staleness(root)).toBe('src, package.json changed since the last build');
  });

  it('a built tree starts at once, passing the arguments and the exit code through', () => {
    const run = start(tree(true), '--port', '4600', '--exit', '7');
    expect(run.stdout).toBe('cli start --port 4600 --exit 7\n');
    expect(run.stderr).toBe('');
    expect(run.status).toBe(7);
  });

  it('a fresh clone (no dist) builds first, then starts', () => {
    const root = tree(false);
    const run = start(root, '--memory');
    expect(run.stderr).toBe(`va-sandbox: building (${OUTPUT} is missing)\n`);
    expect(run.stdout).toBe('fake run build\ncli start --memory\n');
    expect(run.status).toBe(0);
    expect(existsSync(join(root, OUTPUT))).toBe(true);
    expect(start(root, '--memory').stdout).toBe('cli start --memory\n');
  });
});
