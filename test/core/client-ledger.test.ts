import { describe, expect, it } from 'vitest';
import { ClientLedger } from '../../src/core/clients/client-ledger.js';
import { cashInEntry, movementEntry } from '../../src/core/clients/ledger.js';
import { DueWork } from '../../src/core/clock/due-work.js';
import { Hubs } from '../../src/core/hubs/hubs.js';
import type { Entry } from '../../src/core/index.js';
import { CLIENT } from '../helpers.js';
import { codeOf, moduleContext } from './context.js';

/** The client ledger with what it needs: hubs (whose CVUs its clients' must not repeat) and due work (delayed CVUs). */
function ledgerModules(options: Parameters<typeof moduleContext>[0] = {}) {
  const context = moduleContext(options);
  const { ctx } = context;
  const nothing = () => false;
  const due = new DueWork(
    ctx,
    { expiry: nothing, idempotency: nothing, cvu: (id, at) => ledger.provisionDue(id, at) },
    () => null,
  );
  const hubs = new Hubs(ctx);
  const ledger: ClientLedger = new ClientLedger(ctx, hubs);
  return { ...context, due, hubs, ledger };
}

type Modules = ReturnType<typeof ledgerModules>;

/** A cash-in of `cents` net, as a matched transfer credits it: to the client's CVU, or through a VA payment. */
function cashIn({ ctx, ledger }: Modules, clientId: string, cents: number, paymentId: string | null = null): Entry {
  return ledger.addEntry(
    cashInEntry(ctx.uuid(), clientId, { amount: cents, operationId: `op_${cents}`, paymentId, now: ctx.now() }),
  );
}

describe('CVU provisioning by the hub’s cvuProvisioning', () => {
  it('inline: active in the create answer, with an alias from the hints (PREFIX.SUFFIX.BRAND), unique in the account', () => {
    const m = ledgerModules();
    const ana = m.ledger.createClient({
      ...CLIENT,
      name: 'Ana',
      taxId: '20-1',
      aliasPrefixHint: 'ana',
      aliasSuffixHint: 'pérez',
    });
    const twin = m.ledger.createClient({
      ...CLIENT,
      name: 'Ana',
      taxId: '20-2',
      aliasPrefixHint: 'ana',
      aliasSuffixHint: 'pérez',
    });
    expect(ana).toMatchObject({ cvuStatus: 'active', alias: 'ANA.PEREZ.SANDBOX', hubName: 'Sandbox Hub 1' });
    expect(twin.alias).not.toBe(ana.alias);
    expect([ana.cvu, twin.cvu].every((cvu) => /^\d{22}$/.test(cvu!) && m.hubs.isTaken(cvu!))).toBe(true);
    expect([m.hubs.holdersAt(ana.alias!.toLowerCase()), m.hubs.holdersAt(twin.cvu!)]).toMatchObject([
      [{ kind: 'client', client: { id: ana.id } }],
      [{ kind: 'client', client: { id: twin.id } }],
    ]);
  });

  it('delayed: provisioning with no CVU, active 5 clock seconds after the create and not a millisecond before', () => {
    const m = ledgerModules();
    m.hubs.patchHub('1', { cvuProvisioning: 'delayed' });
    const client = m.ledger.createClient({ ...CLIENT, name: 'Ana', taxId: '20-1' });
    expect(client).toMatchObject({ cvuStatus: 'provisioning', cvu: null, alias: null });
    m.clock.advance(4999);
    m.due.runDue();
    expect(m.ledger.getClient(client.id).cvuStatus).toBe('provisioning');
    m.clock.advance(1);
    m.due.runDue();
    const ready = m.ledger.getClient(client.id);
    expect(ready).toMatchObject({ cvuStatus: 'active', updatedAt: m.ctx.now() });
    expect(m.hubs.holdersAt(ready.cvu!)).toMatchObject([{ kind: 'client', client: { id: client.id } }]);
  });

  it('fail: provisioning_failed, for good, until the sandbox switch activates it; a delayed CVU switched on early is not made twice', () => {
    const m = ledgerModules();
    m.hubs.patchHub('1', { cvuProvisioning: 'fail' });
    const failed = m.ledger.createClient({ ...CLIENT, name: 'Ana', taxId: '20-1' });
    m.hubs.patchHub('1', { cvuProvisioning: 'delayed' });
    const delayed = m.ledger.createClient({ ...CLIENT, name: 'Bea', taxId: '20-2' });
    const early = m.ledger.setClientCvuStatus(delayed.id, { cvuStatus: 'active' });
    m.clock.advance(60_000);
    m.due.runDue();
    expect(m.ledger.getClient(failed.id)).toMatchObject({ cvuStatus: 'provisioning_failed', cvu: null });
    expect(m.ledger.getClient(delayed.id)).toEqual(early);
    expect(m.ledger.setClientCvuStatus(failed.id, { cvuStatus: 'active' })).toMatchObject({
      cvuStatus: 'active',
      cvu: expect.stringMatching(/^\d{22}$/),
    });
  });

  it('disabled and back: the CVU and alias are kept; a hub without dedicated client CVUs refuses clients', () => {
    const m = ledgerModules();
    const client = m.ledger.createClient({ ...CLIENT, name: 'Ana', taxId: '20-1' });
    const disabled = m.ledger.setClientCvuStatus(client.id, { cvuStatus: 'disabled' });
    expect([disabled.cvuStatus, disabled.cvu, disabled.alias]).toEqual(['disabled', client.cvu, client.alias]);
    expect(m.ledger.setClientCvuStatus(client.id, { cvuStatus: 'active' })).toMatchObject({
      cvuStatus: 'active',
      cvu: client.cvu,
    });
    m.hubs.patchHub('4', { dedicated_client_cvus_enabled: false });
    expect(codeOf(() => m.ledger.createClient({ ...CLIENT, paymentHubId: 4, name: 'Bea', taxId: '20-2' }))).toBe(
      'DEDICATED_CVUS_DISABLED',
    );
  });
});

