import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { api, eventually, PAYMENT, spawnServer, useReceiver, useTmp } from './helpers.js';

describe('deliveries survive a crash (contract part 4: at-least-once)', () => {
  it('after a SIGKILL with deliveries in flight, pending and retrying, a restart sends every event at least once', async () => {
    const data = join(useTmp(), 'state.db');
    let up = false;
    const hanging = await useReceiver(() => (up ? { status: 200 } : 'hang'));
    const failing = await useReceiver(() => (up ? { status: 200 } : { status: 500 }));
    const first = await spawnServer(['--data', data]);
    const client = api(first.url, 'sk_restart');

    // Each payment's `created` hangs in flight; its later events wait behind it, stored but never attempted.
    for (let i = 0; i < 3; i++) {
      const payment = await client.data('POST', '/api/v1/va-payments', {
        ...PAYMENT,
        amount: 100 + i,
        callbackUrl: `${hanging.url}/p${i}`,
      });
      await client.data('POST', '/sandbox/v1/transfers', { to: payment.cvu, total: 100 + i });
    }
    // This one's `created` fails once and waits for its retry.
    await client.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 7, callbackUrl: failing.url });
    await hanging.waitFor(3);
    await eventually(
      async () => (await client.list('/sandbox/v1/deliveries?status=retrying')).data.length === 1,
      10_000,
      'the failing delivery to wait for its retry',
    );
    const events: { id: string; url: string }[] = (await client.list('/sandbox/v1/events?limit=100')).data;
    expect(events).toHaveLength(10);
    const delivered = (await client.list('/sandbox/v1/deliveries?status=delivered')).data;
    expect(delivered).toEqual([]);

    first.child.kill('SIGKILL');
    await first.exited;
    up = true;
    const before = { hanging: hanging.received.length, failing: failing.received.length };

    const second = await spawnServer(['--data', data]);
    const again = api(second.url, 'sk_restart');
    // What was in flight or never attempted goes out on start, without any request to prompt it...
    await hanging.waitFor(before.hanging + 9);
    // ...and the retry is due by the sandbox clock, which the advance moves now instead of 5 s later.
    await again.data('POST', '/sandbox/v1/clock/advance', { seconds: 5 });
    await eventually(
      async () => (await again.list('/sandbox/v1/deliveries?status=delivered&limit=100')).data.length === 10,
      15_000,
      'every delivery to be delivered after the restart',
    );
    const answered = [...hanging.received.slice(before.hanging), ...failing.received.slice(before.failing)].map(
      (r) => r.body.eventId,
    );
    for (const event of events) expect(answered).toContain(event.id);
    // Each payment's events still arrive in the order they were raised.
    for (let i = 0; i < 3; i++) {
      const got = hanging.received.filter((r) => r.url === `/p${i}`).map((r) => r.body.eventType);
      expect(got.slice(-3)).toEqual(['created', 'cash_in_received', 'succeeded']);
    }
  });

  it('takes --retry-delays and --callback-timeout from the command line', async () => {
    const hanging = await useReceiver(() => 'hang');
    const server = await spawnServer(['--memory', '--retry-delays', '0,0', '--callback-timeout', '1']);
    const client = api(server.url, 'sk_flags');
    await client.data('POST', '/api/v1/va-payments', { ...PAYMENT, callbackUrl: hanging.url });
    // Retries after 0 s need no clock advance; each attempt times out after 1 s.
    const failed = await eventually(
      async () => {
        const [found] = (await client.list('/sandbox/v1/deliveries?status=failed')).data;
        return found && (await client.data('GET', `/sandbox/v1/deliveries/${found.id}`));
      },
      15_000,
      'the delivery to fail',
    );
    expect(failed.attempts.map((a: { error: string }) => a.error)).toEqual(['timeout', 'timeout', 'timeout']);
    expect(hanging.received).toHaveLength(3);
  });
});
