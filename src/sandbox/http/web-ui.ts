import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Hono } from 'hono';
import type { Env } from './routes/kit.js';

/**
 * The web inspector's bundle, as `npm run build` writes it: three levels up from src/sandbox/http and
 * dist/sandbox/http, two from the CLI's bundle (dist/bundle), which holds this module too.
 */
const WEB_ROOT =
  ['../../../dist/web/', '../../dist/web/']
    .map((path) => fileURLToPath(new URL(path, import.meta.url)))
    .find((path) => existsSync(join(path, 'index.html'))) ??
  fileURLToPath(new URL('../../../dist/web/', import.meta.url));

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
};

const HEADERS = {
  // Loopback and rebuilt at will: always ask again (the answer is local and small).
  'Cache-Control': 'no-cache',
  'X-Content-Type-Options': 'nosniff',
  // Everything the page loads or calls is this server: no CDN, no other origin, and no framing by another site.
  'Content-Security-Policy':
    "default-src 'self'; img-src 'self' data: blob:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
};

interface WebFile {
  body: Buffer;
  type: string;
}

/** The built files by their path under /ui/, read once (a fixed set: nothing outside it can be asked for). */
let files: Map<string, WebFile> | null = null;
function builtFiles(): Map<string, WebFile> {
  if (files) return files;
  const found = new Map<string, WebFile>();
  try {
    for (const name of ['index.html', ...readdirSync(join(WEB_ROOT, 'assets')).map((file) => `assets/${file}`)]) {
      const type = CONTENT_TYPES[extname(name)];
      if (type) found.set(name, { body: readFileSync(join(WEB_ROOT, name)), type });
    }
  } catch {
    // Not built (a source checkout before `npm run build`): /ui/ says so; read again on the next request.
    return found;
  }
  files = found;
  return found;
}

/** The page's routes: not the API, so not in the OpenAPI document. */
export const WEB_UI_PATHS = ['/', '/ui', '/ui/*'] as const;

/**
 * The web inspector: `/` sends the browser to `/ui/`; `/ui/assets/*` are the built files; any other `/ui/` path is
 * a page of the app (index.html), so every page is a link to share. No key here: the page asks for it and sends it.
 */
export function webUiRoutes(app: Hono<Env>): void {
  const [root, ui, pages] = WEB_UI_PATHS;
  app.get(root, (c) => c.redirect('/ui/', 302));
  app.get(ui, (c) => c.redirect('/ui/', 302));
  app.get(pages, (c) => {
    const path = c.req.path.slice('/ui/'.length);
    const built = builtFiles();
    const file = path.startsWith('assets/') ? built.get(path) : built.get('index.html');
    if (!file) {
      const message = built.size === 0 ? 'The web inspector is not built: run `npm run build`.' : `No file /ui/${path}`;
      return c.text(message, 404, HEADERS);
    }
    return c.body(new Uint8Array(file.body), 200, { ...HEADERS, 'Content-Type': file.type });
  });
}