describe('tax ids', () => {
  it('are kept as given, compared by their digits, unique in the account on create and on update', () => {
    const m = ledgerModules();
    const ana = m.ledger.createClient({ ...CLIENT, name: 'Ana', taxId: '20-12345678-3', externalReference: 'crm-1' });
    expect(codeOf(() => m.ledger.createClient({ ...CLIENT, name: 'Bea', taxId: '20123456783' }))).toBe(
      'TAX_ID_ALREADY_EXISTS',
    );
    const bea = m.ledger.createClient({ ...CLIENT, name: 'Bea', taxId: '27-1' });
    expect(codeOf(() => m.ledger.updateClient(bea.id, { taxId: '2012345678-3' }))).toBe('TAX_ID_ALREADY_EXISTS');
    expect(m.ledger.updateClient(ana.id, { taxId: '20123456783' }).taxId).toBe('20123456783'); // its own
    m.ledger.updateClient(ana.id, { taxId: '20-9' });
    expect(m.ledger.updateClient(bea.id, { taxId: '20-12345678-3' }).taxId).toBe('20-12345678-3'); // freed by Ana
    expect(m.ledger.listClients({ taxId: '209' }).data.map((c) => c.id)).toEqual([ana.id]);
    expect(m.ledger.listClients({ externalReference: 'crm-1' }).data.map((c) => c.id)).toEqual([ana.id]);
  });
});

describe('entries and their sourceType', () => {
  it('a cash-in to the client’s CVU is manual_deposit, one through a VA payment and a sandbox debit are other; newest first', () => {
    const m = ledgerModules();
    const { id } = m.ledger.createClient({ ...CLIENT, name: 'Ana', taxId: '20-1' });
    cashIn(m, id, 1000);
    m.clock.advance(1000);
    cashIn(m, id, 250, 'a3b5c7d9-0000-4000-8000-000000000001');
    m.clock.advance(1000);
    const debit = m.ledger.createDebit(id, { amount: 2.5, description: 'fee' });
    const { transactions, pagination } = m.ledger.listTransactions(id, {});
    expect(transactions.map((e) => [e.entryType, e.amount, e.sourceType, e.paymentId, e.tempLinkId])).toEqual([
      ['debit', -2.5, 'other', null, null],
      ['cash_in', 2.5, 'other', 'a3b5c7d9-0000-4000-8000-000000000001', null],
      ['cash_in', 10, 'manual_deposit', null, null],
    ]);
    expect([transactions[0], pagination.total]).toEqual([debit, 3]);
  });

  it('filters by entryType (comma-separated) and by a from/to range, inclusive', () => {
    const m = ledgerModules();
    const { id } = m.ledger.createClient({ ...CLIENT, name: 'Ana', taxId: '20-1' });
    const times = [1, 2, 3, 4].map((n) => {
      m.clock.advance(1000);
      if (n % 2) cashIn(m, id, n * 100);
      else m.ledger.createDebit(id, { amount: n });
      return m.ctx.now();
    });
    const amounts = (query: Record<string, string>) =>
      m.ledger.listTransactions(id, query).transactions.map((e) => e.amount);
    expect(amounts({ entryType: 'debit' })).toEqual([-4, -2]);
    expect(amounts({ entryType: 'cash_in,debit', from: times[1]!, to: times[2]! })).toEqual([3, -2]);
    expect(amounts({ entryType: 'credit' })).toEqual([]);
    expect(amounts({ limit: '1', page: '4' })).toEqual([1]);
  });

  it('entries written by an earlier release with the old sourceType values read as the real ones', () => {
    const m = ledgerModules();
    const { id } = m.ledger.createClient({ ...CLIENT, name: 'Ana', taxId: '20-1' });
    for (const sourceType of ['transfer', 'va_payment', 'sandbox'] as const) {
      const entry = cashInEntry(m.ctx.uuid(), id, { amount: 1, operationId: 'op', paymentId: null, now: m.ctx.now() });
      m.ledger.addEntry({ ...entry, sourceType });
    }
    expect(m.ledger.listTransactions(id, { limit: '3' }).transactions.map((e) => e.sourceType)).toEqual([
      'other',
      'other',
      'manual_deposit',
    ]);
  });
});

