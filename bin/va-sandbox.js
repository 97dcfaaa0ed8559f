#!/usr/bin/env node
// The floor (package.json engines), checked before anything is loaded: the CLI's modules use what older Node lacks
// (fs.glob, node:sqlite), and an ES module's static imports fail at link time with a stack trace, not a sentence.
// So this file imports nothing statically, and loads the rest only once the version is known to be enough.
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 13)) {
  process.stderr.write(`va-sandbox needs Node.js 22.13 or later (this is ${process.version})\n`);
  process.exit(1);
}
const { existsSync, readFileSync } = await import('node:fs');

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
  process.stdout.write(`${JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version}\n`);
} else if (!existsSync(main)) {
  // A clone before its first build: say what to run rather than print a module-not-found stack.
  process.stderr.write(
    `va-sandbox: not built yet: run \`npm run build\` in ${new URL('..', import.meta.url).pathname}\n`,
  );
  process.exit(1);
} else {
  const { main: run } = await import(main.href);
  const code = await run(argv);
  // Exit as soon as stdout is flushed, not when idle keep-alive sockets time out.
  process.stdout.write('', () => process.exit(code));
}
