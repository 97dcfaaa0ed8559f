import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import type { DeliveryDetail } from '../src/cli/commands/deliveries.js';
import { ClientsPane } from '../src/cli/ui/clients-pane.js';
import { feedWindow } from '../src/cli/ui/dashboard-state.js';
import { DeliveryView } from '../src/cli/ui/delivery-view.js';
import { appendToFeed, FEED_CAP, type FeedEntry, feedLine } from '../src/cli/ui/feed.js';
import { HelpLine } from '../src/cli/ui/help-line.js';
import { layoutOf, scrolled } from '../src/cli/ui/layout.js';
import type { LiveMessage } from '../src/cli/ui/live.js';
import { Pane } from '../src/cli/ui/pane.js';
import { PaymentsPane } from '../src/cli/ui/payments-pane.js';
import { expiresIn, span } from '../src/cli/ui/time.js';
import type { ClientView } from '../src/cli/ui/use-sandbox.js';
import type { VaPaymentView } from '../src/core/records/views.js';
import { api, CLIENT, eventually, PAYMENT, useReceiver, useServer } from './helpers.js';
import { KEY, keyboard, screenWith } from './ui-helpers.js';

/** Real objects of the API, so the panes are tested on what they will be given. */
const server = await useServer();
const receiver = await useReceiver((request) => ({ status: request.url.endsWith('/fail') ? 500 : 200 }));
const sandbox = api(server.url, 'sk_ui_panes');
const waiting: VaPaymentView = await sandbox.data('POST', '/api/v1/va-payments', {
  ...PAYMENT,
  amount: 1500,
  lockMode: 'amount',
  ttlSeconds: 1800,
  callbackUrl: `${receiver.url}/va`,
});
const open: VaPaymentView = await sandbox.data('POST', '/api/v1/va-payments', { ...PAYMENT, ttlSeconds: 3600 });
await sandbox.data('POST', '/sandbox/v1/transfers', { to: open.cvu, total: 700, taxes: 30 });
const completed: VaPaymentView = await sandbox.data('GET', `/api/v1/va-payments/${open.id}`);
const ana = await sandbox.data('POST', '/api/v1/clients', {
  ...CLIENT,
  name: 'Ana Pérez',
  taxId: '20-12345678-6',
  cashinCallbackUrl: `${receiver.url}/fail`,
});
const toAna = await sandbox.data('POST', '/sandbox/v1/transfers', { to: ana.alias, total: 1000, taxes: 25 });
const clientRow: ClientView = { ...ana, balance: 975 };
const created = (await sandbox.list('/sandbox/v1/deliveries?eventType=created')).data.find(
  (d: DeliveryDetail) => d.url !== null,
);
const detail: DeliveryDetail = (await eventually(async () => {
  const found: DeliveryDetail = await sandbox.data('GET', `/sandbox/v1/deliveries/${created.id}`);
  return found.attempts.length > 0 ? found : null;
}))!;
const now = Date.parse(waiting.createdAt);

const lines = (frame: string | undefined) => (frame ?? '').split('\n');

