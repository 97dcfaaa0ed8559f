import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scenarioSchema } from '../src/core/scenarios/scenario.js';
import { api, incidentWithOpenDeliveries, type Received, ROOT, useReceiver, useServer, useTmp } from './helpers.js';

/** The system's Chromium (Debian's package `chromium`); `.ci/run` installs it when missing. */
const CHROMIUM = '/usr/bin/chromium';
const INSTALL = 'apt-get install -y chromium';
const hasBrowser = existsSync(CHROMIUM);
if (!hasBrowser) {
  if (process.env.CI) throw new Error(`The web inspector tests need Chromium at ${CHROMIUM}: ${INSTALL}`);
  console.warn(`web inspector tests skipped: no browser at ${CHROMIUM} (install it with: ${INSTALL})`);
}

/** How long to wait for something to show on a busy machine: only how long to keep trying. */
const SHOWN = { timeout: 15_000 };
/** UPDATE_SCREENSHOTS=1 copies the screenshots into docs/ (the README shows them); otherwise they stay in a temp folder. */
const UPDATE_SCREENSHOTS = process.env.UPDATE_SCREENSHOTS === '1';

describe.skipIf(!hasBrowser)('web inspector (real Chromium, real server, real receivers)', () => {
  let browser: Browser;
  let origin: string;
  const tmp = useTmp();
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    origin = (await useServer()).url;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      // Playwright gives every launch a fresh profile folder of its own (it refuses --user-data-dir here).
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
  });
  afterAll(async () => {
    for (const context of contexts) await context.close();
    await browser?.close();
  });

  /** A page in a fresh browser profile (no stored key), failing the test on any script error or console error. */
  async function freshPage(viewport = { width: 1280, height: 800 }): Promise<Page> {
    const context = await browser.newContext({ viewport, acceptDownloads: true });
    contexts.push(context);
    const page = await context.newPage();
    page.setDefaultTimeout(SHOWN.timeout);
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    page.on(
      'console',
      (message) =>
        message.type() === 'error' && !/Failed to load resource/.test(message.text()) && problems.push(message.text()),
    );
    (page as Page & { problems: string[] }).problems = problems;
    return page;
  }
  const problemsOf = (page: Page) => (page as Page & { problems: string[] }).problems;

  /** Opens `path` by a link that carries the key (`?key=`): the page keeps it, and takes it out of the address bar. */
  async function openWithKey(page: Page, path: string, key: string) {
    const url = new URL(origin + path);
    await page.goto(`${url.origin}${url.pathname}?${new URLSearchParams([...url.searchParams, ['key', key]])}`);
    await expect.poll(() => page.evaluate("localStorage.getItem('va-sandbox.apiKey')")).toBe(key);
    expect(new URL(page.url()).searchParams.has('key')).toBe(false);
    expect(new URL(page.url()).pathname).toBe(url.pathname);
    await page.getByRole('button', { name: `API key ${key}: switch` }).waitFor(SHOWN);
  }

  const KEY = 'sk_web_inspector';
  const sandbox = () => api(origin, KEY);
  /** Answers each callback after a pause, with a body naming the event: the page can only show it from the live stream. */
  let receiverA: Awaited<ReturnType<typeof useReceiver>>;
  let receiverB: Awaited<ReturnType<typeof useReceiver>>;
  const eventTypeOf = (request: Received) => String(request.headers['x-service-event-type']);
  let page: Page;
  let paymentId = '';
  const listTotal = async (path: string) => (await sandbox().get(path)).body.pagination.total as number;
  /** Whether this server's redeliver takes `{"url"}` (contract part 4): a made-up delivery is then 404, not a 400 on the body. */
  const redeliverTakesUrl = async () =>
    (
      await sandbox().post('/sandbox/v1/deliveries/00000000-0000-4000-8000-000000000000/redeliver', {
        url: 'http://127.0.0.1:9/',
      })
    ).status === 404;

  it('serves the page at /ui/ (/ redirects there) with every asset from the sandbox itself', async () => {
    const root = await fetch(`${origin}/`, { redirect: 'manual' });
    expect(root.status).toBe(302);
    expect(root.headers.get('location')).toBe('/ui/');
    for (const path of ['/ui/deliveries/anything', '/ui/clients/anything'])
      expect((await fetch(origin + path)).headers.get('content-type')).toMatch(/^text\/html/);
    const deep = await fetch(`${origin}/ui/payments/anything`);
    expect(deep.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await deep.text();
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)]
      .map((match) => match[1]!)
      .filter((url) => !url.startsWith('data:'));
    expect(assets.length).toBeGreaterThanOrEqual(2);
    for (const asset of assets) {
      expect(asset.startsWith('/ui/assets/')).toBe(true);
      const response = await fetch(origin + asset);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(asset.endsWith('.js') ? /^text\/javascript/ : /^text\/css/);
    }
    expect((await fetch(`${origin}/ui/assets/%2e%2e/%2e%2e/package.json`)).status).toBe(404);
  });

  it('uses the default key in a fresh browser (no key form first); the header switches keys in one click', async () => {
    const fresh = await freshPage();
    const byDefault = await api(origin, 'sk_sandbox').data('POST', '/api/v1/va-payments', {
      paymentHubId: 1,
      currency: 'ARS',
      lockMode: 'time',
      externalReference: 'default-key',
    });
    await fresh.goto(`${origin}/ui/payments`);
    await fresh
      .getByRole('link', { name: byDefault.id.slice(0, 8) })
      .or(fresh.getByText('default-key'))
      .first()
      .waitFor(SHOWN);
    expect(await fresh.getByRole('button', { name: 'Use this key' }).count()).toBe(0);
    expect(await fresh.evaluate("localStorage.getItem('va-sandbox.apiKey')")).toBe(null);
    await fresh.getByRole('button', { name: 'API key sk_sandbox: switch' }).click();
    await fresh.getByRole('banner').getByRole('textbox', { name: 'API key' }).fill('sk_web_switched');
    await fresh.getByRole('banner').getByRole('button', { name: 'Use this key' }).click();
    await fresh.getByRole('button', { name: 'API key sk_web_switched: switch' }).waitFor(SHOWN);
    await fresh.getByText('No VA payments yet, or none matches.').waitFor(SHOWN);
    expect(await fresh.evaluate("localStorage.getItem('va-sandbox.apiKey')")).toBe('sk_web_switched');
    expect(new URL(fresh.url()).pathname).toBe('/ui/payments');
    expect(problemsOf(fresh)).toEqual([]);
  });

  it('asks for a key when the sandbox refuses the default one (started with --api-key)', async () => {
    const strict = await useServer({ apiKeys: ['sk_web_only'] }, 'test');
    const fresh = await freshPage();
    await fresh.goto(`${strict.url}/ui/account`);
    await fresh.getByRole('alert').filter({ hasText: 'This sandbox refuses the key sk_sandbox' }).waitFor(SHOWN);
    await fresh.getByRole('textbox', { name: 'API key' }).fill('sk_web_only');
    await fresh.getByRole('button', { name: 'Use this key' }).click();
    await fresh.getByRole('heading', { name: 'Sandbox clock' }).waitFor(SHOWN);
    await fresh.getByRole('status', { name: 'Live updates: Live' }).waitFor(SHOWN);
  });

  it('creates a VA payment through the form: the API schema checks fields in the page, errors next to them', async () => {
    receiverA = await useReceiver(async (request) => {
      await new Promise((resolve) => setTimeout(resolve, 400));
      return { status: 200, body: `receiver A got ${eventTypeOf(request)}` };
    });
    page = await freshPage();
    await openWithKey(page, '/ui/', KEY);
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Create' }).click();
    const form = page.getByRole('form', { name: 'New VA payment' });
    await form.getByLabel('Amount (ARS)').fill('1500.555');
    await form.getByLabel('Callback URL', { exact: true }).fill('not a url');
    await form.getByRole('button', { name: 'Create VA payment' }).click();
    const amountField = form.locator('.field', { has: page.getByLabel('Amount (ARS)') });
    await expect.poll(() => amountField.locator('.field-error').textContent()).toBe('must have at most 2 decimals');
    await expect
      .poll(() =>
        form
          .locator('.field', { has: page.getByLabel('Callback URL', { exact: true }) })
          .locator('.field-error')
          .textContent(),
      )
      .toBe('must be an http(s) URL');
    expect(await listTotal('/api/v1/va-payments')).toBe(0);

    await form.getByLabel('Amount (ARS)').fill('1500');
    await form.getByLabel('Callback URL', { exact: true }).fill(`${receiverA.url}/hooks/va`);
    await form.getByLabel('External reference').fill('order-web-1');
    await form.getByRole('button', { name: 'Create VA payment' }).click();
    await page.waitForURL(/\/ui\/payments\/[0-9a-f-]{36}$/, SHOWN);
    paymentId = page.url().split('/').at(-1)!;
    const created = await sandbox().data('GET', `/api/v1/va-payments/${paymentId}`);
    expect(created).toMatchObject({
      amount: 1500,
      currency: 'ARS',
      lockMode: 'time',
      paymentHubId: 1,
      externalReference: 'order-web-1',
      callbackUrl: `${receiverA.url}/hooks/va`,
    });
    await page.getByRole('heading', { name: `VA payment ${paymentId}` }).waitFor(SHOWN);
    await page.getByText(created.cvu, { exact: true }).first().waitFor(SHOWN);
  });

  it('injects a transfer from the payment page; cash_in_received and succeeded appear live with the receiver response', async () => {
    await page.getByRole('status', { name: 'Live updates: Live' }).waitFor(SHOWN);
    await page.evaluate('window.notReloaded = true');
    const transfer = page.getByRole('form', { name: 'Inject a transfer' });
    expect(await transfer.getByLabel('Total (ARS)').inputValue()).toBe('1500.00');
    expect(await transfer.getByLabel('Taxes (ARS)').inputValue()).toBe('9.00');
    await transfer.getByRole('button', { name: 'Send transfer' }).click();

    for (const eventType of ['cash_in_received', 'succeeded']) {
      const event = page.locator(`li.event[data-event-type="${eventType}"]`);
      await event.getByText(`receiver A got ${eventType}`).waitFor(SHOWN);
      await event.getByText(/Attempt 1 · HTTP 200/).waitFor(SHOWN);
    }
    await receiverA.waitFor(3);
    // No reload: the page followed the stream.
    expect(await page.evaluate('window.notReloaded')).toBe(true);
    await page.locator('.page-head .status-completed').waitFor(SHOWN);
    const paid = await sandbox().data('GET', `/api/v1/va-payments/${paymentId}`);
    expect(paid).toMatchObject({ status: 'completed', totalReceived: 1500, receivedAmount: 1491 });
    await page.getByRole('cell', { name: 'ARS 1,491.00' }).waitFor(SHOWN);
    // The request as sent, pretty: the event's own body with its eventId.
    const succeeded = page.locator('li.event[data-event-type="succeeded"]');
    await succeeded.locator('summary', { hasText: 'Request body' }).click();
    const sent = receiverA.received.find((request) => eventTypeOf(request) === 'succeeded')!;
    await expect
      .poll(() => succeeded.locator('details.json[open] pre').first().textContent())
      .toBe(JSON.stringify(sent.body, null, 2));
  });

  it('redelivers from the page: a second delivery of the same event shows with its attempt', async () => {
    const succeeded = page.locator('li.event[data-event-type="succeeded"]');
    await succeeded.getByRole('button', { name: 'Redeliver' }).click();
    const second = succeeded.getByRole('region', { name: 'Delivery 2' });
    await second.getByText(/Attempt 1 · HTTP 200/).waitFor(SHOWN);
    await second.getByText('receiver A got succeeded').waitFor(SHOWN);
    const sent = (await receiverA.waitFor(2, (request) => eventTypeOf(request) === 'succeeded')).map(
      (request) => request.headers['x-service-event-id'],
    );
    expect(sent[1]).toBe(sent[0]);
  });

  it('redelivers to another local receiver (the URL given in the page)', async (context) => {
    if (!(await redeliverTakesUrl())) {
      console.warn(
        'redeliver to another URL not exercised: this server refuses {"url"} on redeliver (branch callbacks adds it)',
      );
      return context.skip();
    }
    receiverB = await useReceiver(() => ({ status: 202, body: 'receiver B took it' }));
    const succeeded = page.locator('li.event[data-event-type="succeeded"]');
    await succeeded.getByLabel(/Redeliver to/).fill(`${receiverB.url}/elsewhere`);
    await succeeded.getByRole('button', { name: 'Redeliver' }).click();
    const third = succeeded.getByRole('region', { name: 'Delivery 3' });
    await third.getByText('receiver B took it').waitFor(SHOWN);
    await third.getByText(/Attempt 1 · HTTP 202/).waitFor(SHOWN);
    const [resent] = await receiverB.waitFor(1);
    const original = receiverA.received.find((request) => eventTypeOf(request) === 'succeeded')!;
    expect(resent!.url).toBe('/elsewhere');
    expect(resent!.headers['x-service-event-id']).toBe(original.headers['x-service-event-id']);
  });

  it('follows a shared link that carries the key in a browser holding another key: the same story, the key kept', async () => {
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
    await page.getByRole('button', { name: 'Copy link' }).click();
    const link = await page.evaluate<string>('navigator.clipboard.readText()');
    expect(link).toBe(`${origin}/ui/payments/${paymentId}?key=${KEY}`);
    const colleague = await freshPage();
    await openWithKey(colleague, '/ui/payments', 'sk_colleague_own');
    await colleague.goto(link);
    await expect.poll(() => colleague.evaluate("localStorage.getItem('va-sandbox.apiKey')")).toBe(KEY);
    expect(colleague.url()).toBe(`${origin}/ui/payments/${paymentId}`);
    await colleague.getByRole('heading', { name: `VA payment ${paymentId}` }).waitFor(SHOWN);
    await colleague.locator('.page-head .status-completed').waitFor(SHOWN);
    for (const eventType of ['created', 'cash_in_received', 'succeeded']) {
      const delivery = colleague
        .locator(`li.event[data-event-type="${eventType}"]`)
        .getByRole('region', { name: 'Delivery 1' });
      await delivery.getByText(`receiver A got ${eventType}`).waitFor(SHOWN);
    }
    await colleague
      .locator('li.event[data-event-type="succeeded"]')
      .getByRole('region', { name: 'Delivery 2' })
      .getByText(/Attempt 1 · HTTP 200/)
      .waitFor(SHOWN);
    const resent = colleague
      .locator('li.event[data-event-type="succeeded"]')
      .getByRole('region', { name: 'Delivery 2' });
    await resent.getByText('Redelivery of Delivery 1').waitFor(SHOWN);
    await resent.locator('summary', { hasText: 'Request body' }).click();
    await resent.getByText('"eventType": "succeeded"').waitFor(SHOWN);
    await colleague.evaluate('window.scrollTo(0, 0)'); // the sticky header at the top of the picture
    await colleague.screenshot({ path: join(tmp, 'web-payment.png'), fullPage: true });
    expect(problemsOf(colleague)).toEqual([]);
  });

  it('shows the delivery log with filters, and a new delivery live', async () => {
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Deliveries' }).click();
    const rows = page.locator('table.deliveries tbody tr');
    const deliveries = await listTotal('/sandbox/v1/deliveries');
    expect(deliveries).toBeGreaterThanOrEqual(4);
    await expect.poll(() => rows.count(), SHOWN).toBe(deliveries);
    await page.getByLabel('Event type').selectOption('succeeded');
    await expect.poll(() => rows.count(), SHOWN).toBe(await listTotal('/sandbox/v1/deliveries?eventType=succeeded'));
    expect(await rows.count()).toBeLessThan(deliveries);
    expect(page.url()).toContain('eventType=succeeded');
    await page.getByLabel('Event type').selectOption('');
    await expect.poll(() => rows.count(), SHOWN).toBe(deliveries);
    // A payment created elsewhere (through the API) shows up in the log by itself, and then its answer.
    const other = await useReceiver(() => ({ status: 201, body: 'second receiver' }));
    await sandbox().data('POST', '/api/v1/va-payments', {
      paymentHubId: 1,
      currency: 'ARS',
      lockMode: 'time',
      amount: 10,
      callbackUrl: `${other.url}/second`,
    });
    await expect.poll(() => rows.count(), SHOWN).toBe(deliveries + 1);
    await page.getByLabel('Status').selectOption('delivered');
    await expect.poll(() => rows.count(), SHOWN).toBe(deliveries + 1);
    await rows.first().getByRole('cell', { name: 'HTTP 201' }).waitFor(SHOWN);
    await rows
      .first()
      .getByRole('button', { name: /^Show delivery/ })
      .click();
    await page.getByText('second receiver').waitFor(SHOWN);
    await page.evaluate('window.scrollTo(0, 0)');
    await page.screenshot({ path: join(tmp, 'web-deliveries.png'), fullPage: true });
    expect(problemsOf(page)).toEqual([]);
  });

  it('opens one delivery at /ui/deliveries/{id}: every attempt, a link from the log and from the timeline; a redelivery opens the new one', async () => {
    const row = page.locator('table.deliveries tbody tr').first();
    await row.getByRole('link', { name: /^Open delivery/ }).click();
    await page.waitForURL(/\/ui\/deliveries\/[0-9a-f-]{36}$/, SHOWN);
    const id = page.url().split('/').at(-1)!;
    await page.getByRole('heading', { name: `Delivery ${id}` }).waitFor(SHOWN);
    await page.getByText(/Attempt 1 · HTTP 201/).waitFor(SHOWN);
    await page.getByText('second receiver').waitFor(SHOWN);
    await page.getByRole('button', { name: 'Redeliver' }).click();
    await page.waitForURL((url) => url.pathname.startsWith('/ui/deliveries/') && !url.pathname.endsWith(id), SHOWN);
    await page.getByText(/Attempt 1 · HTTP 201/).waitFor(SHOWN);
    await page.getByText('Redelivery of').getByRole('link', { name: id }).waitFor(SHOWN);

    // The payment's timeline names its deliveries; each name is a link to the delivery's page.
    const timeline = await freshPage();
    await openWithKey(timeline, `/ui/payments/${paymentId}`, KEY);
    await timeline.locator('li.event[data-event-type="created"]').getByRole('link', { name: 'Delivery 1' }).click();
    await timeline.waitForURL(/\/ui\/deliveries\/[0-9a-f-]{36}$/, SHOWN);
    await timeline.getByText('receiver A got created').waitFor(SHOWN);
    await timeline.getByRole('link', { name: paymentId }).waitFor(SHOWN);
    // An id this account does not hold says so (and how a link may carry the key).
    await timeline.goto(`${origin}/ui/deliveries/00000000-0000-4000-8000-000000000000`);
    await timeline.getByRole('heading', { name: 'Delivery not found' }).waitFor(SHOWN);
    expect(problemsOf(timeline)).toEqual([]);
  });

  it('downloads the incident file and loads it into another account after a confirmation (picker and drop)', async () => {
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Account' }).click();
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download export' }).click(),
    ]);
    const file = join(tmp, 'incident.json');
    await download.saveAs(file);
    expect(JSON.parse(readFileSync(file, 'utf8')).account.vaPayments[paymentId]).toBeTruthy();
    // The same account's story as a scenario file, which va-sandbox run replays.
    const [recorded] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Save as scenario' }).click(),
    ]);
    const story = join(tmp, 'story.json');
    await recorded.saveAs(story);
    const scenario = scenarioSchema.parse(JSON.parse(readFileSync(story, 'utf8')));
    expect(scenario.steps.filter((step) => step.do === 'createVaPayment').length).toBeGreaterThan(0);

    const other = await freshPage();
    const OTHER = 'sk_web_incident';
    await openWithKey(other, '/ui/account', OTHER);
    // Dismissed: nothing is imported.
    other.once('dialog', (dialog) => void dialog.dismiss());
    await other.getByLabel(/Load an incident file/).setInputFiles(file);
    await other.waitForTimeout(300);
    expect((await api(origin, OTHER).get(`/api/v1/va-payments/${paymentId}`)).status).toBe(404);
    // Dropped and confirmed: the account is the incident's.
    other.once('dialog', (dialog) => {
      expect(dialog.message()).toContain(OTHER);
      expect(dialog.message()).toContain('It holds 2 VA payments, 0 clients');
      void dialog.accept();
    });
    // The page's own code runs in the browser (DOM types stay out of the Node-side type check).
    const dropped = await other.evaluateHandle(
      `(() => { const t = new DataTransfer(); t.items.add(new File([${JSON.stringify(readFileSync(file, 'utf8'))}], 'incident.json', { type: 'application/json' })); return t; })()`,
    );
    await other.locator('.drop-zone').dispatchEvent('drop', { dataTransfer: dropped });
    await other
      .getByRole('status')
      .filter({ hasText: `Imported incident.json: ${await listTotal('/api/v1/va-payments')} VA payments` })
      .waitFor(SHOWN);
    await other
      .getByRole('status')
      .filter({ hasText: "Its callbacks are held, never sent to the file's URLs, until you release them" })
      .waitFor(SHOWN);
    expect(await api(origin, OTHER).data('GET', `/api/v1/va-payments/${paymentId}`)).toMatchObject({
      status: 'completed',
    });
    await other.goto(`${origin}/ui/payments/${paymentId}`);
    await other
      .locator('li.event[data-event-type="succeeded"]')
      .getByText('receiver A got succeeded')
      .first()
      .waitFor(SHOWN);
    expect(problemsOf(other)).toEqual([]);
  });

  it('checks an incident file before the confirmation (a bad one gets every error, no question); after an import the page reads everything again', async () => {
    // The incident: an account with a second hub and a clock ten days ahead.
    const source = api(origin, 'sk_web_source');
    await source.data('PATCH', '/sandbox/v1/hubs/2', { cvuProvisioning: 'delayed' });
    await source.data('POST', '/api/v1/va-payments', {
      paymentHubId: 2,
      currency: 'ARS',
      lockMode: 'time',
      amount: 75,
    });
    await source.data('POST', '/sandbox/v1/clock/advance', { seconds: 864_000 });
    const good = join(tmp, 'two-hubs.json');
    writeFileSync(good, JSON.stringify(await source.data('GET', '/sandbox/v1/export')));
    const bad = join(tmp, 'bad.json');
    writeFileSync(
      bad,
      JSON.stringify({ format: 'va-sandbox-account', version: 9, exportedAt: 'yesterday', account: {} }),
    );

    for (const viewport of [
      { width: 1280, height: 800 },
      { width: 390, height: 844 },
    ]) {
      const account = await freshPage(viewport);
      const key = `sk_web_import_${viewport.width}`;
      await openWithKey(account, '/ui/account', key);
      await account.getByRole('heading', { name: 'Sandbox clock' }).waitFor(SHOWN);
      await account.getByText('0 s', { exact: true }).waitFor(SHOWN);
      const questions: string[] = [];
      account.on('dialog', (dialog) => {
        questions.push(dialog.message());
        void dialog.accept();
      });
      await account.getByLabel(/Load an incident file/).setInputFiles(bad);
      const refused = account.locator('#incident-title ~ .error-note');
      await refused.getByText('VALIDATION_ERROR').waitFor(SHOWN);
      for (const detail of [
        'version: Invalid input: expected 2',
        'exportedAt:',
        'account.hubs:',
        'account.vaPayments:',
      ])
        await refused.getByText(detail).first().waitFor(SHOWN);
      expect(questions).toEqual([]);

      await account.getByLabel(/Load an incident file/).setInputFiles(good);
      await account.getByRole('status').filter({ hasText: 'Imported two-hubs.json: 1 VA payment' }).waitFor(SHOWN);
      expect(questions).toHaveLength(1);
      expect(questions[0]).toContain(`Replace everything in account "${key}" with two-hubs.json?`);
      // Its two events were dropped (no URL): each has its first delivery, `dropped`, as the deliveries list shows.
      expect(questions[0]).toContain(
        'It holds 1 VA payment, 0 clients, 0 transfers, 2 events, 2 deliveries, 0 ledger entries, 0 invoices',
      );
      // Without a reload: the hubs and the clock are the file's.
      await account.getByRole('heading', { name: '2 · Sandbox Hub 2' }).waitFor(SHOWN);
      await account.getByText(/^86\d,\d{3} s$/).waitFor(SHOWN);
      expect(account.url()).toBe(`${origin}/ui/account`);
      await account.evaluate('window.scrollTo(0, 0)');
      await account.screenshot({
        path: join(tmp, viewport.width === 390 ? 'web-account-import-phone.png' : 'web-account-import.png'),
        fullPage: true,
      });
      expect(problemsOf(account)).toEqual([]);
    }
  });

  it('creates a client through the form; its page takes a cash-in live and switches the CVU', async () => {
    const clientPage = await freshPage();
    await openWithKey(clientPage, '/ui/create', KEY);
    const form = clientPage.getByRole('form', { name: 'New client' });
    await form.getByLabel('Name').fill('Ferretería Web');
    await form.getByLabel('Tax ID').fill('20-12345678-3');
    await form.getByLabel('Emails').fill('ana@example.com, not-an-email');
    await form.getByRole('button', { name: 'Create client' }).click();
    await expect
      .poll(() =>
        form
          .locator('.field', { has: clientPage.getByLabel('Emails') })
          .locator('.field-error')
          .textContent(),
      )
      .toBe('must be an email address');
    await form.getByLabel('Emails').fill('ana@example.com');
    await form.getByRole('button', { name: 'Create client' }).click();
    await clientPage.waitForURL(/\/ui\/clients\/[0-9a-f-]{36}$/, SHOWN);
    const clientId = clientPage.url().split('/').at(-1)!;
    await clientPage.getByRole('heading', { name: 'Ferretería Web' }).waitFor(SHOWN);

    // A transfer from elsewhere (the API) shows in the ledger and the balance by itself.
    const client = await sandbox().data('GET', `/api/v1/clients/${clientId}`);
    await sandbox().data('POST', '/sandbox/v1/transfers', { to: client.alias, total: 250, taxes: 1.5 });
    await clientPage.getByRole('cell', { name: 'ARS 248.50' }).waitFor(SHOWN);
    await clientPage.getByRole('region', { name: 'Balance' }).getByText('ARS 248.50').first().waitFor(SHOWN);
    // And one from the page, prefilled.
    const transfer = clientPage.getByRole('form', { name: 'Inject a transfer' });
    await transfer.getByLabel('Total (ARS)').fill('100');
    expect(await transfer.getByLabel('Taxes (ARS)').inputValue()).toBe('0.60');
    await transfer.getByRole('button', { name: 'Send transfer' }).click();
    await clientPage.getByRole('cell', { name: 'ARS 99.40' }).waitFor(SHOWN);

    await clientPage.getByRole('button', { name: 'Disable CVU' }).click();
    await clientPage.getByRole('button', { name: 'Activate CVU' }).waitFor(SHOWN);
    expect((await sandbox().data('GET', `/api/v1/clients/${clientId}`)).cvuStatus).toBe('disabled');
    const cashIns = (await sandbox().data('GET', `/sandbox/v1/events?clientId=${clientId}`)) as {
      eventType: string;
      clientId: string;
    }[];
    expect(cashIns.map((event) => [event.eventType, event.clientId])).toEqual([
      ['client.cashin', clientId],
      ['client.cashin', clientId],
    ]);
    expect(problemsOf(clientPage)).toEqual([]);
  });

  it("shows every error of a form at once: the page's check and the API's 400 details name the same fields", async () => {
    const body = { paymentHubId: 'one', currency: 'ARS', lockMode: 'amount', successUrl: 'http://127.0.0.1:9/ok' };
    const answer = await sandbox().post('/api/v1/va-payments', body);
    expect(answer.status).toBe(400);
    expect(answer.body.error.details).toEqual([
      'paymentHubId: Invalid input: expected number, received string',
      'amount: is required with lockMode "amount"',
      'failureUrl: is required: successUrl and failureUrl go together',
    ]);
    const create = await freshPage();
    await openWithKey(create, '/ui/create', KEY);
    const form = create.getByRole('form', { name: 'New VA payment' });
    await form.getByLabel('Payment hub ID').fill('one');
    await form.getByLabel('Lock mode').selectOption('amount');
    await form.getByLabel('Success URL').fill('http://127.0.0.1:9/ok');
    await form.getByRole('button', { name: 'Create VA payment' }).click();
    const errorOf = (label: string) =>
      form.locator('.field', { has: create.getByLabel(label, { exact: true }) }).locator('.field-error');
    await expect
      .poll(() => errorOf('Payment hub ID').textContent())
      .toBe('Invalid input: expected number, received string');
    expect(await errorOf('Amount (ARS)').textContent()).toBe('is required with lockMode "amount"');
    expect(await errorOf('Failure URL').textContent()).toBe('is required: successUrl and failureUrl go together');
    // A transfer's form too: an empty total and taxes over it are both named.
    const transfer = await sandbox().post('/sandbox/v1/transfers', { to: '', total: 'x', taxes: 5 });
    expect(transfer.body.error.details).toEqual([
      'to: Too small: expected string to have >=1 characters',
      'total: Invalid input: expected number, received string',
    ]);
    expect(problemsOf(create)).toEqual([]);
  });

  it('on a client page: creates an invoice, allocates cash to it, records a reversal and cancels an invoice', async () => {
    const client = await sandbox().data('POST', '/api/v1/clients', {
      paymentHubId: 1,
      name: 'Ledger Web SA',
      taxId: '30-55555555-1',
    });
    const transfer = await sandbox().data('POST', '/sandbox/v1/transfers', { to: client.cvu, total: 300 });
    const ledgerPage = await freshPage();
    await openWithKey(ledgerPage, `/ui/clients/${client.id}`, KEY);
    const invoices = ledgerPage.getByRole('region', { name: 'Invoices' });

    const invoiceForm = ledgerPage.getByRole('form', { name: 'New invoice' });
    await invoiceForm.getByLabel('Total (ARS)').fill('12.345');
    await invoiceForm.getByRole('button', { name: 'Create invoice' }).click();
    await expect
      .poll(() =>
        invoiceForm
          .locator('.field', { has: ledgerPage.getByLabel('Total (ARS)') })
          .locator('.field-error')
          .textContent(),
      )
      .toBe('must have at most 2 decimals');
    await invoiceForm.getByLabel('Total (ARS)').fill('200');
    await invoiceForm.getByLabel('Observations').fill('March');
    await invoiceForm.getByRole('button', { name: 'Create invoice' }).click();
    await invoices.getByRole('cell', { name: 'B 0001-00000001' }).waitFor(SHOWN);

    const allocation = ledgerPage.getByRole('form', { name: 'Allocate to an invoice' });
    await allocation.getByLabel('Amount (ARS)').fill('150');
    await allocation.getByRole('button', { name: 'Allocate' }).click();
    await invoices.getByText('partial').waitFor(SHOWN);
    await ledgerPage.getByRole('cell', { name: 'invoice_allocation' }).waitFor(SHOWN);

    const movement = ledgerPage.getByRole('form', { name: 'Ledger movement' });
    await movement.getByLabel('Type').selectOption('reversal');
    await movement.getByLabel('Operation ID').fill(transfer.operationId);
    await movement.getByRole('button', { name: 'Record movement' }).click();
    await ledgerPage.getByRole('cell', { name: 'ARS -300.00' }).waitFor(SHOWN);
    await ledgerPage.getByRole('region', { name: 'Balance' }).getByText('ARS -200.00').waitFor(SHOWN);

    await invoices.getByRole('button', { name: 'Cancel invoice 0001-00000001' }).click();
    await invoices.getByText('cancelled').waitFor(SHOWN);
    expect(
      (await sandbox().list(`/api/v1/clients/${client.id}/invoices`)).data.map(
        (i: { paymentStatus: string }) => i.paymentStatus,
      ),
    ).toEqual(['cancelled']);
    expect(problemsOf(ledgerPage)).toEqual([]);
  });

  it("is reachable with the keyboard: Tab goes through the payment page's actions", async () => {
    const keyboard = await freshPage();
    await openWithKey(keyboard, '/ui/payments', KEY);
    const second = await sandbox().data('POST', '/api/v1/va-payments', {
      paymentHubId: 1,
      currency: 'ARS',
      lockMode: 'time',
      amount: 50,
    });
    // The timeline reads only this payment's events (GET /sandbox/v1/events?vaPaymentId=), not the account's.
    const timeline = (await sandbox().get(`/sandbox/v1/events?vaPaymentId=${second.id}`)).body;
    expect(
      timeline.data.map((event: { eventType: string; vaPaymentId: string }) => [event.eventType, event.vaPaymentId]),
    ).toEqual([['created', second.id]]);
    expect(await listTotal('/sandbox/v1/events')).toBeGreaterThan(timeline.pagination.total);
    await keyboard.goto(`${origin}/ui/payments/${second.id}`);
    await keyboard.getByRole('button', { name: 'Send transfer' }).waitFor(SHOWN);
    const reached = new Set<string>();
    for (let i = 0; i < 40; i++) {
      await keyboard.keyboard.press('Tab');
      reached.add(
        await keyboard.evaluate<string>(
          'document.activeElement.textContent.trim() || document.activeElement.getAttribute("aria-label") || ""',
        ),
      );
    }
    for (const name of [
      'Skip to content',
      'VA payments',
      'Deliveries',
      'Copy link',
      'Send transfer',
      'Cancel VA payment',
    ])
      expect(reached).toContain(name);
    // Enter on the focused button acts: the transfer is sent.
    await keyboard.getByRole('button', { name: 'Send transfer' }).focus();
    await keyboard.keyboard.press('Enter');
    await keyboard.locator('.page-head .status-completed').waitFor(SHOWN);
  });

  it('shows the delivery log as cards at 390x844: status and actions on screen, the URL whole', async () => {
    const phone = await freshPage({ width: 390, height: 844 });
    await openWithKey(phone, '/ui/deliveries', KEY);
    const rows = phone.locator('table.deliveries tbody tr');
    await expect.poll(() => rows.count(), SHOWN).toBeGreaterThanOrEqual(4);
    for (const row of await rows.all()) {
      for (const part of [
        row.locator('.status'),
        row.getByRole('button', { name: /^Show delivery/ }),
        row.getByRole('link', { name: /^Open delivery/ }),
      ]) {
        const box = (await part.boundingBox())!;
        expect(box.x + box.width).toBeLessThanOrEqual(390);
      }
      expect((await row.locator('td.url').boundingBox())!.width).toBeGreaterThan(300);
    }
    await rows
      .filter({ has: phone.locator('.status-delivered') })
      .first()
      .getByRole('button', { name: /^Show delivery/ })
      .click();
    await phone
      .getByText(/Attempt 1 · HTTP/)
      .first()
      .waitFor(SHOWN);
    expect(await phone.evaluate('document.documentElement.scrollWidth - window.innerWidth')).toBeLessThanOrEqual(0);
    await phone.screenshot({ path: join(tmp, 'web-deliveries-phone.png'), fullPage: true });
    expect(problemsOf(phone)).toEqual([]);
  });

  it('is usable at 390x844: no sideways scrolling, and every control has a label', async () => {
    const phone = await freshPage({ width: 390, height: 844 });
    await openWithKey(phone, `/ui/payments/${paymentId}`, KEY);
    for (const path of [
      `/ui/payments/${paymentId}`,
      '/ui/payments',
      '/ui/deliveries',
      '/ui/create',
      '/ui/account',
      '/ui/clients',
    ]) {
      await phone.goto(origin + path);
      await phone.locator('main h1').first().waitFor(SHOWN);
      await expect.poll(() => phone.locator('[aria-busy="true"]').count(), SHOWN).toBe(0);
      const { overflow, unlabelled } = await phone.evaluate<{ overflow: number; unlabelled: string[] }>(`({
        overflow: document.documentElement.scrollWidth - window.innerWidth,
        unlabelled: [...document.querySelectorAll('input, select, textarea, button')]
          .filter((control) => !(control.labels?.length > 0 || control.getAttribute('aria-label') || (control.tagName === 'BUTTON' && control.textContent.trim())))
          .map((control) => control.outerHTML.slice(0, 80)),
      })`);
      expect({ path, overflow: Math.max(overflow, 0), unlabelled }).toEqual({ path, overflow: 0, unlabelled: [] });
    }
  });

  it('shows the account: its hubs (changed from the page) and its clock, advanced from the page', async () => {
    const account = await freshPage();
    await openWithKey(account, '/ui/account', KEY);
    await account.getByRole('heading', { name: '1 · Sandbox Hub 1' }).waitFor(SHOWN);
    // The server's retention setting (this one was started without --keep).
    await account.getByText(/^off: everything is kept \(start --keep D/).waitFor(SHOWN);
    await account.getByLabel('CVU provisioning').selectOption('delayed');
    await expect
      .poll(async () => (await sandbox().data('GET', '/sandbox/v1/hubs/1')).cvuProvisioning, SHOWN)
      .toBe('delayed');
    await account.getByLabel('CVU provisioning').selectOption('inline');
    await expect
      .poll(async () => (await sandbox().data('GET', '/sandbox/v1/hubs/1')).cvuProvisioning, SHOWN)
      .toBe('inline');

    const before = (await sandbox().data('GET', '/sandbox/v1/clock')).offsetSeconds as number;
    await account.getByLabel('Advance by (seconds)').fill('3600');
    await account.getByRole('button', { name: 'Advance clock' }).click();
    await account.getByText(`${Math.round(before + 3600).toLocaleString('en-US')} s`).waitFor(SHOWN);
    expect((await sandbox().data('GET', '/sandbox/v1/clock')).offsetSeconds).toBe(before + 3600);
    expect(problemsOf(account)).toEqual([]);
  });

  it('sets the clock from the account page', async (context) => {
    if ((await sandbox().post('/sandbox/v1/clock/set', {})).status === 404) {
      console.warn(
        'set clock not exercised: this server has no POST /sandbox/v1/clock/set yet (branch callbacks adds it)',
      );
      return context.skip();
    }
    const account = await freshPage();
    await openWithKey(account, '/ui/account', KEY);
    const now = Date.parse((await sandbox().data('GET', '/sandbox/v1/clock')).now);
    const at = new Date(now + 2 * 86_400_000).toISOString();
    await account.getByLabel('Set to (ISO time, forward only)').fill(at);
    await account.getByRole('button', { name: 'Set clock' }).click();
    // The clock runs on with real time after the set, so the page shows `at` plus the moments since (a
    // loaded machine can cross a second boundary before the page re-reads it): a window, not one text.
    const shown = account.locator('#clock-title ~ * time');
    await expect
      .poll(async () => Date.parse((await shown.getAttribute('datetime', SHOWN)) ?? '') - Date.parse(at), SHOWN)
      .toSatisfy((ahead: number) => ahead >= 0 && ahead < 60_000);
    expect(Date.parse((await sandbox().data('GET', '/sandbox/v1/clock')).now)).toBeGreaterThanOrEqual(Date.parse(at));
  });

  it('shows the deliveries an imported file brought as held, and releases them from the page: one to a URL, then every one', async () => {
    const incident = await useReceiver();
    const laptop = await useReceiver();
    const { doc } = await incidentWithOpenDeliveries(origin, 'sk_web_held_source', `${incident.url}/hooks`, 2);
    const HELD = 'sk_web_held';
    await api(origin, HELD).data('POST', '/sandbox/v1/import', doc);
    const held = await freshPage();
    await openWithKey(held, '/ui/deliveries?status=held', HELD);
    const rows = held.locator('table.deliveries tbody tr');
    await expect.poll(() => rows.count(), SHOWN).toBe(2);
    await held
      .getByText(
        /^This account was imported: the deliveries its file brought and the callbacks it raised since are held/,
      )
      .waitFor(SHOWN);
    await rows.first().getByText('held', { exact: true }).waitFor(SHOWN);
    await rows
      .first()
      .getByRole('button', { name: /^Show delivery/ })
      .click();
    const card = held.getByRole('region', { name: /^Delivery / });
    await card.getByText(/^Held: came with an imported file/).waitFor(SHOWN);
    await card.getByLabel(/^Release to/).fill(`${laptop.url}/one`);
    await card.getByRole('button', { name: 'Release', exact: true }).click();
    await laptop.waitFor(1, (request) => request.url === '/one');
    await expect.poll(() => rows.count(), SHOWN).toBe(1);
    await api(origin, HELD).data('PUT', '/sandbox/v1/forwarding', { url: `${laptop.url}/all` });
    await held.getByRole('button', { name: 'Release every held delivery' }).click();
    await laptop.waitFor(1, (request) => request.url === '/all');
    await expect.poll(() => rows.count(), SHOWN).toBe(0);
    expect(incident.received).toEqual([]);
    expect(problemsOf(held)).toEqual([]);
  });

  it('takes the screenshots the README shows', () => {
    for (const name of [
      'web-payment.png',
      'web-deliveries.png',
      'web-deliveries-phone.png',
      'web-account-import.png',
      'web-account-import-phone.png',
    ]) {
      expect(readFileSync(join(tmp, name)).subarray(1, 4).toString()).toBe('PNG');
      if (UPDATE_SCREENSHOTS) copyFileSync(join(tmp, name), join(ROOT, 'docs', name));
    }
  });
});
