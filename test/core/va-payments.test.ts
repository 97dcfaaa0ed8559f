import { describe, expect, it } from 'vitest';
import { type VaPayment, vaPayment } from '../../src/core/index.js';
import { PAYMENT } from '../helpers.js';
import { accountModules, codeOf } from './context.js';

type Modules = ReturnType<typeof accountModules>;

/** Credits a transfer of `total` (gross) and `taxes` to a payment, as a matched transfer does. */
function credit({ ctx, payments }: Modules, id: string, total: number, taxes = 0): VaPayment {
  const payment = ctx.get('vaPayments', id)!;
  const cashIn = {
    operationId: `op_${total}`,
    transferId: `t_${total}`,
    total,
    taxes,
    incomingAmount: total - taxes,
    receivedAt: ctx.now(),
  };
  return payments.apply(vaPayment.creditTransfer(payment, cashIn, ctx.now())).payment;
}

describe('lock modes', () => {
  it('amount shares its hub’s collection CVU; time and amount_and_time each get a pool CVU of their own', () => {
    const m = accountModules();
    const hub = m.hubs.hubFor(1);
    const amount = m.payments.createVaPayment({ ...PAYMENT, lockMode: 'amount', amount: 10 });
    const time = m.payments.createVaPayment({ ...PAYMENT });
    const both = m.payments.createVaPayment({ ...PAYMENT, lockMode: 'amount_and_time', amount: 10 });
    expect([amount.cvu, amount.alias]).toEqual([hub.collectionCvu, hub.collectionAlias]);
    expect(new Set([hub.collectionCvu, time.cvu, both.cvu]).size).toBe(3);
    expect([m.hubs.holdersAt(time.alias.toLowerCase())[0]?.cvu, m.hubs.holdersAt(both.cvu)[0]?.cvu]).toEqual([
      time.cvu,
      both.cvu,
    ]);
    expect([time.amount, time.paymentInstructions.amount, time.remainingAmount]).toEqual([null, null, 0]);
  });

  it('a pool CVU is held until its payment ends, then lent again, released longest ago first', () => {
    const m = accountModules();
    const [a, b, c] = [1, 2, 3].map(() => m.payments.createVaPayment({ ...PAYMENT }));
    m.clock.advance(1000);
    m.payments.cancelVaPayment(b!.id);
    m.clock.advance(1000);
    credit(m, a!.id, 5); // an open amount: completed by its first transfer, so the CVU is free again
    expect(m.ctx.get('vaPayments', a!.id)!.status).toBe('completed');
    const next = [1, 2, 3].map(
      () => m.payments.createVaPayment({ ...PAYMENT, lockMode: 'amount_and_time', amount: 7 }).cvu,
    );
    expect(next.slice(0, 2)).toEqual([b!.cvu, a!.cvu]);
    expect([a!.cvu, b!.cvu, c!.cvu]).not.toContain(next[2]); // c still holds its own
  });

  it('an underpaid payment keeps its CVU; completed and overpaid are terminal and release their CVU or amount lock', () => {
    const m = accountModules();
    const under = m.payments.createVaPayment({ ...PAYMENT, amount: 100 });
    const holder = () => m.ctx.get('pool', under.cvu)!.vaPaymentId;
    expect([credit(m, under.id, 4000).status, holder()]).toEqual(['underpaid', under.id]); // cents
    expect([credit(m, under.id, 6001).status, holder()]).toEqual(['overpaid', null]);
    // An amount lock takes only its exact amount (see transfers), so it is only ever completed.
    const exact = m.payments.createVaPayment({ ...PAYMENT, lockMode: 'amount', amount: 100 });
    expect(credit(m, exact.id, 10_000)).toMatchObject({ status: 'completed', totalReceived: 10_000 });
    expect(m.payments.lockedBy(1, 10_000)).toBeUndefined();
    expect(codeOf(() => m.payments.cancelVaPayment(exact.id))).toBe('INVALID_STATE');
  });
});

