/**
 * Events store what renders their body, not a copy of their VA payment, and a dropped event stores no delivery
 * (issue 16, "store less"). What a receiver gets must not change: the bytes sent are the bytes listed, shown, exported
 * and redelivered later, after the payment and its deliveries moved on.
 */

import { randomUUID } from 'node:crypto';
import { appendFileSync, cpSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startServer } from '../src/sandbox/http/server.js';
import { type Api, api, eventually, PAYMENT, type Received, ROOT, stored, useReceiver, useTmp } from './helpers.js';

const receiver = await useReceiver();
const of = (paymentId: string) => (r: Received) => r.body?.vaPaymentId === paymentId;
const create = (client: Api, body: Record<string, unknown>) =>
  client.data('POST', '/api/v1/va-payments', { ...PAYMENT, ...body });
const allDelivered = (client: Api) =>
  eventually(
    async () => (await client.list('/sandbox/v1/deliveries?status=pending,retrying')).pagination.total === 0,
    10_000,
    'every delivery done',
  );

describe('event bodies rendered from what is stored', () => {
  it('every VA event: the bytes sent are the bytes listed, shown, exported and redelivered later', async () => {
    const data = join(useTmp(), 'state.db');
    const server = await startServer({ port: 0, host: '127.0.0.1', data });
    const client = api(server.url, 'sk_bodies');
    const callbackUrl = `${receiver.url}/bodies`;
    const paid = await create(client, { amount: 100, ttlSeconds: 60, callbackUrl });
    await receiver.waitFor(1, of(paid.id));
    await allDelivered(client);
    await client.data('POST', '/sandbox/v1/transfers', { to: paid.cvu, total: 40 });
    await receiver.waitFor(3, of(paid.id));
    const cancelled = await create(client, { amount: 70, callbackUrl, metadata: { order: 7 } });
    await receiver.waitFor(1, of(cancelled.id));
    await allDelivered(client);
    const cancelResponse = await client.data('POST', `/api/v1/va-payments/${cancelled.id}/cancel`);
    await receiver.waitFor(2, of(cancelled.id));
    // Paid twice: the first transfer's events are made again after the second changed the payment's totals.
    const twice = await create(client, { amount: 100, ttlSeconds: 600, callbackUrl });
    await client.data('POST', '/sandbox/v1/transfers', { to: twice.cvu, total: 40 });
    await receiver.waitFor(3, of(twice.id));
    await client.data('POST', '/sandbox/v1/transfers', { to: twice.cvu, total: 80, taxes: 1.5 });
    await allDelivered(client);
    const { lastAttemptAt } = (await client.data('GET', `/api/v1/va-payments/${paid.id}`)).callbackDelivery;
    await client.data('POST', '/sandbox/v1/clock/advance', { seconds: 60 });
    const sent = [
      ...(await receiver.waitFor(4, of(paid.id))),
      ...(await receiver.waitFor(2, of(cancelled.id))),
      ...(await receiver.waitFor(5, of(twice.id))),
    ];
    await allDelivered(client);

    // What each carried, byte for byte: the endpoint's answer at that instant.
    const body = (paymentId: string, eventType: string) =>
      sent.find((r) => r.body.vaPaymentId === paymentId && r.body.eventType === eventType)!;
    expect(JSON.stringify(body(paid.id, 'created').body.payload)).toBe(JSON.stringify(paid));
    expect(JSON.stringify(body(cancelled.id, 'cancelled').body.payload)).toBe(JSON.stringify(cancelResponse));
    const failed = body(paid.id, 'failed').body;
    const expired = await client.data('GET', `/api/v1/va-payments/${paid.id}`);
    expect(failed).toMatchObject({
      status: 'expired',
      payload: { status: 'expired', totalReceived: 40, cashIns: [expect.any(Object)] },
    });
    // Its summary is that instant's: its own delivery pending, the earlier three delivered (now all four are).
    expect(failed.payload.callbackDelivery).toEqual({
      events: 4,
      delivered: 3,
      pending: 1,
      retrying: 0,
      failed: 0,
      dropped: 0,
      held: 0,
      lastEventType: 'failed',
      lastAttemptAt,
    });
    expect(expired.callbackDelivery).toMatchObject({ events: 4, delivered: 4, pending: 0 });
    expect(JSON.stringify(failed.payload)).toBe(
      JSON.stringify({ ...expired, callbackDelivery: failed.payload.callbackDelivery }),
    );
    expect(
      sent
        .filter(of(twice.id))
        .map((r) => [r.body.eventType, r.body.status, r.body.payload.receivedAmount, r.body.payload.remainingAmount]),
    ).toEqual([
      ['created', 'waiting', 0, 100],
      ['cash_in_received', 'underpaid', 40, 60],
      ['underpaid', 'underpaid', 40, 60],
      ['cash_in_received', 'overpaid', 118.5, 0],
      ['overpaid', 'overpaid', 118.5, 0],
    ]);

    // Listed, shown, exported and sent again: the same bytes.
    const events = (await client.list('/sandbox/v1/events?limit=100')).data;
    const exported = await client.data('GET', '/sandbox/v1/export');
    const deliveries = (await client.list('/sandbox/v1/deliveries?limit=100')).data;
    for (const request of sent) {
      const { eventId } = request.body;
      expect(JSON.stringify(events.find((e: any) => e.id === eventId).body)).toBe(request.raw);
      expect(JSON.stringify(exported.account.events[eventId].body)).toBe(request.raw);
      const first = deliveries.find((d: any) => d.eventId === eventId && d.redeliveryOf === null);
      expect(JSON.stringify((await client.data('GET', `/sandbox/v1/deliveries/${first.id}`)).request.body)).toBe(
        request.raw,
      );
    }
    for (const request of sent.filter((r) => ['created', 'cancelled', 'failed'].includes(r.body.eventType))) {
      const first = deliveries.find((d: any) => d.eventId === request.body.eventId);
      await client.data('POST', `/sandbox/v1/deliveries/${first.id}/redeliver`);
      const again = await receiver.waitFor(2, (r) => r.body?.eventId === request.body.eventId);
      expect(again[1]!.raw).toBe(request.raw);
    }
    await allDelivered(client);
    await server.close();

    // On disk: no body; cancelled and failed keep the summary of their instant, a transfer's events their cash-in.
    const account = stored(data, 'sk_bodies');
    for (const request of sent) {
      const event = account.events[request.body.eventId];
      const { payload } = request.body;
      expect(event.body).toBeUndefined();
      expect(event.callbackDelivery).toEqual(
        ['cancelled', 'failed'].includes(event.eventType) ? payload.callbackDelivery : undefined,
      );
      const cashIns = account.vaPayments[event.vaPaymentId].cashIns;
      expect(event.cashIn).toBe(
        payload.operationId === undefined
          ? undefined
          : cashIns.findIndex((c: any) => c.operationId === payload.operationId),
      );
    }
  });
});

