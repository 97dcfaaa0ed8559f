import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { configDefaults, defineConfig } from 'vitest/config';

/**
 * The files that take longest (docs/benchmarks.md, "The suite's time"), started first: with a few files at a time the
 * longest file bounds the run, and a fresh clone has no timings of its own (vitest then starts the largest files).
 */
const LONGEST = [
  'test/install.test.ts',
  'test/progress.test.ts',
  'test/cli-clients.test.ts',
  'test/web-inspector.test.ts',
  'test/accounts-memory.test.ts',
  'test/faults-damage.test.ts',
];

/** Vitest's order (the last run's timings, else file size), the files in LONGEST ahead of it. */
class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (spec: TestSpecification) => {
      const at = LONGEST.findIndex((name) => spec.moduleId.endsWith(name));
      return at < 0 ? LONGEST.length : at;
    };
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}

/**
 * Files that hold the server to wall-clock bounds (answers within so many ms, a backlog within its pace): they run
 * after the others, one at a time, as the whole suite once did, so the files beside them cannot slow them.
 */
const TIMED = [
  'test/callbacks-pace.test.ts',
  'test/hardening-budget.test.ts',
  'test/hardening-fairness.test.ts',
  'test/hardening-import.test.ts',
  'test/hardening-pipelining.test.ts',
  'test/hardening-slow-clients.test.ts',
  'test/time-order.test.ts',
  'test/ui-dashboard.test.tsx',
];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Files wait part of their time (servers and CLI processes starting, callbacks, timers): three at a time keeps
    // both cores of a 2-core machine busy (vitest's default there is one worker, cores - 1).
    maxWorkers: 3,
    sequence: { sequencer: LongestFirst },
    reporters: ['default', './test/summary-reporter.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'va-sandbox',
          include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
          exclude: [...configDefaults.exclude, ...TIMED],
          env: { VA_SANDBOX_MSW_MAJOR: '3' },
        },
      },
      {
        extends: true,
        test: { name: 'timed', include: TIMED, maxWorkers: 1, sequence: { groupOrder: 1 } },
      },
      {
        // The msw entry supports msw 2 and 3 (the peer range): its test runs a second time with `msw` resolved to the
        // msw 2 installed as the dev dependency `msw2`, in the test and in the built dist/msw.js it imports alike.
        extends: true,
        test: { name: 'msw 2', include: ['test/msw.test.ts'], env: { VA_SANDBOX_MSW_MAJOR: '2' } },
        resolve: { alias: [{ find: /^msw(?=\/|$)/, replacement: 'msw2' }] },
      },
    ],
  },
});