describe('amount locks per hub', () => {
  it('a second active amount-locked payment of a hub for the same amount is AMOUNT_LOCK_CONFLICT; other hubs and amounts are free', () => {
    const m = accountModules();
    const first = m.payments.createVaPayment({ ...PAYMENT, lockMode: 'amount', amount: 12.34 });
    expect(codeOf(() => m.payments.createVaPayment({ ...PAYMENT, lockMode: 'amount', amount: 12.34 }))).toBe(
      'AMOUNT_LOCK_CONFLICT',
    );
    const elsewhere = m.payments.createVaPayment({ ...PAYMENT, paymentHubId: 4, lockMode: 'amount', amount: 12.34 });
    m.payments.createVaPayment({ ...PAYMENT, lockMode: 'amount', amount: 12.35 });
    // amount_and_time has a CVU of its own: it takes no amount lock and meets none.
    m.payments.createVaPayment({ ...PAYMENT, lockMode: 'amount_and_time', amount: 12.34 });
    expect([m.payments.lockedBy(1, 1234)?.id, m.payments.lockedBy(4, 1234)?.id]).toEqual([first.id, elsewhere.id]);
    expect(elsewhere.cvu).toBe(m.hubs.hubFor(4).collectionCvu);
  });

  it('the lock goes with the payment: once it is cancelled or expired the amount can be locked again', () => {
    const m = accountModules();
    const cancelled = m.payments.createVaPayment({ ...PAYMENT, lockMode: 'amount', amount: 50 });
    m.payments.cancelVaPayment(cancelled.id);
    const expiring = m.payments.createVaPayment({ ...PAYMENT, lockMode: 'amount', amount: 50, ttlSeconds: 60 });
    m.clock.advance(60_000);
    m.due.runDue();
    const again = m.payments.createVaPayment({ ...PAYMENT, lockMode: 'amount', amount: 50 });
    expect([m.payments.getVaPayment(expiring.id).status, m.payments.lockedBy(1, 5000)?.id]).toEqual([
      'expired',
      again.id,
    ]);
  });
});

/** Payments whose listed fields change out of the order they were made, some made in the same instant. */
function busyPayments() {
  const m = accountModules();
  const made = Array.from({ length: 40 }, (_, i) => {
    if (i % 6 === 0) m.clock.advance(60_000);
    return m.payments.createVaPayment({
      ...PAYMENT,
      amount: 10 + i,
      ttlSeconds: i % 5 === 0 ? 600 : 28_800,
      clientTaxId: i % 3 === 0 ? '20-12345678-3' : '27111111114',
      externalReference: `order-${i % 4}`,
      ...(i % 7 === 0 ? { clientId: '0F4E2A1C-1111-4222-8333-444455556666' } : {}),
    }).id;
  });
  for (const i of [31, 4, 18]) m.payments.cancelVaPayment(made[i]!);
  for (const [i, total] of [
    [22, 500],
    [7, 1700],
    [36, 5000],
    [1, 1100],
  ] as const)
    credit(m, made[i]!, total);
  m.clock.advance(3600_000);
  m.due.runDue(); // the short-lived ones expire
  return { m, made };
}

/** What a list answers, the plain way: every payment newest first, filtered, one page. */
function scan(payments: Record<string, VaPayment>, matches: (p: VaPayment) => boolean, page = 1, limit = 20) {
  const all = Object.values(payments).reverse().filter(matches);
  return { ids: all.slice((page - 1) * limit, page * limit).map((p) => p.id), total: all.length };
}

const listed = ({ data, pagination }: { data: { id: string }[]; pagination: { total: number } }) => ({
  ids: data.map((p) => p.id),
  total: pagination.total,
});

describe('lists by status, clientId, clientTaxId, externalReference and created range', () => {
  const { m, made } = busyPayments();
  const payments = m.store.read(m.ctx.key)!.vaPayments;
  const middle = payments[made[20]!]!.createdAt;
  const cases: [Record<string, string>, (p: VaPayment) => boolean][] = [
    [{}, () => true],
    [{ status: 'waiting', limit: '7', page: '2' }, (p) => p.status === 'waiting'],
    [{ status: 'expired,underpaid,overpaid' }, (p) => ['expired', 'underpaid', 'overpaid'].includes(p.status)],
    [{ status: 'completed' }, (p) => p.status === 'completed'],
    [{ clientTaxId: '20-12345678-3' }, (p) => p.clientTaxId === '20-12345678-3'],
    [{ clientTaxId: '20123456783' }, () => false], // kept as given: a list matches it as given
    [
      { clientId: '0f4e2a1c-1111-4222-8333-444455556666', status: 'cancelled,waiting' },
      (p) => p.clientId !== null && ['cancelled', 'waiting'].includes(p.status),
    ],
    [{ externalReference: 'order-2' }, (p) => p.externalReference === 'order-2'],
    [
      { externalReference: 'order-1', clientTaxId: '27111111114', createdTo: middle },
      (p) => p.externalReference === 'order-1' && p.clientTaxId === '27111111114' && p.createdAt <= middle,
    ],
    [{ createdFrom: middle, limit: '5', page: '3' }, (p) => p.createdAt >= middle],
  ];

  it.each(cases.map(([query, matches]) => [JSON.stringify(query), query, matches] as const))(
    '%s answers as a scan of every payment would, newest first',
    (_, query, matches) => {
      const expected = scan(payments, matches, Number(query.page ?? 1), Number(query.limit ?? 20));
      expect(listed(m.payments.listVaPayments(query))).toEqual(expected);
      expect(expected.total > 0).toBe(query.clientTaxId !== '20123456783');
    },
  );

  it('the account covers every status the lists are asked for', () => {
    expect(new Set(Object.values(payments).map((p) => p.status))).toEqual(
      new Set(['waiting', 'underpaid', 'completed', 'overpaid', 'expired', 'cancelled']),
    );
  });
});

