import { render } from 'ink-testing-library';
import { afterEach, describe, expect, it } from 'vitest';
import { type CallOptions, type Client, createClient } from '../src/cli/client.js';
import { Dashboard } from '../src/cli/ui/dashboard.js';
import { api, eventually, incidentWithOpenDeliveries, PAYMENT, useReceiver, useServer } from './helpers.js';
import { KEY, keyboard, screenWith } from './ui-helpers.js';

const server = await useServer();
const receiver = await useReceiver();
let n = 0;

const mounted: ReturnType<typeof render>[] = [];
afterEach(() => {
  // Unmounting closes the dashboard's stream.
  for (const app of mounted.splice(0)) app.unmount();
});

/**
 * The dashboard on a fake 100x24 terminal, on a fresh account of a real server. `calls` lists every API request
 * it made (method, path and query): the live stream is read with `send`, and is not among them.
 */
function useDashboard(delayMs: (call: string) => number = () => 0) {
  const key = `sk_ui_dashboard_${++n}`;
  const inner = createClient(server.url, key);
  const calls: string[] = [];
  const client: Client = {
    ...inner,
    async call<T>(method: string, path: string, options?: CallOptions) {
      const query = new URLSearchParams(
        Object.entries(options?.query ?? {}).map(([name, value]): [string, string] => [name, String(value)]),
      ).toString();
      const call = `${method} ${path}${query ? `?${query}` : ''}`;
      calls.push(call);
      const delay = delayMs(call);
      if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
      return inner.call<T>(method, path, options);
    },
  };
  const app = render(<Dashboard connection={{ client, url: server.url, apiKey: key, embedded: null }} />);
  mounted.push(app);
  return {
    app,
    calls,
    keys: keyboard(app),
    screen: (pattern: RegExp | string, timeoutMs?: number) => screenWith(app, pattern, timeoutMs),
    sandbox: api(server.url, key),
  };
}

const paymentLists = (calls: string[]) => calls.filter((call) => call.startsWith('GET /api/v1/va-payments?'));

