import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hasBrowser, SHOWN, useBrowser } from './browser.js';
import { api, PAYMENT, useTmp } from './helpers.js';

describe.skipIf(!hasBrowser)("the web inspector's Requests page (real Chromium, real server)", () => {
  const web = useBrowser();
  const tmp = useTmp();

  it('lists the requests newest first, filters them, shows one whole, and picks up new ones by itself', async () => {
    const key = 'sk_web_requests';
    const account = api(web.origin(), key);
    await account.post(
      '/api/v1/va-payments',
      { ...PAYMENT, amount: 42, externalReference: 'web-1' },
      { 'Idempotency-Key': 'web-1' },
    );
    expect((await account.post('/api/v1/va-payments', { ...PAYMENT, amount: 'x' })).status).toBe(400);

    const { page, problems, close } = await web.page();
    await page.goto(`${web.origin()}/ui/requests?key=${key}`);
    const table = page.locator('table.requests');
    const cells = (n: number) => table.locator('tbody > tr:not(.expanded)').nth(n).locator('td');
    await table.waitFor(SHOWN);
    expect((await cells(0).allInnerTexts()).slice(1, 4)).toEqual(['POST', '/api/v1/va-payments', '400']);
    expect((await cells(1).allInnerTexts()).slice(1, 4)).toEqual(['POST', '/api/v1/va-payments', '201']);

    // A request sent while the page is open shows up without a reload.
    await account.get('/api/v1/clients');
    await expect
      .poll(async () => (await cells(0).allInnerTexts()).slice(1, 4), SHOWN)
      .toEqual(['GET', '/api/v1/clients', '200']);

    await page.getByLabel('Status').fill('201');
    await expect.poll(async () => table.locator('tbody > tr').count(), SHOWN).toBe(1);
    expect(page.url()).toContain('status=201');
    await page.getByRole('button', { name: /^Show request / }).click();
    const expanded = table.locator('tr.expanded');
    await expanded.waitFor(SHOWN);
    expect(await expanded.innerText()).toContain('"externalReference": "web-1"');
    expect(await expanded.innerText()).toContain('web-1');
    expect((await expanded.innerText()).toLowerCase()).not.toContain('authorization');
    // For a person to look at: in a temp folder, or REQUESTS_SHOT_DIR.
    await page.screenshot({ path: join(process.env.REQUESTS_SHOT_DIR ?? tmp, 'web-requests.png'), fullPage: true });

    // On a phone the table scrolls in its own box, never the page.
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate('document.documentElement.scrollWidth - window.innerWidth')).toBeLessThanOrEqual(0);
    expect(problems).toEqual([]);
    await close();
  });
});
