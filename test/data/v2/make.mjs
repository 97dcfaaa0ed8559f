// Drives a server of the release (schema version 2) over HTTP to make a small but complete data set.
import { createServer } from 'node:http';
const BASE = process.argv[2];
let ok200 = 0, fail500 = 0;
// receivers: one that answers 200, one 500, one that holds the connection for a while? (no: 500 is enough)
const mk = (status) => new Promise((res) => { const s = createServer((q, r) => { q.resume(); q.on('end', () => { status === 200 ? ok200++ : fail500++; r.writeHead(status); r.end('{}'); }); }); s.listen(0, '127.0.0.1', () => res(s)); });
const good = await mk(200), bad = await mk(500);
const goodUrl = `http://127.0.0.1:${good.address().port}/hook`, badUrl = `http://127.0.0.1:${bad.address().port}/hook`;
async function call(key, method, path, body, extra = {}) {
  const r = await fetch(BASE + path, { method, headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}), ...extra }, body: body ? JSON.stringify(body) : undefined });
  const j = await r.json();
  if (!j.success) { console.error(method, path, r.status, JSON.stringify(j.error)); }
  return j.data;
}
const A = 'sk_alpha', B = 'sk_beta';
const pay = (key, body) => call(key, 'POST', '/api/v1/va-payments', { paymentHubId: 123, currency: 'ARS', ...body });
const transfer = (key, to, total, taxes = 0) => call(key, 'POST', '/sandbox/v1/transfers', { to, total, taxes, from: { name: 'Ana Payer', taxId: '20-12345678-3', cbu: '0110599520000001234567' } });
await call(A, 'PATCH', '/sandbox/v1/hubs/4', { name: 'Second hub' });
const client = await call(A, 'POST', '/api/v1/clients', { paymentHubId: 123, name: 'Acme SA', taxId: '30-71234567-1', cashinCallbackUrl: goodUrl, externalReference: 'acme-1', metadata: { tier: 'gold' } });
const client2 = await call(A, 'POST', '/api/v1/clients', { paymentHubId: 4, name: 'Beta SRL', taxId: 'EXT-9', externalReference: 'beta-1' });
const t1 = await pay(A, { lockMode: 'time', ttlSeconds: 600, callbackUrl: goodUrl, externalReference: 'order-1', clientId: client.id, metadata: { order: 1 } });
const a1 = await pay(A, { lockMode: 'amount', amount: 150.5, callbackUrl: badUrl, externalReference: 'order-2', clientTaxId: '30-71234567-1' });
const a2 = await pay(A, { lockMode: 'amount', amount: 99.99, successUrl: goodUrl, failureUrl: badUrl });
const at1 = await pay(A, { lockMode: 'amount_and_time', amount: 1000, ttlSeconds: 60, callbackUrl: goodUrl, clientName: 'Juan' });
const at2 = await pay(A, { lockMode: 'amount_and_time', amount: 500, ttlSeconds: 3600, callbackUrl: goodUrl });
const t2 = await pay(A, { lockMode: 'time', amount: 200, ttlSeconds: 28800, callbackUrl: goodUrl, externalReference: 'order-6' });
const t3 = await pay(A, { lockMode: 'time', amount: 300, callbackUrl: goodUrl });
const t4 = await pay(A, { lockMode: 'time', ttlSeconds: 30 }); // no URL: dropped events
await call(A, 'POST', '/api/v1/va-payments', { paymentHubId: 123, currency: 'ARS', lockMode: 'amount', amount: 42, callbackUrl: goodUrl }, { 'idempotency-key': 'idem-1' });
await call(A, 'POST', '/api/v1/va-payments', { paymentHubId: 123, currency: 'ARS', lockMode: 'amount', amount: 42, callbackUrl: goodUrl }, { 'idempotency-key': 'idem-1' });
await call(A, 'POST', '/api/v1/va-payments', { paymentHubId: 4, currency: 'ARS', lockMode: 'time', callbackUrl: goodUrl }, { 'idempotency-key': 'idem-2' });
await transfer(A, t1.cvu, 250, 10);            // open amount: completed
await transfer(A, a1.cvu, 150.5, 1.5);          // amount match on hub collection CVU: completed (a1 callbacks fail)
await transfer(A, at2.cvu, 200);                // underpaid
await transfer(A, t2.cvu, 250);                 // overpaid
await transfer(A, client.cvu, 1000, 5);         // client cash_in
await transfer(A, a2.cvu, 1); // returned: no amount-locked payment of 1
await call(A, 'POST', `/api/v1/va-payments/${t3.id}/cancel`);
const under = await pay(A, { lockMode: 'time', amount: 300, callbackUrl: goodUrl, externalReference: 'order-under' });
await transfer(A, under.cvu, 100); // underpaid
await call(A, 'POST', `/sandbox/v1/clients/${client.id}/debits`, { amount: 100, description: 'fee' });
await call(A, 'POST', `/sandbox/v1/clients/${client.id}/ledger`, { entryType: 'credit', amount: 50, description: 'bonus', operationId: 'op-credit-1' });
await call(A, 'POST', `/sandbox/v1/clients/${client.id}/ledger`, { entryType: 'adjustment', amount: -5, description: 'fix' });
await call(A, 'POST', `/sandbox/v1/clients/${client.id}/ledger`, { entryType: 'reversal', operationId: 'op-credit-1', description: 'undo' });
const inv = await call(A, 'POST', `/api/v1/clients/${client.id}/invoices`, { totalAmount: 500, invoiceType: 'B' });
const inv2 = await call(A, 'POST', `/api/v1/clients/${client.id}/invoices`, { total_amount: 70, invoiceType: 'A', invoiceNumber: '0002-00000001' });
await call(A, 'POST', `/sandbox/v1/clients/${client.id}/invoices/${inv.id}/allocations`, { amount: 200 });
await call(A, 'PATCH', `/api/v1/clients/${client.id}/invoices/${inv2?.id}`, { paymentStatus: 'cancelled' });
await new Promise((r) => setTimeout(r, 1500));
await call(A, 'POST', '/sandbox/v1/clock/advance', { seconds: 10 }); // a1's retry (5 s) due: retrying still
await new Promise((r) => setTimeout(r, 500));
const ds = await call(A, 'GET', '/sandbox/v1/deliveries?limit=100');
console.log('deliveries', ds?.length ?? JSON.stringify(ds).slice(0, 200));
await call(A, 'POST', '/sandbox/v1/clock/advance', { seconds: 90 }); // at1 expires (failed), a1's deliveries fail at 25 s
await new Promise((r) => setTimeout(r, 500));
await call(A, 'PUT', '/sandbox/v1/forwarding', { url: goodUrl });
await call(A, 'PUT', '/sandbox/v1/faults', { duplicate: true, delayMs: 0, shuffle: false });
const more = await pay(A, { lockMode: 'amount', amount: 77, callbackUrl: badUrl, clientId: client.id }); // sent to forwarding: delivered twice (duplicate)
await call(A, 'DELETE', '/sandbox/v1/forwarding');
await call(A, 'PUT', '/sandbox/v1/faults', { duplicate: false, delayMs: 0, shuffle: false });
const retrying = await pay(A, { lockMode: 'amount', amount: 78, callbackUrl: badUrl }); // first attempt 500: retrying
await new Promise((r) => setTimeout(r, 1000));
// beta: a clock an hour ahead, a payment to an unreachable URL, and an imported (held) delivery
await call(B, 'POST', '/sandbox/v1/clock/advance', { seconds: 3600 });
await pay(B, { lockMode: 'time', callbackUrl: 'http://127.0.0.1:9/unreachable' });
await new Promise((r) => setTimeout(r, 1000));
console.log('done; receiver 200s', ok200, '500s', fail500);
good.close(); bad.close();
