import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers.js';
import { importsOf, shown } from './import-graph.js';

/**
 * The core laid out by the parts of the contract (docs/architecture.md): every core file stands in the folder of its
 * part, each folder with an index.ts of what it offers (the only way in from another folder), and nothing but the
 * core's own index.ts at its top level; each folder imports only the folders on its floor or below.
 */
const CORE = join(ROOT, 'src', 'core');

/**
 * The core's order, top floor first (docs/architecture.md's drawing): a folder imports only folders on a floor at or
 * below its own. A new folder fails the test until it is given a floor here.
 */
const FLOORS: Record<string, number> = {
  scenarios: 9,
  'account-export': 9,
  account: 8,
  transfers: 7,
  callbacks: 6,
  'va-payments': 5,
  clients: 5,
  hubs: 4,
  clock: 4,
  'api-faults': 4,
  store: 3,
  records: 2,
  conventions: 1,
};

/** The folder of src/core a path stands in, or null for the core's own index.ts and anything outside the core. */
function folderOf(path: string): string | null {
  const [first, ...rest] = relative(CORE, path).split(sep);
  return rest.length > 0 && first !== '..' ? first! : null;
}

/** What breaks the floors in a core file's imports, one line each: a reach-in past a folder's index.ts, or an upward import. */
function floorProblems(path: string, text: string): string[] {
  const from = folderOf(path);
  if (from === null) return [];
  if (FLOORS[from] === undefined)
    return [`${shown(path)}: src/core/${from}/ has no floor (FLOORS in test/core-layout.test.ts)`];
  const problems: string[] = [];
  for (const { specifier, line } of importsOf(path, text)) {
    if (!specifier?.startsWith('.')) continue;
    const target = resolve(dirname(path), specifier);
    const to = folderOf(target);
    if (to === null || to === from) continue;
    const at = `${shown(path)}:${line}: imports '${specifier}'`;
    if (relative(join(CORE, to), target) !== 'index.js')
      problems.push(`${at}, past src/core/${to}/index.ts, its only way in`);
    const [own, other] = [FLOORS[from], FLOORS[to] ?? Number.POSITIVE_INFINITY];
    if (other > own) problems.push(`${at}, up the core's order (${from}, floor ${own} -> ${to}, floor ${other})`);
  }
  return problems;
}

const coreFiles = (readdirSync(CORE, { recursive: true, encoding: 'utf8' }) as string[])
  .filter((file) => /\.tsx?$/.test(file))
  .map((file) => join(CORE, file))
  .sort();

describe('the layout of the core', () => {
  it('src/core holds only index.ts and the folders of the parts, each with its index.ts', () => {
    const entries = readdirSync(CORE, { withFileTypes: true });
    const loose = entries.filter((entry) => entry.isFile() && entry.name !== 'index.ts').map((entry) => entry.name);
    expect(loose, `files at the top level of src/core: ${loose.join(', ')}`).toEqual([]);
    const folders = entries.filter((entry) => entry.isDirectory()).map((entry) => entry.name);
    expect(folders.length).toBeGreaterThan(5);
    const withoutIndex = folders.filter((folder) => !existsSync(join(CORE, folder, 'index.ts')));
    expect(withoutIndex, `folders of src/core without an index.ts: ${withoutIndex.join(', ')}`).toEqual([]);
  });

  it("each folder takes another's only through its index.ts, and only from its floor or below, type-only imports included", () => {
    expect(coreFiles.length).toBeGreaterThan(40);
    const problems = coreFiles.flatMap((path) => floorProblems(path, readFileSync(path, 'utf8')));
    expect(problems, problems.join('\n')).toEqual([]);
  });

  it('names a reach-in, an upward import and a folder without a floor', () => {
    const check = (file: string, text: string) => floorProblems(join(CORE, ...file.split('/')), text);
    expect(check('clients/x.ts', "import type { Balance } from '../records/views.js';")).toEqual([
      "src/core/clients/x.ts:1: imports '../records/views.js', past src/core/records/index.ts, its only way in",
    ]);
    expect(
      check('records/x.ts', "import { ms } from '../clock/index.js';\nexport type { A } from '../account/account.js';"),
    ).toEqual([
      "src/core/records/x.ts:1: imports '../clock/index.js', up the core's order (records, floor 2 -> clock, floor 4)",
      "src/core/records/x.ts:2: imports '../account/account.js', past src/core/account/index.ts, its only way in",
      "src/core/records/x.ts:2: imports '../account/account.js', up the core's order (records, floor 2 -> account, floor 8)",
    ]);
    expect(
      check(
        'account/x.ts',
        "import { a } from './y.js';\nimport { b } from '../records/index.js';\nimport { c } from '../../client/http.js';",
      ),
    ).toEqual([]);
    expect(check('index.ts', "export * from './records/views.js';")).toEqual([]);
    expect(check('misc/x.ts', '')).toEqual([
      'src/core/misc/x.ts: src/core/misc/ has no floor (FLOORS in test/core-layout.test.ts)',
    ]);
  });
});