describe('a dropped event stores no delivery', () => {
  it('its delivery is the event itself: listed, shown, counted, redelivered to a URL, and the same after a restart with or without the index file', async () => {
    const data = join(useTmp(), 'state.db');
    let server = await startServer({ port: 0, host: '127.0.0.1', data });
    let client = api(server.url, 'sk_dropped');
    const first = await create(client, { amount: 5 });
    const [event] = (await client.list(`/sandbox/v1/events?vaPaymentId=${first.id}`)).data;
    const reason = 'no callbackUrl or successUrl/failureUrl configured';
    expect(event).toMatchObject({ url: null, droppedReason: reason });
    const dropped = {
      id: event.id,
      eventId: event.id,
      eventType: 'created',
      url: null,
      forwardedTo: null,
      status: 'dropped',
      reason,
      attempts: 0,
    };
    expect(event.deliveries).toEqual([expect.objectContaining(dropped)]);
    expect((await client.list('/sandbox/v1/deliveries?status=dropped')).data).toEqual([
      expect.objectContaining(dropped),
    ]);
    expect(await client.data('GET', `/sandbox/v1/deliveries/${event.id}`)).toMatchObject({
      ...dropped,
      request: { url: null, body: event.body },
      attempts: [],
    });
    expect((await client.post(`/sandbox/v1/deliveries/${event.id}/redeliver`)).status).toBe(409);

    const redelivery = await client.data('POST', `/sandbox/v1/deliveries/${event.id}/redeliver`, {
      url: `${receiver.url}/dropped`,
    });
    expect(redelivery).toMatchObject({
      eventId: event.id,
      redeliveryOf: event.id,
      forwardedTo: `${receiver.url}/dropped`,
    });
    const [request] = await receiver.waitFor(1, of(first.id));
    expect(request!.raw).toBe(JSON.stringify(event.body));
    await allDelivered(client);
    expect((await client.data('GET', `/api/v1/va-payments/${first.id}`)).callbackDelivery).toMatchObject({
      events: 1,
      delivered: 1,
      dropped: 1,
    });
    // A later payment's dropped event comes after the redelivery in the log.
    await client.data('POST', '/sandbox/v1/clock/advance', { seconds: 1 });
    const second = await create(client, { amount: 6 });
    const lists = async () =>
      Promise.all(
        ['', '?status=dropped', '?eventType=created', '?status=delivered,dropped&eventType=created&limit=2&page=2'].map(
          (q) => client.list(`/sandbox/v1/deliveries${q}`),
        ),
      );
    const log = await lists();
    expect(log[0]!.data.map((d: any) => [d.eventId, d.status])).toEqual([
      [(await client.list(`/sandbox/v1/events?vaPaymentId=${second.id}`)).data[0].id, 'dropped'],
      [event.id, 'delivered'],
      [event.id, 'dropped'],
    ]);
    const page = await client.list('/sandbox/v1/deliveries?limit=1&page=2');
    expect([page.data.map((d: any) => d.id), page.pagination.total]).toEqual([[redelivery.id], 3]);
    const events = (await client.list('/sandbox/v1/events')).data;
    await server.close();
    // Nothing stored but the redelivery: the dropped events' deliveries are not in the file.
    expect(Object.values(stored(data, 'sk_dropped').deliveries).map((d: any) => d.id)).toEqual([redelivery.id]);

    for (const variant of ['kept index', 'index rebuilt']) {
      if (variant === 'index rebuilt') rmSync(`${data}.index`, { force: true });
      server = await startServer({ port: 0, host: '127.0.0.1', data });
      client = api(server.url, 'sk_dropped');
      expect(await lists(), variant).toEqual(log);
      expect((await client.list('/sandbox/v1/events')).data, variant).toEqual(events);
      await server.close();
    }
  });
});

