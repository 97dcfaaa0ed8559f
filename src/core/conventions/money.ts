import { z } from 'zod';

/** Money travels as a JSON number of ARS and lives as integer cents, so sums are exact. */
export type Cents = number;

export const MAX_CENTS = 99_999_999_999;

const TWO_DECIMALS = /^\d+(\.\d{1,2})?$/;

/** Cents of a JSON number with at most 2 decimals, or null when it has more (or is not plain). */
export function toCents(amount: number): Cents | null {
  // String(n) is the shortest text that round-trips, so 0.1 reads "0.1" and 0.1 + 0.2 does not pass.
  const text = String(Math.abs(amount));
  if (!Number.isFinite(amount) || !TWO_DECIMALS.test(text)) return null;
  const [units = '0', decimals = ''] = text.split('.');
  const cents = Number(units) * 100 + Number(decimals.padEnd(2, '0'));
  return amount < 0 ? -cents : cents;
}

/** The JSON number for an amount of cents: the nearest double prints with at most 2 decimals. */
export const fromCents = (cents: Cents): number => cents / 100;

/** Text with exactly 2 decimals, for people: 1234.5 ARS -> "1234.50". */
export const formatCents = (cents: Cents): string => {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  return `${sign}${Math.trunc(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
};

/**
 * A money field: a number > 0 (or >= 0 with `allowZero`, or any but 0 with `signed`), at most 2 decimals, at most
 * 999999999.99 either way; yields cents.
 */
export function money(options: { allowZero?: boolean; signed?: boolean } = {}) {
  return z.number().transform((amount, ctx) => {
    // Checked first: 1e21 prints in exponent form, which is not "more than 2 decimals" but too large.
    if (Math.abs(amount) > MAX_CENTS / 100) {
      const negative = options.allowZero ? 'must be 0 or more' : 'must be greater than 0';
      const message = options.signed
        ? 'must be at most 999999999.99 either way'
        : amount < 0
          ? negative
          : 'must be at most 999999999.99';
      ctx.addIssue({ code: 'custom', message });
      return z.NEVER;
    }
    const cents = toCents(amount);
    if (cents === null) {
      ctx.addIssue({ code: 'custom', message: 'must have at most 2 decimals' });
      return z.NEVER;
    }
    if (options.signed ? cents === 0 : cents < 0 || (cents === 0 && !options.allowZero)) {
      ctx.addIssue({
        code: 'custom',
        message: options.signed ? 'must not be 0' : options.allowZero ? 'must be 0 or more' : 'must be greater than 0',
      });
      return z.NEVER;
    }
    return cents;
  });
}
