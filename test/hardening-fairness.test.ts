import { describe, expect, it } from 'vitest';
import { api, eventually, PAYMENT, useReceiver, useServer } from './helpers.js';

/**
 * Callback slots are shared fairly (issue 15, item 7): one account's hanging receivers never hold up another
 * account's callbacks (parallel CI jobs never see each other), and no receiver gets more attempts at once than it
 * has connections, so no attempt waits unsent in the HTTP client's queue while its timeout runs.
 */
describe('fair delivery between accounts and receivers', () => {
  it("an account whose 40 receivers hang leaves room for another account's callbacks", async () => {
    const server = await useServer({ callbackTimeoutMs: 4_000 });
    const hanging = await useReceiver(() => 'hang');
    const busy = api(server.url, 'sk_busy_account');
    for (let i = 0; i < 40; i++)
      await busy.data('POST', '/api/v1/va-payments', { ...PAYMENT, callbackUrl: `${hanging.url}/r${i}` });
    await hanging.waitFor(8); // its attempts are under way

    const fast = await useReceiver();
    const other = api(server.url, 'sk_other_account');
    const sent = Date.now();
    await other.data('POST', '/api/v1/va-payments', { ...PAYMENT, callbackUrl: `${fast.url}/hook` });
    const [got] = await fast.waitFor(1);
    // Without fair shares, the busy account's 32 attempts hold every slot until they time out (4 s).
    expect(got!.at - sent).toBeLessThan(1_500);
  });

  it('a receiver gets at most 8 attempts at once, and none times out waiting to be sent', async () => {
    const server = await useServer({ callbackTimeoutMs: 1_500 });
    let open = 0;
    let most = 0;
    const slow = await useReceiver(async () => {
      most = Math.max(most, ++open);
      await new Promise((resolve) => setTimeout(resolve, 600));
      open--;
      return { status: 200 };
    });
    const client = api(server.url, 'sk_one_receiver');
    for (let i = 0; i < 24; i++)
      await client.data('POST', '/api/v1/va-payments', { ...PAYMENT, callbackUrl: `${slow.url}/p${i}` });
    const log = await eventually(
      async () => {
        const { data } = await client.list('/sandbox/v1/deliveries?limit=100');
        return data.every((d: { status: string }) => d.status === 'delivered') && data;
      },
      20_000,
      'every delivery delivered',
    );
    expect(most).toBeLessThanOrEqual(8);
    // Queued in the client instead, the third wave would wait 1.2 s and time out at 1.5 s before it is sent.
    expect(log.map((d: { attempts: number }) => d.attempts)).toEqual(Array(24).fill(1));
  });
});
