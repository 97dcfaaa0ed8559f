import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers.js';

/**
 * Files and functions a person can hold (docs/architecture.md): no source file under src over 300 lines, no function
 * over 80. A function is a declaration, an expression, an arrow or a method (constructors and accessors too), counted
 * from its first line to its last, the functions inside it included: a long factory is split into named steps.
 */
const SRC = join(ROOT, 'src');
const MAX_FILE_LINES = 300;
const MAX_FUNCTION_LINES = 80;

/** Lines of a file's text, a last line ending in a newline not counted twice. */
const linesOf = (text: string): number => text.split('\n').length - (text.endsWith('\n') ? 1 : 0);

/** The name a function goes by: its own, the variable or property it is given to, or `(anonymous)`. */
function nameOf(node: ts.FunctionLikeDeclaration, source: ts.SourceFile): string {
  if (node.name) return node.name.getText(source);
  const parent = node.parent;
  if (
    (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) &&
    parent.name
  ) {
    return parent.name.getText(source);
  }
  return '(anonymous)';
}

/** Each function over the limit in a file's text, as `file:line name (N lines)`. */
function longFunctions(name: string, text: string, limit = MAX_FUNCTION_LINES): string[] {
  const source = ts.createSourceFile(
    name,
    text,
    ts.ScriptTarget.Latest,
    true,
    name.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS,
  );
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line + 1;
      const lines = last - first + 1;
      if (lines > limit)
        found.push(`${name}:${first} ${nameOf(node as ts.FunctionLikeDeclaration, source)} (${lines} lines)`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const sources = (readdirSync(SRC, { recursive: true, encoding: 'utf8' }) as string[])
  .filter((file) => /\.tsx?$/.test(file) && !file.endsWith('.d.ts'))
  .map((file) => ({
    name: relative(ROOT, join(SRC, file)).split(sep).join('/'),
    text: readFileSync(join(SRC, file), 'utf8'),
  }))
  .sort((a, b) => a.name.localeCompare(b.name));

describe('sizes of the source', () => {
  it(`no file under src is over ${MAX_FILE_LINES} lines`, () => {
    expect(sources.length).toBeGreaterThan(100);
    const long = sources
      .filter(({ text }) => linesOf(text) > MAX_FILE_LINES)
      .map(({ name, text }) => `${name} (${linesOf(text)} lines)`);
    expect(long, long.join('\n')).toEqual([]);
  });

  it(`no function under src is over ${MAX_FUNCTION_LINES} lines`, () => {
    const long = sources.flatMap(({ name, text }) => longFunctions(name, text));
    expect(long, long.join('\n')).toEqual([]);
  });

  it('counts declarations, arrows, expressions and methods, each with the functions inside it', () => {
    const body = (n: number) => Array.from({ length: n }, (_, i) => `  const v${i} = ${i};`).join('\n');
    const sample = [
      `function declared() {\n${body(3)}\n}`,
      `const arrow = () => {\n${body(3)}\n};`,
      `const expression = function () {\n${body(3)}\n};`,
      `class Holder {\n  method() {\n${body(3)}\n  }\n}`,
      `const object = { property: () => {\n${body(3)}\n} };`,
      `const short = () => 1;`,
    ].join('\n');
    expect(longFunctions('sample.ts', sample, 4)).toEqual([
      'sample.ts:1 declared (5 lines)',
      'sample.ts:6 arrow (5 lines)',
      'sample.ts:11 expression (5 lines)',
      'sample.ts:17 method (5 lines)',
      'sample.ts:23 property (5 lines)',
    ]);
    expect(longFunctions('sample.ts', `function outer() {\n  const inner = () => {\n${body(2)}\n  };\n}`, 4)).toEqual([
      'sample.ts:1 outer (6 lines)',
    ]);
  });
});
