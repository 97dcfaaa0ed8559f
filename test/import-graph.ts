import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';
import { ROOT } from './helpers.js';

/**
 * What test/imports.test.ts reads of the files under src, from their syntax: the imports of each, the graph they make
 * and its cycles, and the transport globals a file uses.
 */

/** A path as the problems name it: from the package's root, with forward slashes. */
export const shown = (path: string) => relative(ROOT, path).split(sep).join('/');

/** A file's syntax tree, with parents (the global check looks at where a name stands). */
const syntaxOf = (path: string, text: string) =>
  ts.createSourceFile(
    path,
    text,
    ts.ScriptTarget.Latest,
    true,
    path.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS,
  );

interface Import {
  specifier: string | null;
  line: number;
}

/** Every module a file's text imports or re-exports; `specifier` null for a dynamic import of a computed name. */
export function importsOf(path: string, text: string): Import[] {
  const source = syntaxOf(path, text);
  const found: Import[] = [];
  const add = (node: ts.Node, specifier: ts.Node | undefined) => {
    const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
    found.push({ specifier: specifier && ts.isStringLiteralLike(specifier) ? specifier.text : null, line });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) || (ts.isExportDeclaration(node) && node.moduleSpecifier))
      add(node, node.moduleSpecifier);
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference))
      add(node, node.moduleReference.expression);
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword)
      add(node, node.arguments[0]);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) add(node, node.argument.literal);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The source file a relative import names (`./views.js` is `views.ts` or `views.tsx`), or null when it is none of src's. */
function fileOf(from: string, specifier: string, files: ReadonlySet<string>): string | null {
  const path = resolve(dirname(from), specifier).replace(/\.js$/, '');
  return [`${path}.ts`, `${path}.tsx`, join(path, 'index.ts')].find((file) => files.has(file)) ?? null;
}

/** Each file's relative imports, as the files they name: type-only ones too (a cycle of types is still a cycle). */
export function importGraph(texts: ReadonlyMap<string, string>): Map<string, string[]> {
  const files = new Set(texts.keys());
  return new Map(
    [...texts].map(([path, text]) => [
      path,
      importsOf(path, text).flatMap(({ specifier }) => {
        const file = specifier?.startsWith('.') ? fileOf(path, specifier, files) : null;
        return file ? [file] : [];
      }),
    ]),
  );
}

/** A group of files that import each other (directly or through others), and the shortest way round from its first. */
interface Knot {
  files: string[];
  way: string[];
}

/** Each knot of a graph of imports: Tarjan's strongly connected components of more than one file, or a file importing itself. */
export function knotsIn(graph: ReadonlyMap<string, readonly string[]>): Knot[] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const groups: string[][] = [];
  const connect = (node: string): void => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) connect(next);
      if (stack.includes(next)) low.set(node, Math.min(low.get(node)!, low.get(next)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const group = stack.splice(stack.indexOf(node));
    if (group.length > 1 || graph.get(node)?.includes(node)) groups.push(group.sort());
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) connect(node);
  return groups.map((files) => ({ files, way: wayRound(graph, files[0]!, new Set(files)) }));
}

/** The shortest path from `start` back to it inside a group of files that import each other. */
function wayRound(graph: ReadonlyMap<string, readonly string[]>, start: string, group: ReadonlySet<string>): string[] {
  const cameFrom = new Map<string, string>();
  const queue = [start];
  for (const node of queue) {
    for (const next of graph.get(node) ?? []) {
      if (!group.has(next) || cameFrom.has(next)) continue;
      cameFrom.set(next, node);
      if (next === start) {
        const path = [start];
        for (let at = node; at !== start; at = cameFrom.get(at)!) path.unshift(at);
        return [start, ...path];
      }
      queue.push(next);
    }
  }
  return [start];
}

/** A knot in one line: its shortest way round, and all its files when there are more (each other cycle goes through them). */
export const described = ({ files, way }: Knot): string =>
  way.map(shown).join(' -> ') +
  (files.length > way.length - 1 ? ` (${files.length} files import each other: ${files.map(shown).join(', ')})` : '');

/** The globals of transport and time src/core may not use: fetch and the timers (the runtime owns both). */
const TRANSPORT_GLOBALS = new Set(['fetch', 'setTimeout', 'setInterval', 'setImmediate']);
const GLOBAL_OBJECTS = new Set(['globalThis', 'global', 'window', 'self']);

/** Whether an identifier only names a member or a property (`options.fetch`, `{ fetch: … }`), not the global. */
function namesMember(node: ts.Identifier): boolean {
  const parent = node.parent;
  if (ts.isQualifiedName(parent)) return parent.right === node;
  const named =
    ts.isPropertyAccessExpression(parent) ||
    ts.isPropertyAssignment(parent) ||
    ts.isPropertySignature(parent) ||
    ts.isPropertyDeclaration(parent) ||
    ts.isMethodDeclaration(parent) ||
    ts.isMethodSignature(parent);
  return named && parent.name === node;
}

/** Each use of a transport global in a file, as `file:line: uses 'fetch'`: by its name, or as a member of globalThis. */
export function transportGlobals(path: string, text: string): string[] {
  const source = syntaxOf(path, text);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    let name: string | undefined;
    if (ts.isIdentifier(node) && !namesMember(node)) name = node.text;
    else if (
      ts.isPropertyAccessExpression(node) &&
      ts.isIdentifier(node.expression) &&
      GLOBAL_OBJECTS.has(node.expression.text)
    )
      name = node.name.text;
    else if (
      ts.isElementAccessExpression(node) &&
      ts.isIdentifier(node.expression) &&
      GLOBAL_OBJECTS.has(node.expression.text) &&
      ts.isStringLiteralLike(node.argumentExpression)
    ) {
      name = node.argumentExpression.text;
    }
    if (name !== undefined && TRANSPORT_GLOBALS.has(name)) {
      const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
      found.push(`${shown(path)}:${line}: uses '${name}', which core may not use`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}
