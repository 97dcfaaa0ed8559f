import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers.js';
import { described, importGraph, importsOf, knotsIn, shown, transportGlobals } from './import-graph.js';

/**
 * The direction of dependencies (docs/architecture.md): web -> client -> core; cli -> sandbox, client -> core;
 * sandbox -> core (and the client, for the scenario runner and `startSandbox`, which drive a server through it); the
 * package's entry points (src/index.ts, src/msw.ts, src/testcontainers.ts) over all of them. Every import of every
 * file under src is read from its syntax (static, type-only, `export … from`, dynamic `import()` and
 * `typeof import()`), resolved to a layer, and checked; and no file imports, however indirectly, itself.
 */
const SRC = join(ROOT, 'src');

type Layer = 'core' | 'client' | 'sandbox' | 'cli' | 'web' | 'entry';
const LAYERS: readonly Layer[] = ['core', 'client', 'sandbox', 'cli', 'web'];
const MAY_IMPORT: Record<Layer, readonly Layer[]> = {
  core: ['core'],
  client: ['client', 'core'],
  sandbox: ['sandbox', 'client', 'core'],
  cli: ['cli', 'sandbox', 'client', 'core'],
  web: ['web', 'client', 'core'],
  entry: ['entry', 'cli', 'sandbox', 'client', 'core', 'web'],
};

/**
 * Bare modules a layer may not import: the core is pure (no HTTP, timers, storage, terminal or page), the client runs
 * in a browser as well as in Node, the web runs in a browser.
 */
const FORBIDDEN: Partial<Record<Layer, (module: string) => boolean>> = {
  core: (module) =>
    /^(node:)?(http|https|http2|net|tls|dgram|sqlite|timers|timers\/promises)$/.test(module) ||
    /^(undici|ink|react|react-dom|hono|commander|lowdb)(\/|$)/.test(module) ||
    /^(@hono|ink-)/.test(module),
  client: (module) => module.startsWith('node:'),
  web: (module) => module.startsWith('node:'),
};

/** The layer of a path under src, or null when it is in none. */
function layerOf(path: string): Layer | null {
  const [first, ...rest] = relative(SRC, path).split(sep);
  if (rest.length === 0) return /^(index|msw|testcontainers)\.(ts|js)$/.test(first!) ? 'entry' : null;
  return LAYERS.find((layer) => layer === first) ?? null;
}

/** What is wrong with a file's imports, one line each: the file, the line, the import and the rule it breaks. */
function violations(path: string, text: string): string[] {
  const from = layerOf(path);
  if (!from)
    return [
      `${shown(path)}: not in a layer (src/core, src/client, src/sandbox, src/cli, src/web, or src/index.ts / src/msw.ts / src/testcontainers.ts)`,
    ];
  const problems: string[] = [];
  for (const { specifier, line } of importsOf(path, text)) {
    const at = `${shown(path)}:${line}`;
    if (specifier === null) {
      problems.push(`${at}: a dynamic import of a computed name, which this check cannot follow`);
    } else if (specifier.startsWith('.')) {
      const to = layerOf(resolve(dirname(path), specifier));
      if (!to) problems.push(`${at}: imports '${specifier}', outside the layers of src`);
      else if (!MAY_IMPORT[from].includes(to))
        problems.push(
          `${at}: imports '${specifier}' (${from} -> ${to}; ${from} may import only ${MAY_IMPORT[from].join(', ')})`,
        );
    } else if (FORBIDDEN[from]?.(specifier)) {
      problems.push(`${at}: imports '${specifier}', which ${from} may not import`);
    }
  }
  return problems;
}

const sources = (readdirSync(SRC, { recursive: true, encoding: 'utf8' }) as string[])
  .filter((file) => /\.tsx?$/.test(file) && !file.endsWith('.d.ts'))
  .map((file) => join(SRC, file))
  .sort();

