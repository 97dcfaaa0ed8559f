import { describe, expect, it } from 'vitest';
import { api, eventually, PAYMENT, type Received, useReceiver, useServer } from './helpers.js';

/** The event each one of a paid VA payment follows. */
const PREVIOUS: Record<string, string> = { cash_in_received: 'created', succeeded: 'cash_in_received' };

const server = await useServer();

describe('deliveries under load (contract part 4: order per payment, at least once)', () => {
  it('96 transfers from 32 callers at once, to payments spread over 4 receivers: each payment’s callbacks arrive in the order raised, none twice, none left', async () => {
    // Each answer comes a moment late; a callback that arrives before the one raised before it was answered breaks the rule.
    const answered = new Set<string>();
    const early: string[] = [];
    const respond = async ({ body }: Received) => {
      const previous = PREVIOUS[body.eventType as string];
      if (previous && !answered.has(`${previous}:${body.vaPaymentId}`))
        early.push(`${body.eventType}:${body.vaPaymentId}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
      answered.add(`${body.eventType}:${body.vaPaymentId}`);
      return { status: 200 };
    };
    const receivers = await Promise.all([0, 1, 2, 3].map(() => useReceiver(respond)));
    const client = api(server.url, 'sk_deliveries_load');
    const payments: { id: string; cvu: string; amount: number }[] = [];
    for (let i = 0; i < 96; i++) {
      payments.push(
        await client.data('POST', '/api/v1/va-payments', {
          ...PAYMENT,
          amount: 1500,
          callbackUrl: receivers[i % 4]!.url,
        }),
      );
    }
    const queue = [...payments];
    const pay = async () => {
      for (let payment = queue.shift(); payment; payment = queue.shift()) {
        expect(
          await client.data('POST', '/sandbox/v1/transfers', { to: payment.cvu, total: payment.amount }),
        ).toMatchObject({ outcome: 'credited' });
      }
    };
    await Promise.all(Array.from({ length: 32 }, pay));

    const got = (await Promise.all(receivers.map((receiver) => receiver.waitFor(3 * 24, () => true, 30_000)))).flat();
    for (const payment of payments) {
      const types = got
        .filter((request) => request.body.vaPaymentId === payment.id)
        .map((request) => request.body.eventType);
      expect(types, `payment ${payment.id}`).toEqual(['created', 'cash_in_received', 'succeeded']);
    }
    expect(early).toEqual([]);
    await eventually(
      async () => (await client.list('/sandbox/v1/deliveries?status=delivered')).pagination.total === 3 * 96,
      10_000,
      'every delivery delivered',
    );
    expect((await client.list('/sandbox/v1/deliveries?status=pending')).pagination.total).toBe(0);
  });
});
