import { describe, expect, it } from 'vitest';
import { createSandbox, FakeClock, seededIds, type Delivery, type Entry, type VaPayment } from '../../src/core/index.js';
import { Lists } from '../../src/core/lists.js';
import { CLIENT, PAYMENT } from '../helpers.js';

/**
 * An account whose payments, deliveries and entries change their grouped fields out of the order they were made
 * (old payments paid, cancelled or expired after newer ones), with several made in the same instant.
 */
function busyAccount() {
  const clock = new FakeClock(Date.parse('2026-11-21T12:00:00Z'));
  const sandbox = createSandbox({ clock, ids: seededIds(21) });
  const account = sandbox.account('sk_lists');
  const client = account.createClient({ ...CLIENT, name: 'Ana', taxId: '20-12345678-3' });
  const payments = Array.from({ length: 60 }, (_, i) => {
    if (i % 7 === 0) clock.advance(60_000);
    return account.createVaPayment({
      ...PAYMENT,
      amount: 100 + i,
      ttlSeconds: i % 5 === 0 ? 600 : 28_800,
      externalReference: `order-${i % 3}`,
      clientTaxId: i % 4 === 0 ? '20123456783' : '27111111114',
      ...(i % 6 === 0 ? { clientId: client.id } : {}),
      callbackUrl: 'http://127.0.0.1:9/hook',
    });
  });
  for (const i of [41, 3, 17, 58, 9]) account.cancelVaPayment(payments[i]!.id);
  for (const i of [50, 2, 33]) account.createTransfer({ to: payments[i]!.cvu, total: 100 + i });
  for (const i of [44, 8]) account.createTransfer({ to: payments[i]!.alias, total: 50 });
  account.createTransfer({ to: client.alias, total: 70 });
  account.createDebit(client.id, { amount: 20, description: 'fee' });
  account.createTransfer({ to: client.cvu, total: 30 });
  clock.advance(3600_000);
  account.runDue(); // the short-lived ones expire
  const due = [...account.dueDeliveries(new Set())].map(({ delivery }) => delivery);
  for (const [n, delivery] of due.reverse().entries()) {
    account.recordAttempt(delivery.id, { startedAt: account.now(), durationMs: 1, responseStatus: n % 3 ? 200 : 500, responseBody: '', error: n % 3 ? null : 'http_status', errorMessage: n % 3 ? null : 'HTTP 500' });
  }
  return { account, state: account.state, client };
}

/** What a list answers, computed the plain way: the whole table newest first, filtered, one page. */
function scan<T extends { id: string }>(table: Record<string, T>, matches: (record: T) => boolean, page = 1, limit = 20) {
  const all = Object.values(table).reverse().filter(matches);
  return { ids: all.slice((page - 1) * limit, page * limit).map((r) => r.id), total: all.length };
}

const listed = (page: { data: { id: string }[]; pagination: { total: number } }) => ({ ids: page.data.map((r) => r.id), total: page.pagination.total });

describe('filtered lists read their groups', () => {
  const { account, state, client } = busyAccount();

  it('VA payments: each filter and their combinations answer as a scan of the table would, newest first, same totals', () => {
    const cases: [Record<string, string>, (p: VaPayment) => boolean][] = [
      [{}, () => true],
      [{ limit: '9', page: '4' }, () => true],
      [{ status: 'completed' }, (p) => p.status === 'completed'],
      [{ status: 'waiting', limit: '7', page: '3' }, (p) => p.status === 'waiting'],
      [{ status: 'expired,cancelled,underpaid' }, (p) => ['expired', 'cancelled', 'underpaid'].includes(p.status)],
      [{ status: 'cancelled,cancelled' }, (p) => p.status === 'cancelled'],
      [{ clientTaxId: '20123456783' }, (p) => p.clientTaxId === '20123456783'],
      [{ clientId: client.id.toUpperCase() }, (p) => p.clientId === client.id],
      [{ externalReference: 'order-1', status: 'waiting' }, (p) => p.externalReference === 'order-1' && p.status === 'waiting'],
      [{ externalReference: '' }, () => false],
      [{ clientTaxId: '27111111114', createdFrom: state.vaPayments[Object.keys(state.vaPayments)[20]!]!.createdAt }, (p) => p.clientTaxId === '27111111114' && p.createdAt >= state.vaPayments[Object.keys(state.vaPayments)[20]!]!.createdAt],
    ];
    for (const [query, matches] of cases) {
      const page = Number(query.page ?? 1);
      const limit = Number(query.limit ?? 20);
      expect(listed(account.listVaPayments(query)), JSON.stringify(query)).toEqual(scan(state.vaPayments, matches, page, limit));
    }
    expect(account.listVaPayments({ status: 'completed' }).pagination.total).toBeGreaterThan(0);
    expect(account.listVaPayments({ status: 'expired' }).pagination.total).toBeGreaterThan(0);
  });

  it('deliveries by status and event type, and a client’s entries by type, answer as a scan would', () => {
    const deliveries: [Record<string, string>, (d: Delivery) => boolean][] = [
      [{ status: 'retrying' }, (d) => d.status === 'retrying'],
      [{ status: 'delivered,pending', eventType: 'created' }, (d) => ['delivered', 'pending'].includes(d.status) && d.eventType === 'created'],
      [{ eventType: 'cancelled,failed' }, (d) => ['cancelled', 'failed'].includes(d.eventType)],
    ];
    for (const [query, matches] of deliveries) expect(listed(account.listDeliveries(query)), JSON.stringify(query)).toEqual(scan(state.deliveries, matches));
    expect(account.listDeliveries({ status: 'retrying' }).pagination.total).toBeGreaterThan(0);
    const entries = (query: Record<string, string>, matches: (e: Entry) => boolean) => {
      const { transactions, pagination } = account.listTransactions(client.id, query);
      expect({ ids: transactions.map((t: { id: string }) => t.id), total: pagination.total }, JSON.stringify(query)).toEqual(
        scan(state.entries, (e) => e.clientId === client.id && matches(e)),
      );
    };
    entries({ entryType: 'cash_in' }, (e) => e.entryType === 'cash_in');
    entries({ entryType: 'debit,cash_in' }, (e) => ['debit', 'cash_in'].includes(e.entryType));
    entries({}, () => true);
  });
});

describe("a group's oldest ids leaving it", () => {
  it('leave without moving the others, and the group reads as if each had been taken out', () => {
    const lists = new Lists();
    const ids = Array.from({ length: 1_000 }, (_, i) => `id-${i}`);
    for (const id of ids) {
      lists.made(id);
      lists.add('g', id);
    }
    const expected = [...ids];
    const leave = (id: string) => {
      lists.remove('g', id);
      expected.splice(expected.indexOf(id), 1);
    };
    for (let i = 0; i < 300; i++) leave(ids[i]!); // the oldest first, as payments expire
    leave(ids[700]!);
    lists.add('g', ids[100]!); // back in the group, in its place among the others
    expected.unshift(ids[100]!);
    expect(lists.group('g')).toEqual(expected);
    for (let i = 301; i < 800; i++) if (i !== 700) leave(ids[i]!); // past half of what is left
    expect(lists.group('g')).toEqual(expected);
    expect(lists.sizeOf(['g'])).toBe(expected.length);
    for (const id of [...expected]) leave(id);
    expect(lists.group('g')).toEqual([]);
  });
});
