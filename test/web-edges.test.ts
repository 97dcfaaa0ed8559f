import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, eventually, PAYMENT, useReceiver, useServer } from './helpers.js';

/** The system's Chromium, as in web-inspector.test.ts (which says how to install it). */
const CHROMIUM = '/usr/bin/chromium';
const hasBrowser = existsSync(CHROMIUM);
if (!hasBrowser && process.env.CI) throw new Error(`The web inspector tests need Chromium at ${CHROMIUM}`);
const SHOWN = { timeout: 15_000 };

/** Ids as the server makes them, except that while `shared` is set each one starts with it (two records, one short id). */
let shared: string | null = null;

describe.skipIf(!hasBrowser)(
  'web inspector: short ids in the search, and where each delivery went (real Chromium, real server)',
  () => {
    let browser: Browser;
    let origin: string;
    beforeAll(async () => {
      origin = (
        await useServer({
          ids: {
            uuid: () => (shared ? shared + randomUUID().slice(8) : randomUUID()),
            int: (max) => Math.floor(Math.random() * max),
          },
        })
      ).url;
      browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
      });
    });
    afterAll(async () => {
      await browser?.close();
    });

    /** A page with the account's key (a link that carries it), failing the test on any script error. */
    async function pageFor(key: string, path: string): Promise<Page> {
      const page = await (await browser.newContext()).newPage();
      page.setDefaultTimeout(SHOWN.timeout);
      const problems: string[] = [];
      page.on('pageerror', (error) => problems.push(error.message));
      afterChecks.push(() => expect(problems).toEqual([]));
      await page.goto(`${origin}${path}?key=${key}`);
      return page;
    }
    const afterChecks: (() => void)[] = [];
    afterAll(() => afterChecks.forEach((check) => void check()));

    it('the payments search takes the 8 characters the list prints; one that names two payments says so', async () => {
      const client = api(origin, 'sk_web_edges_search');
      const payment = await client.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 10 });
      shared = 'abcdef02';
      const twins = [
        await client.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 11 }),
        await client.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 12 }),
      ];
      shared = null;
      const page = await pageFor(client.key, '/ui/payments');
      await page.getByRole('link', { name: `VA payment ${payment.id}` }).waitFor();
      await page.getByLabel('Search by').selectOption('id');
      await page.getByLabel('Search', { exact: true }).fill(payment.id.slice(0, 8));
      await page.getByRole('button', { name: 'Search', exact: true }).click();
      await page.waitForURL(`${origin}/ui/payments/${payment.id}`);

      await page.goto(`${origin}/ui/payments?field=id`);
      await page.getByLabel('Search', { exact: true }).fill('ABCDEF02');
      await page.getByRole('button', { name: 'Search', exact: true }).click();
      await page
        .getByText(`abcdef02 names more than one VA payment (${twins[1].id}, ${twins[0].id}, …): give more of the id`)
        .waitFor();
      expect(new URL(page.url()).pathname).toBe('/ui/payments');
      // Under 4 characters it is too short to look up, and the field says so.
      await page.getByLabel('Search', { exact: true }).fill('4E8');
      await page.getByRole('button', { name: 'Search', exact: true }).click();
      await page.getByText('4e8 is too short to look up a VA payment: give at least 4 characters of its id').waitFor();
      expect(new URL(page.url()).pathname).toBe('/ui/payments');
    });

    it('the deliveries list and a delivery page show whose it is and where it went: a redelivery to another URL shows that URL', async () => {
      const own = await useReceiver();
      const elsewhere = await useReceiver();
      const client = api(origin, 'sk_web_edges_deliveries');
      const payment = await client.data('POST', '/api/v1/va-payments', {
        ...PAYMENT,
        amount: 10,
        callbackUrl: `${own.url}/own`,
      });
      await own.waitFor(1);
      const [first] = (await client.list('/sandbox/v1/deliveries')).data;
      const redelivery = await client.data('POST', `/sandbox/v1/deliveries/${first.id}/redeliver`, {
        url: `${elsewhere.url}/laptop`,
      });
      await elsewhere.waitFor(1);
      await eventually(
        async () => (await client.data('GET', `/sandbox/v1/deliveries/${redelivery.id}`)).status === 'delivered',
      );

      const page = await pageFor(client.key, '/ui/deliveries');
      const rows = page.locator('table.deliveries tbody tr');
      await expect.poll(() => rows.count(), SHOWN).toBe(2);
      // Newest first: the redelivery went to the other URL; the first to its own. Both name the payment.
      await rows.nth(0).locator('td.d-url').getByText(`→ ${elsewhere.url}/laptop`).waitFor();
      expect(await rows.nth(1).locator('td.d-url').innerText()).toBe(`${own.url}/own`);
      for (const row of [rows.nth(0), rows.nth(1)])
        expect(await row.getByRole('link', { name: `VA payment ${payment.id}` }).innerText()).toBe(
          `VA payment ${payment.id.slice(0, 8)}`,
        );

      await page.goto(`${origin}/ui/deliveries/${redelivery.id}`);
      const facts = page.locator('dl.facts').first();
      await facts.getByText(`${elsewhere.url}/laptop`).waitFor();
      expect(await facts.getByRole('link', { name: `VA payment ${payment.id}` }).innerText()).toBe(
        `VA payment ${payment.id}`,
      );
      expect(await facts.innerText()).toContain(`${own.url}/own`);
    });
  },
);
