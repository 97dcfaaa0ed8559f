// `npm start`: build only when something the build reads is newer than what it wrote last, then run
// `va-sandbox start` with the arguments given (`npm start -- --port 4600`). A restart with nothing changed starts at
// once instead of after a ~20 s build; a fresh clone (no dist) builds first.
//
// The CLI runs in this very process (not a child): Ctrl-C, SIGTERM and the exit code are the server's own, with
// nothing to forward and no signal delivered twice.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

/** What `npm run build` reads. */
export const INPUTS = ['src', 'scripts', 'package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json'];
/** What `npm run build` writes last (scripts/build-cli.js, after tsc and the web bundle). */
export const OUTPUT = join('dist', 'bundle', 'main.js');

/** The newest modification time (ms) of a file, or of any file under a directory; 0 when absent. */
function newest(path) {
  let stat;
  try {
    stat = statSync(path);
  } catch {
    return 0;
  }
  if (!stat.isDirectory()) return stat.mtimeMs;
  let time = 0;
  for (const entry of readdirSync(path)) time = Math.max(time, newest(join(path, entry)));
  return time;
}

/** Why `root` needs a build (the output missing, or an input newer than it), or null when dist is up to date. */
export function staleness(root) {
  const output = join(root, OUTPUT);
  if (!existsSync(output)) return `${OUTPUT} is missing`;
  const built = statSync(output).mtimeMs;
  const changed = INPUTS.filter((input) => newest(join(root, input)) > built);
  return changed.length === 0 ? null : `${changed.join(', ')} changed since the last build`;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const root = resolve(import.meta.dirname, '..');
  const reason = staleness(root);
  if (reason !== null) {
    process.stderr.write(`va-sandbox: building (${reason})\n`);
    // The npm that runs this script, when there is one; else the npm on PATH.
    const npm = process.env.npm_execpath;
    const build = npm
      ? spawnSync(process.execPath, [npm, 'run', 'build'], { cwd: root, stdio: 'inherit' })
      : spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit', shell: process.platform === 'win32' });
    if (build.status !== 0) process.exit(build.status ?? 1);
  }
  // bin/va-sandbox.js reads its arguments from process.argv: it runs `start` and what followed `npm start --`.
  process.argv.splice(1, Infinity, join(root, 'bin', 'va-sandbox.js'), 'start', ...process.argv.slice(2));
  await import(pathToFileURL(join(root, 'bin', 'va-sandbox.js')).href);
}
