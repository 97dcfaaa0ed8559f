import { describe, expect, it } from 'vitest';
import { type AccountState, type Client, type LegacyInvoice, normalizeAccount } from '../../src/core/records/state.js';

const CLIENT = { id: 'c1', name: 'Acme SA', taxId: '30-12345678-9' } as Client;

const legacy = (id: string, createdAt: string, fields: Partial<LegacyInvoice> = {}): LegacyInvoice => ({
  id,
  clientId: 'c1',
  total_amount: 1000,
  currency: 'ARS',
  description: null,
  dueDate: null,
  status: 'issued',
  externalReference: null,
  createdAt,
  updatedAt: createdAt,
  ...fields,
});

describe('normalizeAccount: invoices stored by the release before 0.2', () => {
  it('read as invoices of today, numbered in the order they were made, their status, texts and due date kept', () => {
    const account = {
      clients: { c1: CLIENT },
      invoices: {
        b: legacy('b', '2026-03-02T00:00:00.000Z', {
          status: 'paid',
          description: 'April',
          externalReference: 'inv-9',
          dueDate: '2026-04-30',
        }),
        a: legacy('a', '2026-03-01T00:00:00.000Z', { status: 'cancelled' }),
      },
    } as unknown as AccountState;
    const { invoices } = normalizeAccount(account);
    expect(invoices.a).toMatchObject({
      invoiceNumber: '0001-00000001',
      paymentStatus: 'cancelled',
      allocated: 0,
      totalAmount: 1000,
    });
    expect(invoices.b).toEqual({
      id: 'b',
      clientId: 'c1',
      invoiceNumber: '0001-00000002',
      invoiceType: 'B',
      sellerTaxId: null,
      sellerName: null,
      buyerTaxId: '30-12345678-9',
      buyerName: 'Acme SA',
      subtotalNet: null,
      vatAmount: null,
      otherTaxes: null,
      totalAmount: 1000,
      // Paid by hand before allocations existed: covered whole.
      allocated: 1000,
      currency: 'ARS',
      issuedAt: '2026-03-02T00:00:00.000Z',
      dueAt: '2026-04-30T00:00:00.000Z',
      paymentStatus: 'paid',
      paymentTerms: null,
      observations: 'April · externalReference inv-9',
      createdAt: '2026-03-02T00:00:00.000Z',
      updatedAt: '2026-03-02T00:00:00.000Z',
    });
    // Reading it again changes nothing.
    expect(normalizeAccount(structuredClone(account)).invoices).toEqual(invoices);
  });

  it('number after the type B invoices the account has already', () => {
    const account = {
      clients: { c1: CLIENT },
      invoices: { a: legacy('a', '2026-03-01T00:00:00.000Z') },
    } as unknown as AccountState;
    const today = normalizeAccount(structuredClone(account)).invoices.a!;
    account.invoices = {
      a: { ...today, id: 'a', invoiceNumber: '0001-00000007' },
      z: legacy('z', '2026-01-01T00:00:00.000Z') as never,
    };
    expect(normalizeAccount(account).invoices.z!.invoiceNumber).toBe('0001-00000008');
  });
});