describe('VA payments pane', () => {
  it('shows status, amount, received and remaining amounts and the expiry countdown by the sandbox clock', () => {
    const { lastFrame } = render(
      <PaymentsPane
        window={{ items: [waiting, completed], offset: 0, total: 2 }}
        selected={0}
        rows={5}
        focused
        width={100}
        nowMs={now + 61_000}
      />,
    );
    const [title, header, first, second] = lines(lastFrame());
    expect(title).toContain('VA payments  1-2 of 2');
    expect(header).toMatch(/status +amount +received +remaining +expires +alias/);
    // 1800 s of ttl, 61 s gone by the sandbox clock.
    expect(first).toMatch(/^> waiting +ARS 1500\.00 +ARS 0\.00 +ARS 1500\.00 +28m59s +SANDBOX\.HUB\.COBROS/);
    // An ended payment has no countdown; the open amount reads "open", the net credited amount is received.
    expect(second).toMatch(/^ {2}completed +open +ARS 670\.00 +ARS 0\.00 +- /);
  });

  it('renders only the window it is given, and says which items of how many', () => {
    const { lastFrame } = render(
      <PaymentsPane
        window={{ items: [waiting, waiting, waiting], offset: 300, total: 1000 }}
        selected={301}
        rows={3}
        focused
        width={100}
        nowMs={now}
      />,
    );
    const frame = lines(lastFrame());
    expect(frame[0]).toContain('VA payments  301-303 of 1000');
    // Title, header, three rows: nothing more, however long the list.
    expect(frame).toHaveLength(5);
    expect(frame.map((line) => line.startsWith('>'))).toEqual([false, false, false, true, false]);
  });

  it('says how to start when there are none, and that it is loading before the first answer', () => {
    expect(
      render(
        <PaymentsPane
          window={{ items: [], offset: 0, total: 0 }}
          selected={0}
          rows={3}
          focused={false}
          width={80}
          nowMs={now}
        />,
      ).lastFrame(),
    ).toContain('no VA payments yet: n creates one');
    expect(
      render(<PaymentsPane window={null} selected={0} rows={3} focused={false} width={80} nowMs={now} />).lastFrame(),
    ).toContain('loading…');
  });

  it('cuts lines to the width instead of wrapping them, so the layout holds in 80 columns', () => {
    const frame = lines(
      render(
        <PaymentsPane
          window={{ items: [waiting], offset: 0, total: 1 }}
          selected={0}
          rows={1}
          focused
          width={80}
          nowMs={now}
        />,
      ).lastFrame(),
    );
    expect(frame).toHaveLength(3);
    for (const line of frame) expect(line.length).toBeLessThanOrEqual(80);
  });
});

describe('clients pane', () => {
  it("shows each client's CVU status and balance", () => {
    const [title, header, row] = lines(
      render(
        <ClientsPane window={{ items: [clientRow], offset: 0, total: 1 }} selected={0} rows={2} focused width={120} />,
      ).lastFrame(),
    );
    expect(title).toContain('clients  1-1 of 1');
    expect(header).toMatch(/name +taxId +cvuStatus +balance +alias/);
    expect(row).toMatch(new RegExp(`^> Ana Pérez +20-12345678-6 +active +ARS 975\\.00 +${ana.alias}`));
  });
});

describe('feed', () => {
  const attempt = (n: number, responseStatus: number | null, error: string | null): LiveMessage => ({
    type: 'delivery',
    delivery: {
      ...detail,
      status: error ? 'retrying' : 'delivered',
      attempts: n,
      lastResponseStatus: responseStatus,
      lastError: error as never,
    },
    attempt: {
      n,
      startedAt: '2026-01-02T10:11:12.000Z',
      durationMs: 42,
      responseStatus,
      responseBody: null,
      error: error as never,
      errorMessage: null,
    },
  });

  it('says of each delivery attempt its event type, attempt n/3, HTTP status or error, duration and URL', () => {
    expect(feedLine(attempt(1, 200, null))).toMatch(
      new RegExp(`^10:11:12 delivered created +attempt 1/3 HTTP 200 +42 ms ${receiver.url}/va$`),
    );
    expect(feedLine(attempt(2, null, 'connection_refused'))).toMatch(
      /^10:11:12 retrying +created +attempt 2\/3 connection_refused +42 ms/,
    );
  });

  it('says of events where they go, and of transfers what they credited', () => {
    const event: LiveMessage = {
      type: 'event',
      event: {
        id: 'e',
        eventType: 'succeeded',
        vaPaymentId: waiting.id,
        clientId: null,
        url: null,
        droppedReason: 'no callback URL',
        body: {},
        createdAt: '2026-01-02T10:11:12.000Z',
        deliveries: [],
      },
    };
    expect(feedLine(event)).toMatch(/event +succeeded +dropped: no callback URL/);
    expect(feedLine({ type: 'transfer', transfer: toAna })).toMatch(
      new RegExp(`transfer +ARS 1000\\.00 +to ${ana.alias} credited client ${ana.id}$`),
    );
  });

  it('keeps the latest FEED_CAP lines, numbered in order of arrival', () => {
    let feed = appendToFeed(
      [],
      Array.from({ length: FEED_CAP - 1 }, () => attempt(1, 200, null)),
    );
    feed = appendToFeed(
      feed,
      Array.from({ length: 500 }, () => attempt(2, 500, 'http_status')),
    );
    expect(feed).toHaveLength(FEED_CAP);
    expect(feed[0]!.seq).toBe(499);
    expect(feed.at(-1)!.seq).toBe(FEED_CAP + 498);
  });

  it('puts each line in by its sandbox time, whenever it came; the selected line stays selected when one goes above it', () => {
    const at = (time: string): LiveMessage => {
      const message = attempt(1, 200, null) as Extract<LiveMessage, { type: 'delivery' }>;
      return { ...message, attempt: { ...message.attempt!, startedAt: `2026-01-02T${time}.000Z` } };
    };
    const shown = (feed: FeedEntry[]) =>
      feed.map(({ message }) => (message.type === 'delivery' ? feedLine(message).slice(0, 8) : message.type));
    let feed = appendToFeed([], [at('00:46:00'), at('00:47:15')]);
    const tops = { payments: 0, clients: 0, feed: 0 };
    const selected = feedWindow(feed, feed[1]!.seq, tops, 5).entry!;
    // An attempt that started before the last line came in after it (a slow handler): it goes above it.
    feed = appendToFeed(feed, [
      at('00:46:45'),
      { type: 'forwarding', forwarding: { url: null, events: null, since: null } },
    ]);
    expect(shown(feed)).toEqual(['00:46:00', '00:46:45', '00:47:15', 'forwarding']);
    expect(feedWindow(feed, selected.seq, tops, 5).entry).toBe(selected);
  });

  it('shows its lines in a pane of fixed height, the selected one marked', () => {
    const frame = lines(
      render(
        <Pane title="feed" focused width={80} lines={['one', 'two', 'three']} selected={1} rows={2} empty="nothing" />,
      ).lastFrame(),
    );
    expect(frame).toEqual([expect.stringContaining('feed'), '  one', '> two']);
  });
});

