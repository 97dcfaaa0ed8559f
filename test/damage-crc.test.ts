import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, expect, it } from 'vitest';
import { startServer } from '../src/sandbox/http/server.js';
import { api, eventually, PAYMENT, retryingDelivery, runCli, spawnServer, useReceiver, useTmp } from './helpers.js';

/**
 * One letter changed inside a stored record, the row's JSON still sound (what `PRAGMA quick_check` cannot see): its
 * CRC-32 refuses it on every read (contract part 8), and `va-sandbox check` finds it.
 */

const KEY = 'sk_crc';
const MARKER = 'CrcMarker-7f3a';

/** A database after a clean stop: payments (one carrying MARKER in its metadata) whose callbacks `receiver` took. */
async function written(data: string, callbackUrl: string) {
  const server = await startServer({ port: 0, host: '127.0.0.1', data });
  const client = api(server.url, KEY);
  const other = await client.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 100, callbackUrl });
  const marked = await client.data('POST', '/api/v1/va-payments', {
    ...PAYMENT,
    amount: 7,
    callbackUrl,
    metadata: { note: MARKER },
  });
  await eventually(
    async () => (await client.list('/sandbox/v1/deliveries?status=delivered')).pagination.total === 2,
    10_000,
    'the callbacks',
  );
  const { data: events } = await client.list('/sandbox/v1/events?limit=100');
  const { data: deliveries } = await client.list('/sandbox/v1/deliveries?limit=100');
  const event = events.find((e: { vaPaymentId: string }) => e.vaPaymentId === marked.id);
  const delivery = deliveries.find((d: { eventId: string }) => d.eventId === event.id);
  await server.close();
  return { marked, other, delivery };
}

/** Flips the case of MARKER's first letter wherever the file holds it (the JSON stays sound): how many places. */
function flipMarker(data: string): number {
  const bytes = readFileSync(data);
  let flipped = 0;
  for (let at = bytes.indexOf(MARKER); at >= 0; at = bytes.indexOf(MARKER, at + 1)) {
    bytes[at]! ^= 0x20;
    flipped++;
  }
  writeFileSync(data, bytes);
  return flipped;
}

describe('a record whose bytes changed (its CRC-32)', () => {
  it('is refused on every read, named with its file, table and id; never sent in a callback or exported; check finds it', {
    timeout: 60_000,
  }, async () => {
    const receiver = await useReceiver();
    const data = join(useTmp(), 'state.db');
    const { marked, other, delivery } = await written(data, `${receiver.url}/hook`);
    const sent = receiver.received.length;
    expect(flipMarker(data)).toBeGreaterThan(0);

    const server = await spawnServer(['--data', data, '--quiet']);
    const client = api(server.url, KEY);
    const refusal = new RegExp(`${data}.*va_payments.*${marked.id}.*va-sandbox check`);
    const one = await client.call('GET', `/api/v1/va-payments/${marked.id}`);
    expect(one.status).toBe(500);
    expect(one.body.error.code).toBe('INTERNAL_ERROR');
    expect(one.body.error.message).toMatch(refusal);
    expect(one.body.error.message.split('cannot be read')).toHaveLength(2); // said once, not wrapped in itself
    expect(JSON.stringify(one.body)).not.toContain(MARKER.slice(1));
    await eventually(
      () =>
        server
          .stderr()
          .split('\n')
          .some((line) => refusal.test(line)),
      5_000,
      'the log line',
    );
    // A list that would include it refuses whole: a page that left it out would miscount its total.
    const list = await client.call('GET', '/api/v1/va-payments?limit=100');
    expect(list.status).toBe(500);
    expect(list.body.error.message).toMatch(refusal);
    // The others still read, and the account still takes writes.
    expect((await client.call('GET', `/api/v1/va-payments/${other.id}`)).status).toBe(200);
    const created = await client.call('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 8 });
    expect(created.status, JSON.stringify(created.body)).toBe(201);

    // Its callback sent again: the receiver never gets its bytes, and the account's other callbacks and writes go on
    // (a later payment's callback shows the sender works).
    const redelivered = await client.call('POST', `/sandbox/v1/deliveries/${delivery.id}/redeliver`);
    expect(redelivered.status).toBe(500);
    expect(redelivered.body.error.message).toMatch(refusal);
    await client.data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 9, callbackUrl: `${receiver.url}/hook` });
    await receiver.waitFor(sent + 1);
    await new Promise((done) => setTimeout(done, 1_000));
    const later = receiver.received.slice(sent);
    expect(later.map((request) => request.raw).filter((raw) => raw.includes(marked.id))).toEqual([]);
    expect(later.map((request) => request.raw).join('')).not.toContain(MARKER.slice(1));

    // An export leaves it out and names it.
    const exported = await client.call('GET', '/sandbox/v1/export');
    expect(exported.status).toBe(200);
    expect(exported.body.unreadable).toContain(`va_payments ${marked.id}`);
    expect(Object.keys(exported.body.data.account.vaPayments)).not.toContain(marked.id);
    expect(JSON.stringify(exported.body)).not.toContain(MARKER.slice(1));

    // check, beside the running server: the table and the id, exit 1.
    const check = await runCli(['check', '--data', data]);
    expect(check.code).toBe(1);
    expect(check.stdout).toBe(`${data}: va_payments record ${marked.id}: its CRC-32 does not match its stored bytes\n`);
    expect(check.stderr).toMatch(
      new RegExp(`^va-sandbox: ${data} is damaged \\(1 found damaged, \\d+ records read\\)[^\\n]*\\n$`),
    );
  });

  it('a delivery row changed while it waits for a retry: the account still takes writes, the server stays up', {
    timeout: 60_000,
  }, async () => {
    const data = join(useTmp(), 'state.db');
    const { delivery } = await retryingDelivery(data, KEY, { amount: 5 }, { retryDelays: [2, 2, 2] });
    const db = new DatabaseSync(data);
    db.prepare(`UPDATE deliveries SET data = replace(data, '"url":"http', '"url":"hTtp') WHERE id = ?`).run(
      delivery.id,
    );
    db.close();
    const again = await spawnServer(['--data', data, '--quiet', '--retry-delays', '2,2,2']);
    const next = api(again.url, KEY);
    await new Promise((done) => setTimeout(done, 3_000)); // its retry is due
    const statuses = [];
    for (let i = 0; i < 3; i++)
      statuses.push((await next.call('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 6 + i })).status);
    expect(statuses).toEqual([201, 201, 201]);
    const read = await next.call('GET', `/sandbox/v1/deliveries/${delivery.id}`);
    expect(read.status).toBe(500);
    expect(read.body.error.message).toMatch(new RegExp(`${data}.*deliveries.*${delivery.id}.*va-sandbox check`));
    expect(again.child.exitCode).toBe(null);
  });
});
