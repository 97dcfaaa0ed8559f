import { describe, expect, it } from 'vitest';
import { CLIENT, PAYMENT } from '../helpers.js';
import { accountModules, codeOf } from './context.js';

type Modules = ReturnType<typeof accountModules>;

/** The event types a transfer raised, in order, as the list of events shows them. */
function eventTypes({ events }: Modules, transfer: { eventIds: string[] }): string[] {
  const all = events.listEvents({ limit: '100' }).data;
  return transfer.eventIds.map((id) => all.find((event) => event.id === id)!.eventType);
}

describe('matching a transfer to a hub’s collection CVU', () => {
  it('credits the active amount-locked payment of that hub waiting for exactly the gross total; any other total is returned', () => {
    const m = accountModules();
    const ten = m.payments.createVaPayment({ ...PAYMENT, lockMode: 'amount', amount: 10 });
    const other = m.payments.createVaPayment({ ...PAYMENT, paymentHubId: 4, lockMode: 'amount', amount: 10.5 });
    const hub = m.hubs.hubFor(1);
    const missed = m.transfers.createTransfer({ to: hub.collectionAlias.toLowerCase(), total: 10.5 });
    expect(missed).toMatchObject({
      outcome: 'returned',
      reason: 'no active amount-locked VA payment waits for 10.5 ARS',
      target: null,
      eventIds: [],
      cvu: hub.collectionCvu,
    });
    const taxed = m.transfers.createTransfer({ to: hub.collectionCvu, total: 10, taxes: 0.3 });
    expect(taxed).toMatchObject({
      outcome: 'credited',
      reason: null,
      target: { type: 'va_payment', id: ten.id },
      netAmount: 9.7,
    });
    expect(m.transfers.createTransfer({ to: hub.collectionAlias, total: 10 })).toMatchObject({ outcome: 'returned' }); // its lock ended with it
    expect(m.payments.getVaPayment(ten.id)).toMatchObject({
      status: 'completed',
      totalReceived: 10,
      receivedAmount: 9.7,
    });
    expect(m.payments.getVaPayment(other.id)).toMatchObject({ status: 'waiting', totalReceived: 0 });
  });
});

describe('matching a transfer to a pool CVU', () => {
  it('a time-locked payment takes any total at its CVU or alias (any case); amount_and_time only its amount', () => {
    const m = accountModules();
    const time = m.payments.createVaPayment({ ...PAYMENT, amount: 100 });
    const both = m.payments.createVaPayment({ ...PAYMENT, lockMode: 'amount_and_time', amount: 100 });
    expect(m.transfers.createTransfer({ to: time.alias.toLowerCase(), total: 1 })).toMatchObject({
      outcome: 'credited',
      cvu: time.cvu,
      target: { id: time.id },
    });
    expect(m.transfers.createTransfer({ to: both.cvu, total: 99.99 })).toMatchObject({
      outcome: 'returned',
      reason: `total 99.99 does not match the locked amount 100 of VA payment ${both.id}`,
    });
    expect(m.payments.getVaPayment(both.id)).toMatchObject({ status: 'waiting', totalReceived: 0, cashIns: [] }); // a returned transfer changes no payment
    expect(m.transfers.createTransfer({ to: both.alias, total: 100 })).toMatchObject({
      outcome: 'credited',
      target: { id: both.id },
    });
  });

  it('the CVU of a payment that ended is returned to the payer until it is lent again', () => {
    const m = accountModules();
    const ended = m.payments.createVaPayment({ ...PAYMENT });
    m.payments.cancelVaPayment(ended.id);
    expect(m.transfers.createTransfer({ to: ended.cvu, total: 5 })).toMatchObject({
      outcome: 'returned',
      reason: 'no active VA payment holds this CVU',
    });
    const next = m.payments.createVaPayment({ ...PAYMENT });
    expect(next.cvu).toBe(ended.cvu);
    expect(m.transfers.createTransfer({ to: ended.alias, total: 5 })).toMatchObject({
      outcome: 'credited',
      target: { id: next.id },
    });
  });

  it('a CVU or alias nothing in the account has is NOT_FOUND, and no transfer is kept', () => {
    const m = accountModules();
    m.payments.createVaPayment({ ...PAYMENT });
    expect(codeOf(() => m.transfers.createTransfer({ to: '0000003100000000000001', total: 5 }))).toBe('NOT_FOUND');
    expect(codeOf(() => m.transfers.createTransfer({ to: 'NOBODY.HERE', total: 5 }))).toBe('NOT_FOUND');
    expect(m.transfers.listTransfers({}).pagination.total).toBe(0);
  });
});

