#!/usr/bin/env node
import { existsSync } from 'node:fs';

// Node 22 prints "ExperimentalWarning: SQLite is an experimental feature and might change at any time" the first time
// node:sqlite is loaded (the state database); Node 24 and later print nothing. Drop exactly that warning, before
// anything can load node:sqlite, and leave every other one (another ExperimentalWarning too) to Node as usual.
const emitWarning = process.emitWarning;
process.emitWarning = function (warning, ...rest) {
  // (warning[, type[, code]][, ctor]) or (warning[, options]); an Error's name is its type.
  const type = warning instanceof Error ? warning.name : typeof rest[0] === 'string' ? rest[0] : rest[0]?.type;
  const message = warning instanceof Error ? warning.message : String(warning);
  if (type === 'ExperimentalWarning' && /\bSQLite\b/.test(message)) return;
  return emitWarning.call(this, warning, ...rest);
};

const argv = process.argv.slice(2);
const main = new URL('../dist/bundle/main.js', import.meta.url);
if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-v')) {
  // The version needs nothing but package.json: answer before loading the CLI (commander and every command).
  const { readFileSync } = await import('node:fs');
  process.stdout.write(`${JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version}\n`);
} else if (!existsSync(main)) {
  // A clone before its first build: say what to run rather than print a module-not-found stack.
  process.stderr.write(`va-sandbox: not built yet: run \`npm run build\` in ${new URL('..', import.meta.url).pathname}\n`);
  process.exit(1);
} else {
  const { main: run } = await import(main.href);
  const code = await run(argv);
  // Exit as soon as stdout is flushed, not when idle keep-alive sockets time out.
  process.stdout.write('', () => process.exit(code));
}
