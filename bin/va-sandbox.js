#!/usr/bin/env node
import './quiet-sqlite-warning.js';
import { existsSync } from 'node:fs';

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
