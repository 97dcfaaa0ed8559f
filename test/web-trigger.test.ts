import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hasBrowser, SHOWN, useBrowser } from './browser.js';
import { api, useReceiver, useTmp } from './helpers.js';

describe.skipIf(!hasBrowser)(
  "the web inspector's account page: the trigger menu (real Chromium, real server, real receiver)",
  () => {
    const web = useBrowser();
    const tmp = useTmp();

    it('triggers an event that reaches the receiver, shows the steps and links to the payment; shows a refusal', async () => {
      const key = 'sk_web_trigger';
      const receiver = await useReceiver();
      const { page, problems, close } = await web.page();
      await page.goto(`${web.origin()}/ui/account?key=${key}`);
      const menu = page.locator('form[aria-labelledby="trigger-title"]');
      await menu.waitFor(SHOWN);
      await menu.getByLabel('Event').selectOption('overpaid');
      await menu.getByLabel('Callback URL').fill(`${receiver.url}/web`);
      await menu.getByLabel('Amount (ARS)').fill('200');
      await menu.getByRole('button', { name: 'Trigger overpaid' }).click();
      const result = menu.getByRole('status');
      await result.getByText('Triggered overpaid').waitFor(SHOWN);
      const eventId = (await result.locator('span.mono').innerText()).trim();
      const [got] = await receiver.waitFor(1, (r) => r.headers['x-service-event-id'] === eventId);
      expect(got!.body).toMatchObject({
        eventType: 'overpaid',
        status: 'overpaid',
        payload: { total: 300, receivedAmount: 300, remainingAmount: 0 },
      });
      expect(await result.locator('li').allInnerTexts()).toEqual([
        expect.stringMatching(/^POST \/api\/v1\/va-payments: VA payment .* is waiting/),
        expect.stringMatching(
          /^POST \/sandbox\/v1\/transfers: 300\.00 to CVU \d{22}, credited: VA payment .* is overpaid$/,
        ),
      ]);
      // For a person to look at: in a temp folder, or TRIGGER_SHOT_DIR.
      await menu.screenshot({ path: join(process.env.TRIGGER_SHOT_DIR ?? tmp, 'web-trigger.png') });
      // On a phone the steps wrap: the page never scrolls sideways.
      await page.setViewportSize({ width: 390, height: 844 });
      expect(await page.evaluate('document.documentElement.scrollWidth - window.innerWidth')).toBeLessThanOrEqual(0);
      await menu.screenshot({ path: join(process.env.TRIGGER_SHOT_DIR ?? tmp, 'web-trigger-phone.png') });
      await page.setViewportSize({ width: 1280, height: 900 });

      // What the API refuses is shown as it answered, and nothing is made.
      await menu.getByLabel('Event').selectOption('underpaid');
      await menu.getByLabel('Amount (ARS)').fill('0.01');
      await menu.getByRole('button', { name: 'Trigger underpaid' }).click();
      await menu.getByText(/amount: must be at least 0\.02 to trigger underpaid/).waitFor(SHOWN);
      expect((await api(web.origin(), key).list('/api/v1/va-payments')).pagination.total).toBe(1);

      // A form error before anything is sent: a callback URL that is not one.
      await menu.getByLabel('Callback URL').fill('not a url');
      await menu.getByRole('button', { name: 'Trigger underpaid' }).click();
      await menu.getByText('must be an http(s) URL').waitFor(SHOWN);

      await menu.getByLabel('Event').selectOption('overpaid');
      await menu.getByLabel('Callback URL').fill(`${receiver.url}/web`);
      await menu.getByLabel('Amount (ARS)').fill('200');
      await menu.getByRole('button', { name: 'Trigger overpaid' }).click();
      await result.getByRole('link', { name: 'open the VA payment' }).click();
      await page.waitForURL(/\/ui\/payments\/[0-9a-f-]{36}$/);
      expect(problems).toEqual([]);
      await close();
    });
  },
);