describe('va-sandbox ui: the dashboard', () => {
  it('shows what happens from the event stream, and asks nothing while nothing happens', async () => {
    const { calls, screen, sandbox } = useDashboard();
    await screen(/live.*\n VA payments {2}0 of 0/);
    // Made through the API, not the dashboard: only the stream can tell it.
    const payment = await sandbox.data('POST', '/api/v1/va-payments', {
      ...PAYMENT,
      amount: 250,
      lockMode: 'amount',
      callbackUrl: `${receiver.url}/quiet`,
    });
    const frame = await screen(/VA payments {2}1-1 of 1/);
    expect(frame).toMatch(/> waiting +ARS 250\.00 +ARS 0\.00 +ARS 250\.00 +30m00s/);
    await screen(/delivered created +attempt 1\/3 HTTP 200/);
    expect(frame).toContain(payment.alias);
    // A refresh the stream asked for may still be on its way; then nothing more happens.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const asked = calls.length;
    // Longer than the refresh's wait and the countdown's tick: a polling dashboard would have asked again.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(calls.slice(asked)).toEqual([]);
  });

  it('creates a VA payment, injects a transfer that pays it, and shows the succeeded callback, all from the keyboard', async () => {
    const { keys, screen } = useDashboard();
    await screen('no VA payments yet');
    await keys('n');
    await screen('New VA payment');
    await keys(...'1500', KEY.tab, KEY.right, KEY.tab, KEY.tab, ...`${receiver.url}/keys`, KEY.enter);
    await screen(/VA payment created: transfer ARS 1500\.00 to SANDBOX\.HUB\.COBROS/);
    await keys('t');
    await screen(/> to +SANDBOX\.HUB\.COBROS/);
    await screen(/total +1500/);
    await keys(KEY.enter);
    const frame = await screen(/delivered succeeded +attempt 1\/3 HTTP 200 +\d+ ms/);
    expect(frame).toMatch(/> completed +ARS 1500\.00 +ARS 1500\.00 +ARS 0\.00/);
    expect(frame).toMatch(/transfer of ARS 1500\.00 to SANDBOX\.HUB\.COBROS: credited/);
    const got = await receiver.waitFor(3, (r) => r.url === '/keys');
    expect(got.map((r) => r.body.eventType)).toEqual(['created', 'cash_in_received', 'succeeded']);
  });

  it('t right after a create acts on the new payment even while the list is still being read again', async () => {
    let slowLists = false;
    const { keys, screen } = useDashboard((call) =>
      slowLists && call.startsWith('GET /api/v1/va-payments?') ? 3000 : 0,
    );
    await screen('no VA payments yet');
    await keys('n');
    await screen('New VA payment');
    slowLists = true;
    await keys(...'700', KEY.tab, KEY.right, KEY.enter);
    await screen(/VA payment created: transfer ARS 700\.00 to SANDBOX\.HUB\.COBROS/);
    await keys('t');
    const frame = await screen(/> to +SANDBOX\.HUB\.COBROS/);
    expect(frame).toMatch(/total +700/);
    expect(frame).toMatch(/VA payment [0-9a-f-]{36} \(waiting\)/);
  });

  it('creates a client and credits it, cancels a VA payment, and advances the clock past an expiry', async () => {
    const { keys, screen, sandbox } = useDashboard();
    await screen('no clients yet');
    await keys('c');
    await screen('New client');
    await keys(...'Ana', KEY.tab, ...'20-12345678-6', KEY.enter);
    await screen(/> Ana +20-12345678-6 +active +ARS 0\.00/);
    await keys(KEY.tab, 't');
    await screen('to client Ana (CVU active)');
    await keys(KEY.down, ...'1000', KEY.down, KEY.backspace, ...'25', KEY.enter);
    await screen(/> Ana +20-12345678-6 +active +ARS 975\.00/);

    await sandbox.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 70, ttlSeconds: 60 });
    await sandbox.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 80, ttlSeconds: 600 });
    await screen(/VA payments {2}1-2 of 2/);
    await keys(KEY.tab, KEY.tab, 'x');
    await screen(/Cancel VA payment[^]*waiting, ARS 80\.00/);
    await keys(KEY.enter);
    await screen(/> cancelled +ARS 80\.00/);
    await keys('a');
    await screen('Advance the sandbox clock');
    await keys(...'2m', KEY.enter);
    const frame = await screen(/ {2}expired +ARS 70\.00/);
    expect(frame).toMatch(/clock \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \+2m00s/);
    await screen(/event +failed/);
  });

  it('opens a delivery to show its request and response in full, and redelivers it', async () => {
    const { keys, screen, sandbox } = useDashboard();
    await sandbox.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 90, callbackUrl: `${receiver.url}/open` });
    await screen(/delivered created +attempt 1\/3 HTTP 200/);
    await keys(KEY.tab, KEY.tab);
    await screen(/> \d\d:\d\d:\d\d delivered created/);
    await keys(KEY.enter);
    let frame = await screen('request (as sent)');
    expect(frame).toMatch(/POST http:\/\/127\.0\.0\.1:\d+\/open/);
    expect(frame).toContain('X-Service-Event-Type: created');
    await keys('G');
    frame = await screen(/attempt 1 +\S+ +HTTP 200 +\d+ ms +=> http:\/\/127\.0\.0\.1:\d+\/open\nok/);
    await keys('r');
    await screen('enter sends the event again, same eventId');
    await keys(KEY.enter);
    await screen(/redelivery \S+ of \S+ queued/);
    await screen(/delivered created +attempt 1\/3 HTTP 200 +\d+ ms/);
    await eventually(() => receiver.received.filter((r) => r.url === '/open').length === 2);
  });

  it('stays within the screen with 1,000 VA payments and a burst of 500 deliveries: windows of what fits, a capped feed', async () => {
    const { app, calls, keys, screen, sandbox } = useDashboard();
    await screen(/live.*\n VA payments {2}0 of 0/);
    const before = paymentLists(calls).length;
    const started = Date.now();
    // 20 at a time without pause, one burst: every other payment calls back, so 500 deliveries come while the
    // stream also says 1,000 times that a payment was created.
    let made = 0;
    const make = async (): Promise<void> => {
      for (let i = made++; i < 1000; i = made++) {
        await sandbox.data('POST', '/api/v1/va-payments', {
          ...PAYMENT,
          ttlSeconds: 3600,
          callbackUrl: i % 2 === 0 ? `${receiver.url}/burst` : undefined,
        });
      }
    };
    await Promise.all(Array.from({ length: 20 }, make));
    await receiver.waitFor(500, (r) => r.url === '/burst', 60_000);
    await screen(/VA payments {2}1-6 of 1000/, 30_000);
    const seconds = (Date.now() - started) / 1000;
    await screen(/delivered created +attempt 1\/3 HTTP 200/);
    // Each list asked for one window of the rows that fit, never the whole list.
    for (const call of paymentLists(calls)) expect(call).toMatch(/[?&]limit=6(&|$)/);
    // Asked again on stream messages, debounced: about once a second while they keep coming (twice for slack), not
    // once for each of the 1,000 events (a count, bounded by how long the burst lasted on this machine).
    expect(paymentLists(calls).length - before).toBeLessThanOrEqual(3 + 2 * Math.ceil(seconds));
    for (const frame of app.frames.slice(-50)) expect(frame.split('\n').length).toBeLessThanOrEqual(23);

    // The last six: the API's pages 166 and 167 of six, cut to the window.
    await keys('G');
    const frame = await screen(/VA payments {2}995-1000 of 1000/);
    expect(frame.split('\n').filter((line) => /^[> ] (waiting|completed)/.test(line))).toHaveLength(6);
    expect(paymentLists(calls).slice(-2)).toEqual([
      'GET /api/v1/va-payments?page=166&limit=6',
      'GET /api/v1/va-payments?page=167&limit=6',
    ]);
  });

  it('shows when forwarding is on (set by `listen` elsewhere), and where each forwarded attempt went', async () => {
    const { app, screen, sandbox } = useDashboard();
    await screen(/live.*\n VA payments {2}0 of 0/);
    await sandbox.data('PUT', '/sandbox/v1/forwarding', { url: `${receiver.url}/laptop` });
    // The header is cut at the terminal's width (100 here): the URL's start shows.
    await screen(/^.*clock .* {2}forwarding => http:\/\/127\.0/);
    await sandbox.data('POST', '/api/v1/va-payments', {
      ...PAYMENT,
      amount: 320,
      callbackUrl: 'https://merchant.example/hook',
    });
    await screen(/delivered created +attempt 1\/3 HTTP 200 +\d+ ms => http:\/\/127\.0/);
    await sandbox.data('DELETE', '/sandbox/v1/forwarding');
    await screen(/forward +off: callbacks go to their own URLs/);
    await eventually(
      () => !app.lastFrame()!.split('\n')[0]!.includes('forwarding =>'),
      5000,
      'the header without forwarding',
    );
  });

  it('shows the deliveries an imported file brought as held, and their first attempt once released', async () => {
    const { screen, sandbox } = useDashboard();
    await screen(/live.*\n VA payments {2}0 of 0/);
    const { doc } = await incidentWithOpenDeliveries(server.url, `sk_ui_held_source_${n}`, `${receiver.url}/incident`);
    await sandbox.data('POST', '/sandbox/v1/import', doc);
    // The file's own attempt (forwarded to a refused port where it came from), and nothing since.
    await screen(/held +created +attempt 1\/3 connection_refused /);
    await sandbox.data('POST', '/sandbox/v1/deliveries/release');
    await screen(/delivered created +attempt 2\/3 HTTP 200/);
  });

  it('orders the feed by sandbox time: a delivery retried later shows below one made after it was first tried', async () => {
    const key = 'sk_ui_dashboard_feed_order';
    const sandbox = api(server.url, key);
    const failing = await useReceiver(() => ({ status: 500 }));
    const attempts = async (id: string) =>
      (await sandbox.data('GET', `/sandbox/v1/deliveries?limit=100`)).find(
        (d: { vaPaymentId: string }) => d.vaPaymentId === id,
      )?.attempts;
    const retried = await sandbox.data('POST', '/api/v1/va-payments', {
      ...PAYMENT,
      amount: 10,
      callbackUrl: `${failing.url}/retried`,
    });
    await eventually(async () => (await attempts(retried.id)) === 1);
    await sandbox.data('POST', '/sandbox/v1/clock/advance', { seconds: 2 });
    const later = await sandbox.data('POST', '/api/v1/va-payments', {
      ...PAYMENT,
      amount: 20,
      callbackUrl: `${receiver.url}/later`,
    });
    await eventually(async () => (await attempts(later.id)) === 1);
    // The first payment's retry falls due 5 s after its first attempt: 3 s after the second payment's callback.
    await sandbox.data('POST', '/sandbox/v1/clock/advance', { seconds: 3 });
    await eventually(async () => (await attempts(retried.id)) === 2);

    const app = render(
      <Dashboard
        connection={{ client: createClient(server.url, key), url: server.url, apiKey: key, embedded: null }}
      />,
    );
    mounted.push(app);
    const frame = await screenWith(app, /retrying +created +attempt 2\/3/);
    const feed = frame.split('\n').filter((line) => / (delivered|retrying) +created +attempt/.test(line));
    expect(feed.map((line) => /(delivered|retrying) +created +attempt \d/.exec(line)![0].split(/ +/)[0])).toEqual([
      'delivered',
      'retrying',
    ]);
    const times = feed.map((line) => /\d\d:\d\d:\d\d/.exec(line)![0]);
    expect(times).toEqual([...times].sort());
  });
});
