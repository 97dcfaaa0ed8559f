/**
 * `va-sandbox trigger` against a real server process and a real receiver (contract part 9): it prints the steps,
 * then each callback's outcome as it is delivered, and stops once the triggered event's callback has one.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TRIGGER_EVENTS } from '../src/core/records/trigger.js';
import { api, ROOT, runCli, spawnServer, useReceiver } from './helpers.js';

const server = await spawnServer(['--memory', '--quiet']);
let failFirst = 1;
const receiver = await useReceiver(() => (failFirst-- > 0 ? { status: 500 } : { status: 200 }));
const env = (key: string) => ({ VA_SANDBOX_URL: server.url, VA_SANDBOX_API_KEY: key });

describe('va-sandbox trigger', () => {
  it('succeeded: the steps, then each callback with its handler status, ending on the triggered one', async () => {
    const run = await runCli(
      ['trigger', 'succeeded', '--callback-url', `${receiver.url}/hooks`, '--amount', '99.5'],
      env('sk_cli_trigger_1'),
    );
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const lines = run.stdout.trim().split('\n');
    const eventId = /^triggered succeeded \(event ([0-9a-f-]{36})\)$/.exec(lines[0]!)![1]!;
    expect(lines[1]).toMatch(
      /^ {2}1\. POST \/api\/v1\/va-payments: VA payment \S+ \(lockMode time, amount 99\.50, .*is waiting/,
    );
    expect(lines[2]).toMatch(
      /^ {2}2\. POST \/sandbox\/v1\/transfers: 99\.50 to CVU \d{22}, credited: VA payment \S+ is completed$/,
    );
    // The receiver refused the first callback (created): it is printed as such; the run ends on succeeded's 200.
    expect(lines.slice(3).map((line) => line.split(/ {2,}/).slice(1, 4))).toEqual([
      ['created', expect.stringMatching(/^payment /), 'HTTP 500'],
      ['cash_in_received', expect.stringMatching(/^payment /), 'HTTP 200'],
      ['succeeded', expect.stringMatching(/^payment /), 'HTTP 200'],
    ]);
    const got = receiver.received.find((r) => r.headers['x-service-event-id'] === eventId);
    expect(got?.body).toMatchObject({
      eventType: 'succeeded',
      status: 'completed',
      payload: { total: 99.5, totalWithoutTaxes: 99.5 },
    });
  });

  it('--json prints the answer data; --hub names the hub', async () => {
    const run = await runCli(
      ['trigger', 'client.cashin', '--hub', '123', '--callback-url', `${receiver.url}/cashin`, '--json'],
      env('sk_cli_trigger_2'),
    );
    expect(run.code).toBe(0);
    const data = JSON.parse(run.stdout);
    expect(data).toEqual({
      event: 'client.cashin',
      eventId: expect.any(String),
      clientId: expect.any(String),
      steps: [expect.any(String), expect.any(String)],
    });
    const client = await api(server.url, 'sk_cli_trigger_2').data('GET', `/api/v1/clients/${data.clientId}`);
    expect(client).toMatchObject({ paymentHubId: 123, cashinCallbackUrl: `${receiver.url}/cashin` });
  });

  it('with nowhere to send it, says the callback was dropped and ends', async () => {
    const run = await runCli(['trigger', 'cancelled'], env('sk_cli_trigger_3'));
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^triggered cancelled/);
    const why = 'no callbackUrl or successUrl/failureUrl configured (give --callback-url, or run va-sandbox listen)';
    expect(run.stderr).toBe(`the cancelled callback was dropped: ${why}\n`);
  });

  it('an unknown event: one line listing the known ones, exit 2', async () => {
    const run = await runCli(['trigger', 'paid'], env('sk_cli_trigger_4'));
    expect(run.code).toBe(2);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toContain(`Allowed choices are ${TRIGGER_EVENTS.join(', ')}.`);
  });

  it("docs/callbacks.md's commands, one per event, each deliver their event to the handler", async () => {
    const page = readFileSync(join(ROOT, 'docs', 'callbacks.md'), 'utf8');
    const block = [...page.matchAll(/```sh\n([^]*?)```/g)]
      .map((m) => m[1]!)
      .find((b) => b.includes('va-sandbox trigger'))!;
    const lines = block
      .trim()
      .split('\n')
      .map((line) => line.replace(/#.*$/, '').trim());
    expect(lines.map((line) => line.split(/\s+/)[3])).toEqual([...TRIGGER_EVENTS]);
    for (const line of lines) {
      const args = line.replace('http://127.0.0.1:3000', receiver.url).split(/\s+/).slice(2);
      const run = await runCli(args, env('sk_cli_trigger_doc'));
      expect(run.code, run.stderr).toBe(0);
      const eventId = /^triggered \S+ \(event ([0-9a-f-]{36})\)$/m.exec(run.stdout)![1];
      expect(
        receiver.received.find((r) => r.headers['x-service-event-id'] === eventId)?.headers['x-service-event-type'],
      ).toBe(args[1]);
    }
  });
});
