import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    reporters: ['default', './test/summary-reporter.ts'],
    projects: [
      {
        extends: true,
        test: { name: 'va-sandbox', include: ['test/**/*.test.ts', 'test/**/*.test.tsx'], env: { VA_SANDBOX_MSW_MAJOR: '3' } },
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