/** Every source file's text, by its path. */
const texts = new Map(sources.map((path) => [path, readFileSync(path, 'utf8')]));
describe('the direction of imports', () => {
  it('every file under src imports only the layers below it (web -> client -> core; cli -> sandbox, client -> core)', () => {
    expect(sources.length).toBeGreaterThan(100);
    const problems = sources.flatMap((path) => violations(path, texts.get(path)!));
    expect(problems, problems.join('\n')).toEqual([]);
  });

  it('no file under src imports itself, however indirectly: no import cycle, type-only imports included', () => {
    const knots = knotsIn(importGraph(texts)).map(described);
    expect(knots, knots.join('\n')).toEqual([]);
  });

  it('finds each cycle, through type-only imports and index files too, and names the way round', () => {
    const files = new Map([
      [join(SRC, 'core', 'a.ts'), "import type { B } from './b.js';"],
      [join(SRC, 'core', 'b.ts'), "export * from './c/index.js';"],
      [join(SRC, 'core', 'c', 'index.ts'), "import { a } from '../a.js';\nimport { d } from '../d.js';"],
      [join(SRC, 'core', 'd.ts'), "import { a } from './a.js';"],
      [join(SRC, 'core', 'e.ts'), "import { a } from './a.js';\nimport './e.js';"],
      [join(SRC, 'core', 'f.ts'), "import { a } from './a.js';"],
    ]);
    expect(knotsIn(importGraph(files)).map(described)).toEqual([
      'src/core/a.ts -> src/core/b.ts -> src/core/c/index.ts -> src/core/a.ts (4 files import each other: src/core/a.ts, src/core/b.ts, src/core/c/index.ts, src/core/d.ts)',
      'src/core/e.ts -> src/core/e.ts',
    ]);
  });

  it('reads static, type-only, re-exported and dynamic imports alike', () => {
    const text = readFileSync(join(SRC, 'cli', 'ui', 'connect.ts'), 'utf8');
    expect(importsOf('connect.ts', text).map((found) => found.specifier)).toEqual(
      expect.arrayContaining([
        '../../sandbox/runtime/defaults.js',
        '../../sandbox/http/server.js',
        '../../sandbox/store/database.js',
      ]),
    );
    const sample = [
      "import type { A } from './a.js';",
      "export * from './b.js';",
      "export { c } from './c.js';",
      "const d = await import('./d.js');",
      "let e: typeof import('./e.js').e;",
      "import f = require('./f.js');",
      'const g = await import(name);',
    ].join('\n');
    expect(importsOf('sample.ts', sample)).toEqual([
      { specifier: './a.js', line: 1 },
      { specifier: './b.js', line: 2 },
      { specifier: './c.js', line: 3 },
      { specifier: './d.js', line: 4 },
      { specifier: './e.js', line: 5 },
      { specifier: './f.js', line: 6 },
      { specifier: null, line: 7 },
    ]);
  });

  it('names the file, the line and the import that goes the wrong way', () => {
    const check = (file: string, text: string) => violations(join(SRC, ...file.split('/')), text);
    expect(check('web/live.ts', "import { serverSentEvents } from '../cli/sse.js';")).toEqual([
      "src/web/live.ts:1: imports '../cli/sse.js' (web -> cli; web may import only web, client, core)",
    ]);
    expect(
      check(
        'client/x.ts',
        "import { startServer } from '../sandbox/server.js';\nimport { request } from 'node:http';\nimport type { Page } from '../core/pagination.js';",
      ),
    ).toEqual([
      "src/client/x.ts:1: imports '../sandbox/server.js' (client -> sandbox; client may import only client, core)",
      "src/client/x.ts:2: imports 'node:http', which client may not import",
    ]);
    expect(
      check(
        'core/x.ts',
        "import './y.js';\nconst s = await import('../sandbox/server.js');\nimport type { Hono } from 'hono';\nimport { request } from 'node:http';\nimport { setTimeout } from 'node:timers/promises';\nimport type { SandboxClient } from '../client/api-client.js';",
      ),
    ).toEqual([
      "src/core/x.ts:2: imports '../sandbox/server.js' (core -> sandbox; core may import only core)",
      "src/core/x.ts:3: imports 'hono', which core may not import",
      "src/core/x.ts:4: imports 'node:http', which core may not import",
      "src/core/x.ts:5: imports 'node:timers/promises', which core may not import",
      "src/core/x.ts:6: imports '../client/api-client.js' (core -> client; core may import only core)",
    ]);
    expect(check('sandbox/x.ts', "export * from '../web/api.js';\nimport { a } from '../index.js';")).toEqual([
      "src/sandbox/x.ts:1: imports '../web/api.js' (sandbox -> web; sandbox may import only sandbox, client, core)",
      "src/sandbox/x.ts:2: imports '../index.js' (sandbox -> entry; sandbox may import only sandbox, client, core)",
    ]);
    expect(check('web/x.tsx', "import { readFile } from 'node:fs';\nimport { c } from '../../package.json';")).toEqual([
      "src/web/x.tsx:1: imports 'node:fs', which web may not import",
      "src/web/x.tsx:2: imports '../../package.json', outside the layers of src",
    ]);
    expect(check('index.ts', "export * from './cli/main.js';\nexport * from './web/api.js';")).toEqual([]);
    expect(check('util.ts', '')).toEqual([
      'src/util.ts: not in a layer (src/core, src/client, src/sandbox, src/cli, src/web, or src/index.ts / src/msw.ts / src/testcontainers.ts)',
    ]);
  });
});