describe('expiry at the instant', () => {
  it('expiresAt is createdAt + ttlSeconds; a waiting or underpaid payment expires when the clock reaches it, not a millisecond before', () => {
    const m = accountModules();
    const waiting = m.payments.createVaPayment({ ...PAYMENT, lockMode: 'amount', amount: 30, ttlSeconds: 90 });
    const underpaid = m.payments.createVaPayment({ ...PAYMENT, amount: 30, ttlSeconds: 90 });
    credit(m, underpaid.id, 10);
    expect(Date.parse(waiting.expiresAt) - Date.parse(waiting.createdAt)).toBe(90_000);
    m.clock.advance(89_999);
    expect([m.due.runDue(), m.payments.getVaPayment(waiting.id).status]).toEqual([false, 'waiting']);
    m.clock.advance(1);
    expect(m.due.runDue()).toBe(true);
    for (const id of [waiting.id, underpaid.id]) {
      expect(m.payments.getVaPayment(id)).toMatchObject({
        status: 'expired',
        expiredAt: waiting.expiresAt,
        updatedAt: waiting.expiresAt,
        callbackDelivery: { lastEventType: 'failed' },
      });
    }
    expect(m.payments.lockedBy(1, 3000)).toBeUndefined();
    expect(m.ctx.get('pool', underpaid.cvu)!.vaPaymentId).toBeNull();
  });

  it('read late, a payment expired at its instant all the same; one that ended first is left as it ended', () => {
    const m = accountModules();
    const late = m.payments.createVaPayment({ ...PAYMENT, ttlSeconds: 10 });
    const cancelled = m.payments.createVaPayment({ ...PAYMENT, ttlSeconds: 10 });
    m.payments.cancelVaPayment(cancelled.id);
    m.clock.advance(3600_000);
    m.due.runDue();
    expect(m.payments.getVaPayment(late.id)).toMatchObject({ status: 'expired', expiredAt: late.expiresAt });
    expect(m.payments.getVaPayment(cancelled.id)).toMatchObject({
      status: 'cancelled',
      expiredAt: null,
      callbackDelivery: { events: 2 },
    });
  });
});

describe('get and cancel', () => {
  it('cancel answers the payment as get does; only waiting or underpaid can be cancelled; unknown or malformed ids are NOT_FOUND', () => {
    const m = accountModules();
    const payment = m.payments.createVaPayment({ ...PAYMENT, amount: 5 });
    m.clock.advance(1000);
    const cancelled = m.payments.cancelVaPayment(payment.id);
    expect(cancelled).toEqual(m.payments.getVaPayment(payment.id));
    expect(cancelled).toMatchObject({ status: 'cancelled', cancelledAt: m.ctx.now(), createdAt: payment.createdAt });
    expect(codeOf(() => m.payments.cancelVaPayment(payment.id))).toBe('INVALID_STATE');
    expect(codeOf(() => m.payments.getVaPayment('not-a-uuid'))).toBe('NOT_FOUND');
    expect(codeOf(() => m.payments.getVaPayment('00000000-0000-4000-8000-000000000000'))).toBe('NOT_FOUND');
  });
});

describe('a restart', () => {
  it('lends pool CVUs released in the same instant again in the same order as before it (read again from the records)', async () => {
    const m = accountModules();
    const made = Array.from({ length: 6 }, () => m.payments.createVaPayment({ ...PAYMENT }));
    m.clock.advance(1000);
    for (const { id } of [...made].sort((a, b) => b.cvu.localeCompare(a.cvu))) m.payments.cancelVaPayment(id); // highest CVU first
    await m.store.save();
    const restarted = accountModules({ state: m.store.read(m.ctx.key), seed: 9 });
    await restarted.stored;
    const lend = ({ payments }: Modules) => made.map(() => payments.createVaPayment({ ...PAYMENT }).cvu);
    expect(lend(restarted)).toEqual(lend(m));
  });
});
