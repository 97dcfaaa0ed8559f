import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/** The system's Chromium, as test/web-inspector.test.ts uses it: its tests are skipped without one, outside CI. */
export const CHROMIUM = '/usr/bin/chromium';
export const hasBrowser = existsSync(CHROMIUM);
if (!hasBrowser && process.env.CI) throw new Error(`The web inspector tests need Chromium at ${CHROMIUM}: apt-get install -y chromium`);

/** How long a page may take to show what a test waits for. */
export const SHOWN = { timeout: 15_000 };

/** Chromium, headless, as the web tests start it. */
export const launchChromium = (): Promise<Browser> =>
  chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'] });
