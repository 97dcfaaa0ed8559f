import { describe, expect, it } from 'vitest';
import { api, eventually, PAYMENT, spawnServer, useReceiver } from './helpers.js';

const KEY = 'sk_live_looking_secret_9x7Q';

/** One payment that calls back once (its `created`), and one request that fails. */
async function traffic(url: string, receiverUrl: string) {
  const client = api(url, KEY);
  const payment = await client.data('POST', '/api/v1/va-payments', {
    ...PAYMENT,
    amount: 10,
    callbackUrl: `${receiverUrl}/hook`,
  });
  await client.get('/api/v1/va-payments/00000000-0000-4000-8000-000000000000');
  return payment;
}

describe('the server log (contract part 5)', () => {
  it('prints one line per request (method path status ms key, the key cut to its last 4 characters) and per callback attempt', async () => {
    const receiver = await useReceiver((_, index) => ({ status: index === 0 ? 503 : 200 }));
    const server = await spawnServer(['--memory']);
    await traffic(server.url, receiver.url);
    const out = await server.waitFor(/callback created/);
    expect(out).toMatch(/^\d\d:\d\d:\d\d\.\d{3} POST \/api\/v1\/va-payments 201 \d+ms …9x7Q$/m);
    expect(out).toMatch(
      /^\d\d:\d\d:\d\d\.\d{3} GET \/api\/v1\/va-payments\/00000000-0000-4000-8000-000000000000 404 \d+ms …9x7Q$/m,
    );
    expect(out).toMatch(
      new RegExp(`^\\d\\d:\\d\\d:\\d\\d\\.\\d{3} callback created ${receiver.url}/hook 503 \\d+ms$`, 'm'),
    );
    expect(out).toMatch(/^\d\d:\d\d:\d\d\.\d{3} GET \/health 200 \d+ms -$/m);
    expect(out + server.stderr()).not.toContain(KEY);
  });

  it('a stop writes the line of every request answered before it (lines wait to be written together), then says it stopped', async () => {
    const server = await spawnServer(['--memory']);
    const client = api(server.url, KEY);
    for (const amount of [10, 11, 12]) await client.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount });
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
    const lines = (
      await eventually(() => (/stopped/.test(server.stdout()) ? server.stdout() : ''), 5_000, 'the stop line')
    ).split('\n');
    const posts = lines.flatMap((line, at) => (/ POST \/api\/v1\/va-payments 201 /.test(line) ? [at] : []));
    expect(posts).toHaveLength(3);
    expect(lines.findIndex((line) => /va-sandbox stopped/.test(line))).toBeGreaterThan(posts[2]!);
  });

  it('--log json writes one JSON object per line on stdout (the banner goes to stderr); --quiet writes none', async () => {
    const receiver = await useReceiver();
    const json = await spawnServer(['--memory', '--log', 'json']);
    const payment = await traffic(json.url, receiver.url);
    await fetch(`${json.url}/api/v1/va-payments/no-such-payment`, { headers: { authorization: 'Bearer sk_log_9x7Q' } });
    await json.waitFor(/"type":"callback"/);
    await json.waitFor(/no-such-payment/);
    const entries = json
      .stdout()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(json.stderr()).toMatch(/listening on/);
    expect(entries).toContainEqual(
      expect.objectContaining({
        type: 'request',
        method: 'POST',
        path: '/api/v1/va-payments',
        status: 201,
        key: '…9x7Q',
      }),
    );
    expect(entries).toContainEqual(
      expect.objectContaining({
        type: 'callback',
        eventType: 'created',
        url: `${receiver.url}/hook`,
        status: 200,
        error: null,
        attempt: 1,
        forwardedTo: null,
      }),
    );
    expect(entries.find((e) => e.type === 'callback').eventId).toBe(
      receiver.received.find((r) => r.body.vaPaymentId === payment.id)!.body.eventId,
    );
    // pino's shape: a numeric level, the time in epoch ms and the text line as msg, beside the fields.
    for (const entry of entries) {
      expect(entry).toMatchObject({ level: expect.any(Number), time: Date.parse(entry.at), msg: expect.any(String) });
      expect(entry.msg).toContain(
        entry.type === 'request' ? `${entry.method} ${entry.path} ${entry.status}` : `callback ${entry.eventType}`,
      );
    }
    expect(entries.find((e) => e.type === 'request' && e.status === 201).level).toBe(30);
    expect(entries.find((e) => e.type === 'request' && e.status === 404).level).toBe(40);

    const quiet = await spawnServer(['--memory', '--quiet']);
    await traffic(quiet.url, receiver.url);
    await receiver.waitFor(2);
    await new Promise((resolve) => setTimeout(resolve, 300));
    // The banner (listening, data, API key, try) and nothing more.
    expect(quiet.stdout()).toMatch(/^va-sandbox .* listening on .*\n {2}data: .*\n {2}API key: .*\n {2}try: .*\n$/);
  });
});
