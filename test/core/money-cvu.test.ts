import { describe, expect, it } from 'vitest';
import {
  ALIAS_PATTERN,
  formatCents,
  fromCents,
  generateAlias,
  generateCvu,
  isValidCvu,
  money,
  seededIds,
  toCents,
} from '../../src/core/index.js';

describe('money', () => {
  it('reads numbers with at most 2 decimals as exact cents', () => {
    expect(toCents(1500)).toBe(150000);
    expect(toCents(0.1)).toBe(10);
    expect(toCents(0.29)).toBe(29);
    expect(toCents(999999999.99)).toBe(99999999999);
    expect(toCents(1.005)).toBeNull();
    expect(toCents(0.1 + 0.2)).toBeNull();
    expect(toCents(1e-7)).toBeNull();
    expect(toCents(Number.NaN)).toBeNull();
  });

  it('sums in cents are exact: 0.10 + 0.20 is 0.30', () => {
    expect(fromCents(toCents(0.1)! + toCents(0.2)!)).toBe(0.3);
    expect(formatCents(toCents(0.1)! + toCents(0.2)!)).toBe('0.30');
    expect(formatCents(-5)).toBe('-0.05');
  });

  it('the money schema rejects 0, negatives, 3 decimals and amounts over 999999999.99', () => {
    const schema = money();
    expect(schema.parse(12.5)).toBe(1250);
    for (const bad of [0, -1, 1.234, 1_000_000_000, '5']) expect(schema.safeParse(bad).success).toBe(false);
    expect(money({ allowZero: true }).parse(0)).toBe(0);
  });

  it('says what is wrong in its own words: a huge amount is too large (not "2 decimals"), a negative one below 0', () => {
    const message = (schema: ReturnType<typeof money>, value: number) =>
      schema.safeParse(value).error?.issues[0]?.message;
    for (const huge of [1e21, 1e308, 999999999.995, 1_000_000_000])
      expect(message(money(), huge), String(huge)).toBe('must be at most 999999999.99');
    expect(message(money(), -1e21)).toBe('must be greater than 0');
    expect(message(money({ allowZero: true }), -1e21)).toBe('must be 0 or more');
    expect(message(money(), 1.234)).toBe('must have at most 2 decimals');
  });
});

describe('CVU', () => {
  it('generates 22-digit CVUs whose two BCRA check digits validate', () => {
    const ids = seededIds(7);
    for (let i = 0; i < 200; i++) {
      const cvu = generateCvu(ids);
      expect(cvu).toMatch(/^000\d{19}$/);
      expect(isValidCvu(cvu)).toBe(true);
    }
  });

  it('rejects a CVU with a wrong check digit in either block', () => {
    const cvu = generateCvu(seededIds(3));
    const flip = (text: string, at: number) =>
      text.slice(0, at) + String((Number(text[at]) + 1) % 10) + text.slice(at + 1);
    expect(isValidCvu(flip(cvu, 7))).toBe(false);
    expect(isValidCvu(flip(cvu, 21))).toBe(false);
    expect(isValidCvu(flip(cvu, 10))).toBe(false);
    expect(isValidCvu('123')).toBe(false);
  });

  it('validates a known CVU (weights 7,1,3,9,7,1,3 and 3,9,7,1,3,9,7,1,3,9,7,1,3)', () => {
    // block 1: 0000003 -> sum 9 -> check 1; block 2: 0000000000001 -> sum 3 -> check 7
    expect(isValidCvu('0000003100000000000017')).toBe(true);
    expect(isValidCvu('0000003100000000000018')).toBe(false);
  });
});

describe('alias', () => {
  it('is 6 to 20 letters, digits, dots or hyphens, unique case-insensitively', () => {
    const ids = seededIds(11);
    const taken = new Set<string>();
    for (let i = 0; i < 2000; i++) {
      const alias = generateAlias(ids, (a) => taken.has(a.toUpperCase()));
      expect(alias).toMatch(ALIAS_PATTERN);
      expect(taken.has(alias.toUpperCase())).toBe(false);
      taken.add(alias.toUpperCase());
    }
  });

  it('from a base: upper case, cut to 20, and made unique with a numeric ending', () => {
    const ids = seededIds(1);
    expect(generateAlias(ids, () => false, 'acme.store.sandbox')).toBe('ACME.STORE.SANDBOX');
    expect(generateAlias(ids, () => false, 'a-very-long-prefix.suffix.BRAND')).toBe('A-VERY-LONG-PREFIX.S');
    const taken = new Set(['ACME.STORE.SANDBOX']);
    expect(generateAlias(ids, (a) => taken.has(a), 'acme.store.sandbox')).toBe('ACME.STORE.SANDBOX-2');
  });
});