describe('records stored the old way', () => {
  it("a previous release's file: its events' bodies as held, its dropped deliveries under their own ids", async () => {
    const dir = useTmp();
    cpSync(join(ROOT, 'test', 'data', 'previous-release', 'clean'), dir, { recursive: true });
    const held = JSON.parse(readFileSync(join(dir, 'expected.json'), 'utf8')).accounts.sk_prev; // as that release loads it
    const server = await startServer({ port: 0, host: '127.0.0.1', data: join(dir, 'state.json') });
    const client = api(server.url, 'sk_prev');
    // Its payments have expired since (the sandbox clock runs with real time): their failed events are new.
    const events = (await client.list('/sandbox/v1/events?limit=100')).data.filter((e: any) => held.events[e.id]);
    expect(events.length).toBe(Object.keys(held.events).length);
    for (const event of events) expect(JSON.stringify(event.body)).toBe(JSON.stringify(held.events[event.id].body));
    const deliveries = (await client.list('/sandbox/v1/deliveries?limit=100')).data;
    expect(
      deliveries
        .filter((d: any) => held.events[d.eventId])
        .map((d: any) => d.id)
        .sort(),
    ).toEqual(Object.keys(held.deliveries).sort());
    for (const event of events) {
      const own = Object.values(held.deliveries).filter((d: any) => d.eventId === event.id) as any[];
      expect(event.deliveries.map((d: any) => [d.id, d.status])).toEqual(own.map((d) => [d.id, d.status]));
    }
    for (const payment of Object.values(held.vaPayments) as any[]) {
      const { callbackDelivery } = await client.data('GET', `/api/v1/va-payments/${payment.id}`);
      const counted = (await client.list(`/sandbox/v1/events?vaPaymentId=${payment.id}`)).data;
      expect(callbackDelivery).toMatchObject({
        events: counted.length,
        dropped: counted.flatMap((e: any) => e.deliveries).filter((d: any) => d.status === 'dropped').length,
      });
    }
    await server.close();
  });

  it("a previous release's journal line after its data file: a dropped event's stored delivery is its first", async () => {
    const dir = useTmp();
    const data = join(dir, 'state.json');
    cpSync(join(ROOT, 'test', 'data', 'previous-release', 'clean'), dir, { recursive: true });
    const held = JSON.parse(readFileSync(join(dir, 'expected.json'), 'utf8')).accounts.sk_prev;
    // What that release wrote after its data file: one more dropped cash-in, its delivery stored, in a journal line.
    const [event, delivery] = [Object.values(held.events), Object.values(held.deliveries)].map((records: any[]) =>
      records.find((r) => r.eventType === 'client.cashin'),
    );
    const eventId = randomUUID();
    const deliveryId = randomUUID();
    const line = {
      c: [
        ['sk_prev', 'events', eventId, { ...event, id: eventId, body: { ...event.body, eventId } }],
        ['sk_prev', 'deliveries', deliveryId, { ...delivery, id: deliveryId, eventId }],
      ],
    };
    appendFileSync(`${data}.journal`, `${JSON.stringify(line)}\n`); // a journal line as that release wrote it
    const server = await startServer({ port: 0, host: '127.0.0.1', data });
    const client = api(server.url, 'sk_prev');
    const dropped = (await client.list('/sandbox/v1/deliveries?status=dropped&eventType=client.cashin')).data;
    expect(dropped.map((d: any) => d.id)).toEqual([deliveryId, delivery.id]);
    const listed = (await client.list(`/sandbox/v1/events?clientId=${event.clientId}`)).data;
    expect(listed.map((e: any) => [e.id, e.deliveries.map((d: any) => d.id)])).toEqual([
      [eventId, [deliveryId]],
      [event.id, [delivery.id]],
    ]);
    await server.close();
  });

  it('an import stores bodies it can render compactly, keeps one it cannot as given, and exports the same file again', async () => {
    const data = join(useTmp(), 'state.db');
    const server = await startServer({ port: 0, host: '127.0.0.1', data });
    const source = api(server.url, 'sk_export_from');
    const callbackUrl = `${receiver.url}/import`;
    const kept = await create(source, { amount: 10, callbackUrl });
    const cancelled = await create(source, { amount: 11 });
    await source.data('POST', '/sandbox/v1/transfers', { to: cancelled.cvu, total: 4 });
    await source.data('POST', `/api/v1/va-payments/${cancelled.id}/cancel`);
    await receiver.waitFor(1, of(kept.id));
    await allDelivered(source);
    const exported = await source.data('GET', '/sandbox/v1/export');
    // A created body that its payment does not render (edited by hand): kept as given, sent as given.
    const edited = Object.values(exported.account.events).find((e: any) => e.vaPaymentId === kept.id) as any;
    const editedExport = structuredClone(exported);
    editedExport.account.events[edited.id].body.payload.metadata = { edited: true };

    const target = api(server.url, 'sk_export_to');
    const edits = api(server.url, 'sk_export_edited');
    await target.data('POST', '/sandbox/v1/import', exported);
    await edits.data('POST', '/sandbox/v1/import', editedExport);
    const again = await target.data('GET', '/sandbox/v1/export');
    expect({ ...again, exportedAt: null }).toEqual({ ...exported, exportedAt: null });
    const editedEvent = (await edits.list(`/sandbox/v1/events?vaPaymentId=${kept.id}`)).data[0];
    expect(editedEvent.body.payload.metadata).toEqual({ edited: true });
    await server.close();

    const imported = stored(data, 'sk_export_to');
    for (const event of Object.values(imported.events) as any[]) expect(event.body).toBeUndefined();
    expect(Object.values(imported.deliveries).map((d: any) => d.eventId)).toEqual([edited.id]);
    expect(stored(data, 'sk_export_edited').events[edited.id].body).toEqual(
      editedExport.account.events[edited.id].body,
    );
  });
});
