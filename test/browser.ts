import { existsSync } from 'node:fs';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { useServer } from './helpers.js';

/** The system's Chromium, as test/web-inspector.test.ts uses it (its tests are skipped without one, outside CI). */
const CHROMIUM = '/usr/bin/chromium';
export const hasBrowser = existsSync(CHROMIUM);
if (!hasBrowser && process.env.CI)
  throw new Error(`The web inspector tests need Chromium at ${CHROMIUM}: apt-get install -y chromium`);
/** How long to wait for something to show on a busy machine: only how long to keep trying. */
export const SHOWN = { timeout: 15_000 };

/**
 * A real server and the browser, for a test file's web pages: launched before its tests, closed after. `page()`
 * opens a page in a fresh profile, with the script errors it meets in `problems`.
 */
export function useBrowser() {
  let browser: Browser | undefined;
  let origin = '';
  beforeAll(async () => {
    origin = (await useServer()).url;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
    });
  });
  afterAll(async () => {
    await browser?.close();
  });
  return {
    origin: () => origin,
    async page(
      viewport = { width: 1280, height: 900 },
    ): Promise<{ page: Page; problems: string[]; close: () => Promise<void> }> {
      const context = await browser!.newContext({ viewport });
      const page = await context.newPage();
      page.setDefaultTimeout(SHOWN.timeout);
      const problems: string[] = [];
      page.on('pageerror', (e) => problems.push(e.message));
      return { page, problems, close: () => context.close() };
    },
  };
}
