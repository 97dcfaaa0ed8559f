#!/usr/bin/env node
const argv = process.argv.slice(2);
if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-v')) {
  // The version needs nothing but package.json: answer before loading the CLI (commander and every command).
  const { readFileSync } = await import('node:fs');
  process.stdout.write(`${JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version}\n`);
} else {
  const { main } = await import('../dist/cli/main.js');
  const code = await main(argv);
  // Exit as soon as stdout is flushed, not when idle keep-alive sockets time out.
  process.stdout.write('', () => process.exit(code));
}