describe('delivery view', () => {
  it('shows the request as sent (headers and body) and each attempt with its response, and scrolls', async () => {
    const closed: string[] = [];
    const view = render(
      <DeliveryView
        detail={detail}
        width={100}
        rows={8}
        onClose={() => closed.push('close')}
        onRedeliver={() => closed.push('redeliver')}
      />,
    );
    const { lastFrame } = view;
    const keys = keyboard(view);
    // How many lines there are is known once ink has laid them out.
    const first = await screenWith(view, /lines 1-7 of \d+/);
    expect(first).toContain(`delivery ${detail.id}`);
    expect(lines(first)).toHaveLength(8);
    await keys('G'); // to the end
    await eventually(() => lastFrame()!.includes('attempt 1'));
    const last = lastFrame()!;
    expect(last).toContain('HTTP 200');
    expect(last).not.toContain(`id           ${detail.id}`);
    await keys('g');
    await eventually(() => lastFrame()!.includes(`id           ${detail.id}`));
    await keys('r', KEY.esc);
    await eventually(() => closed.length === 2);
    expect(closed).toEqual(['redeliver', 'close']);
  });
});

describe('help line and layout', () => {
  it('lists the keys on one line', () => {
    expect(
      render(
        <HelpLine
          keys={[
            ['n', 'payment'],
            ['q', 'quit'],
          ]}
        />,
      ).lastFrame(),
    ).toBe(' n payment  q quit');
  });

  it('shares 80x24 and larger terminals between the panes, leaving one row free', () => {
    for (const rows of [24, 30, 50]) {
      const layout = layoutOf(rows);
      // Header, status and help lines; titles and column headers: 2 + 2 + 1.
      expect(3 + 5 + layout.payments + layout.clients + layout.feed).toBe(rows - 1);
      expect(Math.min(layout.payments, layout.clients, layout.feed)).toBeGreaterThanOrEqual(3);
    }
  });

  it('scrolls a window as little as it can to keep the selection in view, and fills it when there is enough', () => {
    expect(scrolled(0, 3, 6, 8)).toBe(0);
    expect(scrolled(0, 7, 6, 8)).toBe(2);
    expect(scrolled(2, 4, 6, 8)).toBe(2);
    expect(scrolled(2, 1, 6, 8)).toBe(1);
    expect(scrolled(5, 7, 6, 8)).toBe(2);
    expect(scrolled(0, 0, 6, 3)).toBe(0);
  });

  it('counts down in the two largest units', () => {
    expect([45, 90, 1799, 3900, 7200, 183600].map(span)).toEqual(['45s', '1m30s', '29m59s', '1h05m', '2h00m', '2d03h']);
    expect(expiresIn('2026-01-01T00:00:10.000Z', Date.parse('2026-01-01T00:00:10.500Z'))).toBe('due');
  });
});