describe('balance: spec 2.4 over every entry and every invoice, exact to the cent', () => {
  it('totalCashIn − totalCashOut − totalInvoiced, whatever the invoices’ status, other clients apart', () => {
    const m = ledgerModules();
    const ana = m.ledger.createClient({ ...CLIENT, name: 'Ana', taxId: '20-1' });
    const bea = m.ledger.createClient({ ...CLIENT, name: 'Bea', taxId: '20-2' });
    for (const cents of [10, 20, 1]) cashIn(m, ana.id, cents);
    cashIn(m, bea.id, 99_999);
    m.ledger.createDebit(ana.id, { amount: 0.05 });
    m.ledger.createInvoice(ana.id, { total_amount: 0.02 });
    const cancelled = m.ledger.createInvoice(ana.id, { total_amount: 0.03 });
    m.ledger.updateInvoice(ana.id, cancelled.id, { paymentStatus: 'cancelled' });
    m.ledger.createInvoice(bea.id, { total_amount: 7 });
    expect(m.ledger.clientBalance(ana.id)).toEqual({
      clientId: ana.id,
      currency: 'ARS',
      totalCashIn: 0.31,
      totalCashOut: 0.05,
      totalInvoiced: 0.05,
      balance: 0.21,
    });
    m.ledger.createDebit(ana.id, { amount: 999_999_999.99 });
    expect(m.ledger.clientBalance(ana.id)).toMatchObject({ totalCashOut: 1_000_000_000.04, balance: -999_999_999.78 });
    expect(m.ledger.clientBalance(bea.id)).toMatchObject({
      totalCashIn: 999.99,
      totalCashOut: 0,
      totalInvoiced: 7,
      balance: 992.99,
    });
  });

  it('an entry of another type (an import may bring them) counts by its sign: a negative one is cash out, a positive one is in neither total', () => {
    const m = ledgerModules();
    const { id } = m.ledger.createClient({ ...CLIENT, name: 'Ana', taxId: '20-1' });
    const debit = movementEntry(m.ctx.uuid(), id, { amount: 3 }, m.ctx.now());
    m.ledger.addEntry({ ...debit, entryType: 'reversal' });
    m.ledger.addEntry({ ...debit, id: m.ctx.uuid(), entryType: 'credit', amount: 500 });
    cashIn(m, id, 100);
    expect(m.ledger.clientBalance(id)).toMatchObject({
      totalCashIn: 1,
      totalCashOut: 0.03,
      totalInvoiced: 0,
      balance: 0.97,
    });
  });
});

describe('invoices', () => {
  it('are pending by default, patched field by field (null clears), listed newest first, and a client’s own only', () => {
    const m = ledgerModules();
    const ana = m.ledger.createClient({ ...CLIENT, name: 'Ana', taxId: '20-1' });
    const bea = m.ledger.createClient({ ...CLIENT, name: 'Bea', taxId: '20-2' });
    const first = m.ledger.createInvoice(ana.id, { total_amount: 10, observations: 'March', dueAt: '2026-12-01' });
    expect(first).toMatchObject({
      paymentStatus: 'pending',
      buyerName: 'Ana',
      buyerTaxId: '20-1',
      dueAt: '2026-12-01T00:00:00.000Z',
    });
    m.clock.advance(1000);
    const patched = m.ledger.updateInvoice(ana.id, first.id, { observations: null, totalAmount: 12.5 });
    expect(patched).toEqual({
      ...first,
      observations: null,
      totalAmount: 12.5,
      total_amount: 12.5,
      updatedAt: m.ctx.now(),
    });
    const second = m.ledger.createInvoice(ana.id, { total_amount: 1 });
    expect(m.ledger.listInvoices(ana.id, {}).data).toEqual([second, patched]);
    expect(m.ledger.clientBalance(ana.id).totalInvoiced).toBe(13.5);
    expect(codeOf(() => m.ledger.updateInvoice(bea.id, first.id, { paymentStatus: 'cancelled' }))).toBe('NOT_FOUND');
    expect(m.ledger.listInvoices(bea.id, {}).pagination.total).toBe(0);
  });
});
