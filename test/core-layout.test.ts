import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers.js';

/**
 * The core laid out by the parts of the contract (docs/architecture.md): every core file stands in the folder of its
 * part, each folder with an index.ts of what it offers, and nothing but the core's own index.ts at its top level.
 * Skipped until the layout is applied: the script that applies it turns this test on.
 */
const CORE = join(ROOT, 'src', 'core');

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
});