/** What src/core may not call: the clock and randomness are handed to it (a WallClock, an IdSource). */
const UNINJECTED = /\b(Date\.now|Math\.random|randomUUID|performance\.now)\s*\(|new Date\(\s*\)/;

/** Each line of a core file that reads the clock or randomness itself, as `file:line: text`. */
const uninjected = (path: string, text: string): string[] =>
  text
    .split('\n')
    .flatMap((line, at) => (UNINJECTED.test(line) ? [`${relative(ROOT, path)}:${at + 1}: ${line.trim()}`] : []));

describe('determinism of the core', () => {
  it('no file under src/core reads the clock or randomness itself', () => {
    const core = sources.filter((path) => path.startsWith(join(SRC, 'core')));
    expect(core.length).toBeGreaterThan(20);
    const problems = core.flatMap((path) => uninjected(path, texts.get(path)!));
    expect(problems, problems.join('\n')).toEqual([]);
  });

  it("no file under src/core calls fetch or sets a timer: transport and timers are the runtime's (src/sandbox, src/client)", () => {
    const core = sources.filter((path) => path.startsWith(join(SRC, 'core')));
    const problems = core.flatMap((path) => transportGlobals(path, texts.get(path)!));
    expect(problems, problems.join('\n')).toEqual([]);
  });

  it("names such a use by the global's name or as a member of globalThis, not a member or property of the same name", () => {
    const found = (text: string) => transportGlobals(join(SRC, 'core', 'x.ts'), text);
    expect(
      found(
        "await fetch(url);\nsetTimeout(done, 5);\nconst t = setInterval;\nglobalThis.setImmediate(go);\nglobalThis['fetch'](url);\nconst f = { fetch };",
      ),
    ).toEqual([
      "src/core/x.ts:1: uses 'fetch', which core may not use",
      "src/core/x.ts:2: uses 'setTimeout', which core may not use",
      "src/core/x.ts:3: uses 'setInterval', which core may not use",
      "src/core/x.ts:4: uses 'setImmediate', which core may not use",
      "src/core/x.ts:5: uses 'fetch', which core may not use",
      "src/core/x.ts:6: uses 'fetch', which core may not use",
    ]);
    expect(
      found(
        'options.fetch(url);\nconst o = { fetch: 1, setTimeout() {} };\ninterface I { fetch: F }\ntype T = A.setTimeout;\n// fetch in a comment',
      ),
    ).toEqual([]);
  });

  it('names such a read, however it is written', () => {
    const found = (text: string) => uninjected(join(SRC, 'core', 'x.ts'), text).length;
    expect([
      found('const t = Date.now();'),
      found('Math.random ()'),
      found('crypto.randomUUID()'),
      found('performance.now()'),
      found('new Date()'),
    ]).toEqual([1, 1, 1, 1, 1]);
    expect([found('new Date(at)'), found('clock.now()'), found('// no clock here')]).toEqual([0, 0, 0]);
  });
});