describe('matching a transfer to a client’s CVU', () => {
  it('an active CVU is credited: a cash_in entry of the net amount (manual_deposit) and one client.cashin event', () => {
    const m = accountModules();
    const client = m.ledger.createClient({
      ...CLIENT,
      name: 'Ana',
      taxId: '20-12345678-3',
      cashinCallbackUrl: 'http://127.0.0.1:9/cashin',
    });
    const transfer = m.transfers.createTransfer({ to: client.alias!.toLowerCase(), total: 100.1, taxes: 0.2 });
    expect(transfer).toMatchObject({
      outcome: 'credited',
      cvu: client.cvu,
      target: { type: 'client', id: client.id },
      netAmount: 99.9,
    });
    expect(eventTypes(m, transfer)).toEqual(['client.cashin']);
    expect(m.ledger.listTransactions(client.id, {}).transactions).toEqual([
      expect.objectContaining({
        entryType: 'cash_in',
        amount: 99.9,
        sourceType: 'manual_deposit',
        paymentId: null,
        operationId: transfer.operationId,
      }),
    ]);
  });

  it('a CVU not active (still provisioning, or disabled) is returned with why: no entry, no event', () => {
    const m = accountModules();
    m.hubs.patchHub('1', { cvuProvisioning: 'delayed' });
    const client = m.ledger.createClient({
      ...CLIENT,
      name: 'Ana',
      taxId: '20-1',
      cashinCallbackUrl: 'http://127.0.0.1:9/cashin',
    });
    m.clock.advance(5000);
    m.due.runDue();
    m.ledger.setClientCvuStatus(client.id, { cvuStatus: 'disabled' });
    const { cvu } = m.ledger.getClient(client.id);
    const transfer = m.transfers.createTransfer({ to: cvu!, total: 10 });
    expect(transfer).toMatchObject({
      outcome: 'returned',
      reason: `the CVU of client ${client.id} is disabled`,
      target: null,
      eventIds: [],
    });
    expect([
      m.ledger.listTransactions(client.id, {}).pagination.total,
      m.events.listEvents({}).pagination.total,
    ]).toEqual([0, 0]);
  });

  it('a transfer credited to a VA payment whose clientId is the client’s is a cash_in entry of it too, with paymentId (sourceType other)', () => {
    const m = accountModules();
    const client = m.ledger.createClient({ ...CLIENT, name: 'Ana', taxId: '20-1' });
    const named = m.payments.createVaPayment({ ...PAYMENT, amount: 50, clientId: client.id.toUpperCase() });
    const byTaxId = m.payments.createVaPayment({ ...PAYMENT, amount: 50, clientTaxId: '20-1' }); // names a client, but by tax id: no entry
    const transfer = m.transfers.createTransfer({ to: named.cvu, total: 50, taxes: 1.5 });
    m.transfers.createTransfer({ to: byTaxId.cvu, total: 50 });
    expect(m.ledger.listTransactions(client.id, {}).transactions).toEqual([
      expect.objectContaining({
        entryType: 'cash_in',
        amount: 48.5,
        sourceType: 'other',
        paymentId: named.id,
        operationId: transfer.operationId,
      }),
    ]);
  });
});

