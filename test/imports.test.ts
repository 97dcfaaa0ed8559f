import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers.js';

/**
 * The direction of dependencies (docs/architecture.md): cli -> sandbox -> core, web -> core, and the package's entry
 * points (src/index.ts, src/msw.ts) over all of them. Every import of every file under src is read from its syntax
 * (static, type-only, `export … from`, dynamic `import()` and `typeof import()`), resolved to a layer, and checked.
 */
const SRC = join(ROOT, 'src');

type Layer = 'core' | 'sandbox' | 'cli' | 'web' | 'entry';
const MAY_IMPORT: Record<Layer, readonly Layer[]> = {
  core: ['core'],
  sandbox: ['sandbox', 'core'],
  cli: ['cli', 'sandbox', 'core'],
  web: ['web', 'core'],
  entry: ['entry', 'cli', 'sandbox', 'core', 'web'],
};

/** Bare modules a layer may not import: the core is pure (no HTTP, storage, terminal or page), the web runs in a browser. */
const FORBIDDEN: Partial<Record<Layer, (module: string) => boolean>> = {
  core: (module) =>
    /^(node:)?(http|https|http2|net|tls|sqlite)$/.test(module) ||
    /^(undici|ink|react|react-dom|hono|commander|lowdb)(\/|$)/.test(module) ||
    /^(@hono|ink-)/.test(module),
  web: (module) => module.startsWith('node:'),
};

/** The layer of a path under src, or null when it is in none. */
function layerOf(path: string): Layer | null {
  const [first, ...rest] = relative(SRC, path).split(sep);
  if (rest.length === 0) return /^(index|msw)\.(ts|js)$/.test(first!) ? 'entry' : null;
  return first === 'core' || first === 'sandbox' || first === 'cli' || first === 'web' ? first : null;
}

interface Import {
  specifier: string | null;
  line: number;
}

/** Every module a file's text imports or re-exports; `specifier` null for a dynamic import of a computed name. */
function importsOf(path: string, text: string): Import[] {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, false, path.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const found: Import[] = [];
  const add = (node: ts.Node, specifier: ts.Node | undefined) => {
    const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
    found.push({ specifier: specifier && ts.isStringLiteralLike(specifier) ? specifier.text : null, line });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) || (ts.isExportDeclaration(node) && node.moduleSpecifier)) add(node, node.moduleSpecifier);
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) add(node, node.moduleReference.expression);
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) add(node, node.arguments[0]);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) add(node, node.argument.literal);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** What is wrong with a file's imports, one line each: the file, the line, the import and the rule it breaks. */
function violations(path: string, text: string): string[] {
  const name = relative(ROOT, path).split(sep).join('/');
  const from = layerOf(path);
  if (!from) return [`${name}: not in a layer (src/core, src/sandbox, src/cli, src/web, or src/index.ts / src/msw.ts)`];
  const problems: string[] = [];
  for (const { specifier, line } of importsOf(path, text)) {
    const at = `${name}:${line}`;
    if (specifier === null) {
      problems.push(`${at}: a dynamic import of a computed name, which this check cannot follow`);
    } else if (specifier.startsWith('.')) {
      const to = layerOf(resolve(dirname(path), specifier));
      if (!to) problems.push(`${at}: imports '${specifier}', outside the layers of src`);
      else if (!MAY_IMPORT[from].includes(to)) problems.push(`${at}: imports '${specifier}' (${from} -> ${to}; ${from} may import only ${MAY_IMPORT[from].join(', ')})`);
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

describe('the direction of imports', () => {
  it('every file under src imports only the layers below it (cli -> sandbox -> core, web -> core)', () => {
    expect(sources.length).toBeGreaterThan(100);
    const problems = sources.flatMap((path) => violations(path, readFileSync(path, 'utf8')));
    expect(problems, problems.join('\n')).toEqual([]);
  });

  it('reads static, type-only, re-exported and dynamic imports alike', () => {
    const text = readFileSync(join(SRC, 'cli', 'ui', 'connect.ts'), 'utf8');
    expect(importsOf('connect.ts', text).map((found) => found.specifier)).toEqual(
      expect.arrayContaining(['../../sandbox/defaults.js', '../../sandbox/server.js', '../../sandbox/store/database.js']),
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
      "src/web/live.ts:1: imports '../cli/sse.js' (web -> cli; web may import only web, core)",
    ]);
    expect(check('core/x.ts', "import './y.js';\nconst s = await import('../sandbox/server.js');\nimport type { Hono } from 'hono';\nimport { request } from 'node:http';")).toEqual([
      "src/core/x.ts:2: imports '../sandbox/server.js' (core -> sandbox; core may import only core)",
      "src/core/x.ts:3: imports 'hono', which core may not import",
      "src/core/x.ts:4: imports 'node:http', which core may not import",
    ]);
    expect(check('sandbox/x.ts', "export * from '../web/api.js';\nimport { a } from '../index.js';")).toEqual([
      "src/sandbox/x.ts:1: imports '../web/api.js' (sandbox -> web; sandbox may import only sandbox, core)",
      "src/sandbox/x.ts:2: imports '../index.js' (sandbox -> entry; sandbox may import only sandbox, core)",
    ]);
    expect(check('web/x.tsx', "import { readFile } from 'node:fs';\nimport { c } from '../../package.json';")).toEqual([
      "src/web/x.tsx:1: imports 'node:fs', which web may not import",
      "src/web/x.tsx:2: imports '../../package.json', outside the layers of src",
    ]);
    expect(check('index.ts', "export * from './cli/main.js';\nexport * from './web/api.js';")).toEqual([]);
    expect(check('util.ts', '')).toEqual(['src/util.ts: not in a layer (src/core, src/sandbox, src/cli, src/web, or src/index.ts / src/msw.ts)']);
  });
});

/** What src/core may not call: the clock and randomness are handed to it (a WallClock, an IdSource). */
const UNINJECTED = /\b(Date\.now|Math\.random|randomUUID|performance\.now)\s*\(|new Date\(\s*\)/;

/** Each line of a core file that reads the clock or randomness itself, as `file:line: text`. */
const uninjected = (path: string, text: string): string[] =>
  text.split('\n').flatMap((line, at) => (UNINJECTED.test(line) ? [`${relative(ROOT, path)}:${at + 1}: ${line.trim()}`] : []));

describe('determinism of the core', () => {
  it('no file under src/core reads the clock or randomness itself', () => {
    const core = sources.filter((path) => path.startsWith(join(SRC, 'core')));
    expect(core.length).toBeGreaterThan(20);
    const problems = core.flatMap((path) => uninjected(path, readFileSync(path, 'utf8')));
    expect(problems, problems.join('\n')).toEqual([]);
  });

  it('names such a read, however it is written', () => {
    const found = (text: string) => uninjected(join(SRC, 'core', 'x.ts'), text).length;
    expect([found('const t = Date.now();'), found('Math.random ()'), found('crypto.randomUUID()'), found('performance.now()'), found('new Date()')]).toEqual([1, 1, 1, 1, 1]);
    expect([found('new Date(at)'), found('clock.now()'), found('// no clock here')]).toEqual([0, 0, 0]);
  });
});
