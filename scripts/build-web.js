// The web inspector's bundle: src/web (React, react-dom) -> dist/web, served by the sandbox under /ui/.
// One script file, one JS and one CSS file, no CDN: the page works offline. Run by `npm run build`.

import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';

const root = resolve(import.meta.dirname, '..');
const out = join(root, 'dist', 'web');
rmSync(out, { recursive: true, force: true });
mkdirSync(join(out, 'assets'), { recursive: true });
await build({
  entryPoints: [join(root, 'src', 'web', 'main.tsx')],
  outdir: join(out, 'assets'),
  bundle: true,
  format: 'esm',
  target: 'es2022',
  jsx: 'automatic',
  minify: true,
  legalComments: 'linked',
  define: { 'process.env.NODE_ENV': '"production"' },
  logLevel: 'warning',
});
copyFileSync(join(root, 'src', 'web', 'index.html'), join(out, 'index.html'));
