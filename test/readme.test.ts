import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers.js';

/**
 * The README stays short and true: every code block in it is run or checked by a test (the tour's commands by
 * cli-tour, the callback bodies by callbacks-reference, the TypeScript files by install), and its links lead somewhere.
 */
const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');

describe('README.md', () => {
  it('is under 300 lines', () => {
    expect(readme.split('\n').length).toBeLessThan(300);
  });

  it('has only code blocks that a test runs or checks', () => {
    const sections = readme.split(/^(?=## )/m);
    const unchecked: string[] = [];
    for (const section of sections) {
      const heading = /^## (.*)/.exec(section)?.[1] ?? '(top)';
      // Opening fences only: each block's closing fence is the next one.
      const fences = [...section.matchAll(/(<!-- snippet: \S+ -->\n)?^```(\w*)\n/gm)].filter((_, i) => i % 2 === 0);
      for (const [, snippet, lang] of fences) {
        const checked =
          (heading === '(top)' && lang === 'sh') || // the commands CI runs (.ci/run: npm ci, npm run lint, npm test)
          (heading.startsWith('In your project') && lang === 'sh') || // test/registry.test.ts
          (heading === 'Quick tour' && lang === 'sh') || // test/cli-tour.test.ts
          (heading === 'Container' && lang === 'sh') || // test/container.test.ts
          (heading === 'Point your own handler at it' && lang === 'json') || // test/callbacks-reference.test.ts
          ((lang === 'ts' || lang === 'sh') && snippet !== undefined); // test/install.test.ts (the files, and what to install)
        if (!checked) unchecked.push(`${heading}: \`\`\`${lang}`);
      }
    }
    expect(unchecked).toEqual([]);
  });

  it('links to files that exist', () => {
    const targets = [...readme.matchAll(/\]\(((?:docs\/|\.\.\/)[^)#]+)/g)].map((match) => match[1]!);
    expect(targets.length).toBeGreaterThan(5);
    expect(targets.filter((target) => !existsSync(join(ROOT, target)))).toEqual([]);
  });
});