describe('under, exact and over: G is the sum of credited gross totals', () => {
  it('each credited transfer raises cash_in_received then exactly one of underpaid, succeeded, overpaid', () => {
    const m = accountModules();
    const pay = (amount: number, totals: number[]) => {
      const payment = m.payments.createVaPayment({ ...PAYMENT, amount });
      return totals.map((total) => {
        const transfer = m.transfers.createTransfer({ to: payment.cvu, total, taxes: 0.01 });
        return [m.payments.getVaPayment(payment.id).status, eventTypes(m, transfer)];
      });
    };
    expect(pay(0.3, [0.1, 0.2])).toEqual([
      ['underpaid', ['cash_in_received', 'underpaid']],
      ['completed', ['cash_in_received', 'succeeded']],
    ]);
    expect(pay(1, [0.6, 0.6])).toEqual([
      ['underpaid', ['cash_in_received', 'underpaid']],
      ['overpaid', ['cash_in_received', 'overpaid']],
    ]);
    expect(pay(1, [1.01])).toEqual([['overpaid', ['cash_in_received', 'overpaid']]]);
  });

  it('totalReceived is G, receivedAmount the net sum and remainingAmount max(amount − G, 0), exact to the cent', () => {
    const m = accountModules();
    const payment = m.payments.createVaPayment({ ...PAYMENT, amount: 0.3 });
    m.transfers.createTransfer({ to: payment.cvu, total: 0.1, taxes: 0.01 });
    expect(m.payments.getVaPayment(payment.id)).toMatchObject({
      totalReceived: 0.1,
      receivedAmount: 0.09,
      remainingAmount: 0.2,
    });
    const last = m.transfers.createTransfer({ to: payment.cvu, total: 0.2 });
    expect(m.payments.getVaPayment(payment.id)).toMatchObject({
      totalReceived: 0.3,
      receivedAmount: 0.29,
      remainingAmount: 0,
      completedAt: last.createdAt,
    });
    expect(
      m.payments
        .getVaPayment(payment.id)
        .cashIns.map((c) => [c.total, c.taxes, c.incomingAmount, c.totalWithoutTaxes, c.transferId]),
    ).toEqual([
      [0.1, 0.01, 0.09, 0.09, expect.any(String)],
      [0.2, 0, 0.2, 0.2, last.id],
    ]);
  });

  it('transfers are listed newest first, each with its netAmount', () => {
    const m = accountModules();
    const payment = m.payments.createVaPayment({ ...PAYMENT });
    const made = [3, 2, 1].map((total) => m.transfers.createTransfer({ to: payment.alias, total, taxes: 0.5 }));
    expect(m.transfers.listTransfers({ limit: '2' })).toMatchObject({
      data: [made[2], made[1]],
      pagination: { total: 3, totalPages: 2 },
    });
    expect(made.map((t) => t.netAmount)).toEqual([2.5, 1.5, 0.5]);
  });
});

describe('finding a transfer’s target (issue 47)', () => {
  it('looks over every holder at once: a CVU held twice (as a client’s alias and a hub’s CVU) is returned naming both, never credited to whichever a lookup order finds first', () => {
    const m = accountModules();
    const locked = m.payments.createVaPayment({ ...PAYMENT, lockMode: 'amount', amount: 10 });
    const hub = m.hubs.hubFor(1);
    const client = m.ledger.createClient({ ...CLIENT, name: 'Ana', taxId: '20-1' });
    // What a file let in before the import held CVUs and aliases as one namespace.
    m.ctx.put('clients', client.id, { ...m.ctx.get('clients', client.id)!, alias: hub.collectionCvu });
    expect(m.transfers.createTransfer({ to: hub.collectionCvu, total: 10 })).toMatchObject({
      outcome: 'returned',
      reason: `${hub.collectionCvu} has more than one holder (hub 1, client ${client.id})`,
      target: null,
    });
    expect(m.payments.getVaPayment(locked.id)).toMatchObject({ status: 'waiting', totalReceived: 0 });
    expect(m.ledger.clientBalance(client.id)).toMatchObject({ totalCashIn: 0 });
  });
});
