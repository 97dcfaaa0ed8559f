import { describe, expect, it } from 'vitest';
import { type Client, clients, type Entry, type Invoice, ledger } from '../../src/core/index.js';

describe('CUIT', () => {
  it('checks the digit with weights 5,4,3,2,7,6,5,4,3,2 mod 11, hyphens or not', () => {
    expect(clients.isValidCuit('20-12345678-6')).toBe(true);
    expect(clients.isValidCuit('20123456786')).toBe(true);
    expect(clients.isValidCuit('30-71234567-1')).toBe(true);
    expect(clients.isValidCuit('20-12345678-3')).toBe(false);
    expect(clients.isValidCuit('2012345678')).toBe(false);
    expect(clients.isValidCuit('201234567860')).toBe(false);
  });

  it('a sum whose remainder is 0 gives check digit 0; a remainder of 1 (check 10) is never valid', () => {
    // 20-00000001-? sums 10 + 2 = 12, remainder 1: no digit can match.
    for (let d = 0; d <= 9; d++) expect(clients.isValidCuit(`20-00000001-${d}`)).toBe(false);
    // 20-00000005-? sums 10 + 10 = 20, remainder 9: check 2.
    expect(clients.isValidCuit('20-00000005-2')).toBe(true);
    // 00-00000000-? sums 0, remainder 0: 11 - 0 reads as check digit 0.
    expect(clients.isValidCuit('00-00000000-0')).toBe(true);
  });

  it('compares tax ids by their digits', () => {
    expect(clients.taxIdDigits('20-12345678-3')).toBe(clients.taxIdDigits('20123456783'));
  });
});

describe('aliasBase', () => {
  const client = (aliasPrefixHint: string | null, aliasSuffixHint: string | null) =>
    ({ aliasPrefixHint, aliasSuffixHint }) as Client;

  it('is PREFIX.SUFFIX.BRAND in upper case, with the parts that are given, and undefined without hints', () => {
    expect(clients.aliasBase(client('ana', 'perez'), 'sandbox')).toBe('ANA.PEREZ.SANDBOX');
    expect(clients.aliasBase(client(null, 'perez'), 'SANDBOX')).toBe('PEREZ.SANDBOX');
    expect(clients.aliasBase(client('José Ñ.', null), 'SANDBOX')).toBe('JOSEN.SANDBOX');
    expect(clients.aliasBase(client(null, null), 'SANDBOX')).toBeUndefined();
    expect(clients.aliasBase(client('¡¿', ''), 'SANDBOX')).toBeUndefined();
  });
});

describe('balance', () => {
  const entry = (entryType: Entry['entryType'], amount: number) => ({ entryType, amount }) as Entry;
  const invoice = (totalAmount: number, paymentStatus: Invoice['paymentStatus']) =>
    ({ totalAmount, paymentStatus }) as Invoice;

  it('is spec 2.4 in cents: cash-ins minus the absolute debits minus every invoice', () => {
    const result = ledger.balance(
      [entry('cash_in', 10), entry('cash_in', 20), entry('debit', -5)],
      [invoice(10, 'pending'), invoice(3, 'cancelled')],
    );
    expect(result).toEqual({ totalCashIn: 30, totalCashOut: 5, totalInvoiced: 13, balance: 12, allocated: 0 });
  });
});
