import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hasBrowser, SHOWN, useBrowser } from './browser.js';
import { api, PAYMENT, useTmp } from './helpers.js';

describe.skipIf(!hasBrowser)("the web inspector's account page: API fault rules (real Chromium, real server)", () => {
  const web = useBrowser();
  const tmp = useTmp();

  it('lists the rules with their hits as they grow, removes one, and clears them with a button', async () => {
    const key = 'sk_web_api_faults';
    const account = api(web.origin(), key);
    const error = (await account.data('POST', '/sandbox/v1/api-faults', {
      method: 'POST',
      path: '/api/v1/va-payments',
      fault: { type: 'error', status: 503 },
      times: 2,
    })) as { id: string };
    await account.data('POST', '/sandbox/v1/api-faults', {
      path: '/api/v1/va-payments/{id}',
      fault: { type: 'lost_answer' },
      probability: 0.25,
      seed: 7,
    });
    expect((await account.post('/api/v1/va-payments', PAYMENT)).status).toBe(503);

    const { page, problems, close } = await web.page();
    await page.goto(`${web.origin()}/ui/account?key=${key}`);
    const table = page.locator('table.api-faults');
    const row = (n: number) => table.locator('tbody tr').nth(n).locator('td');
    await table.waitFor(SHOWN);
    expect(await row(0).allInnerTexts()).toEqual(['POST', '/api/v1/va-payments', 'error 503', 'next 2', '1', 'Remove']);
    expect(await row(1).allInnerTexts()).toEqual([
      '*',
      '/api/v1/va-payments/{id}',
      'lost_answer',
      'p=0.25 seed 7',
      '0',
      'Remove',
    ]);
    // A second hit spends the first rule: the page reads the hits again by itself.
    expect((await account.post('/api/v1/va-payments', PAYMENT)).status).toBe(503);
    await expect.poll(async () => (await row(0).allInnerTexts()).slice(3, 5), SHOWN).toEqual(['spent', '2']);
    // For a person to look at: in a temp folder, or API_FAULTS_SHOT_DIR.
    await page
      .locator('section[aria-labelledby="api-faults-title"]')
      .screenshot({ path: join(process.env.API_FAULTS_SHOT_DIR ?? tmp, 'web-api-faults.png') });

    // On a phone the table scrolls in its own box, never the page.
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate('document.documentElement.scrollWidth - window.innerWidth')).toBeLessThanOrEqual(0);
    await page.setViewportSize({ width: 1280, height: 900 });

    await page.getByRole('button', { name: 'Remove rule POST /api/v1/va-payments' }).click();
    await expect
      .poll(async () => (await account.list('/sandbox/v1/api-faults')).data.map((r: { id: string }) => r.id), SHOWN)
      .not.toContain(error.id);
    await page.getByRole('button', { name: 'Clear all rules' }).click();
    await page.getByText('No API fault rules: every request is answered as usual.').waitFor(SHOWN);
    expect((await account.list('/sandbox/v1/api-faults')).pagination.total).toBe(0);
    expect(await page.getByRole('button', { name: 'Clear all rules' }).isDisabled()).toBe(true);
    expect(problems).toEqual([]);
    await close();
  });
});
