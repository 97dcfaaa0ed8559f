/** A CVU's BCRA check digits: how a CVU is told valid, and how one is made. */

const BLOCK1_WEIGHTS = [7, 1, 3, 9, 7, 1, 3];
const BLOCK2_WEIGHTS = [3, 9, 7, 1, 3, 9, 7, 1, 3, 9, 7, 1, 3];

/** BCRA check digit: 10 minus the weighted sum mod 10, and 0 for 10. */
function checkDigit(digits: string, weights: number[]): number {
  const sum = weights.reduce((acc, weight, i) => acc + weight * Number(digits[i]), 0);
  return (10 - (sum % 10)) % 10;
}

export function isValidCvu(cvu: string): boolean {
  if (!/^\d{22}$/.test(cvu)) return false;
  return (
    checkDigit(cvu.slice(0, 7), BLOCK1_WEIGHTS) === Number(cvu[7]) &&
    checkDigit(cvu.slice(8, 21), BLOCK2_WEIGHTS) === Number(cvu[21])
  );
}

/** A CVU of a 7-digit block and a 13-digit account, each followed by its check digit. */
export const withCheckDigits = (block: string, account: string): string =>
  `${block}${checkDigit(block, BLOCK1_WEIGHTS)}${account}${checkDigit(account, BLOCK2_WEIGHTS)}`;

/** An alias as the sandbox makes one (BCRA's rule): 6 to 20 ASCII letters, digits, dots or hyphens. */
export const ALIAS_PATTERN = /^[A-Za-z0-9.-]{6,20}$/;
/**
 * An alias as a record may hold it: the characters of `ALIAS_PATTERN` (ASCII only, so comparing in upper case is
 * exact), and up to 34 of them, since a hub's collection alias carries the hub's id (`SANDBOX.HUB<id>.COBROS`).
 */
export const RECORD_ALIAS_PATTERN = /^[A-Za-z0-9.-]{6,34}$/;
