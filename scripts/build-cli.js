// The CLI as one module and a few chunks: src -> dist (tsc) -> dist/bundle, which bin/va-sandbox.js runs. To start a
// server Node then reads and links 12 files instead of 82 (commander, hono, zod, lowdb and ours): about 100 ms off
// `va-sandbox start`, less off other commands. Run by `npm run build`, after tsc.

import { cpSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';

const root = resolve(import.meta.dirname, '..');
const out = join(root, 'dist', 'bundle');
rmSync(out, { recursive: true, force: true });
await build({
  entryPoints: [join(root, 'dist', 'cli', 'main.js')],
  // Two levels under the package like dist/cli, so `new URL('../../…', import.meta.url)` finds the same files.
  outdir: out,
  bundle: true,
  // What is imported only when needed (the dashboard's ink and React, the callback client) stays in its own chunk or
  // package, so a command that does not need it does not load it; ink and React stay packages, one React for both.
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node22',
  external: ['ink', 'react', 'react/*', 'undici', 'msw'],
  // commander is CommonJS: its require() of Node's modules needs a require in an ES module.
  banner: {
    js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
  },
  logLevel: 'warning',
});

// The store's migrations (.sql) beside the modules that read them (`new URL('./migrations/', import.meta.url)`): the
// store's own module under dist, and the bundle's chunks.
for (const to of [join(root, 'dist', 'sandbox', 'store', 'migrations'), join(out, 'migrations')]) {
  rmSync(to, { recursive: true, force: true });
  cpSync(join(root, 'src', 'sandbox', 'store', 'migrations'), to, { recursive: true });
}
