import { type IdSource, withCheckDigits } from '../conventions/index.js';

/** The sandbox's PSP block: "000" marks a CVU (not a bank CBU), 4580 is the sandbox's PSP number. */
const PSP_PREFIX = '0004580';

/** A CVU of the sandbox's PSP with this account number (13 digits). */
const cvuOf = (account: string): string => withCheckDigits(PSP_PREFIX, account);

export function generateCvu(ids: IdSource): string {
  return cvuOf(Array.from({ length: 13 }, () => ids.int(10)).join(''));
}

/**
 * The pool's CVUs and aliases are numbered: pool CVU n has the account number `9` and n in 12 digits, its alias
 * `POOL.` and the same 12 digits, so lending a new one asks nothing of the database. No other CVU or alias is made
 * there (`Hubs.isTaken` says the whole space is taken); one an older release made there stays below the next number.
 */
const POOL_DIGITS = 12;
const POOL_CVU_HEAD = cvuOf('9'.padEnd(13, '0')).slice(0, 9);
const POOL_ALIAS_HEAD = 'POOL.';

export const poolCvu = (n: number): string => cvuOf(`9${String(n).padStart(POOL_DIGITS, '0')}`);
export const poolAlias = (n: number): string => `${POOL_ALIAS_HEAD}${String(n).padStart(POOL_DIGITS, '0')}`;

/** Every pool CVU, and every pool alias, as ranges (each in its index's order). */
export const POOL_CVUS = { from: poolCvu(0), to: `${POOL_CVU_HEAD}${'9'.repeat(POOL_DIGITS + 1)}` };
export const POOL_ALIASES = { from: poolAlias(0), to: poolAlias(10 ** POOL_DIGITS - 1) };

/** The number of the pool's space a CVU or alias (upper case) is in, or null when it is in none. */
export function poolNumber(cvuOrAlias: string): number | null {
  if (/^\d{22}$/.test(cvuOrAlias)) return cvuOrAlias.startsWith(POOL_CVU_HEAD) ? Number(cvuOrAlias.slice(9, 21)) : null;
  const digits = cvuOrAlias.startsWith(POOL_ALIAS_HEAD) ? cvuOrAlias.slice(POOL_ALIAS_HEAD.length) : '';
  return /^\d{12}$/.test(digits) ? Number(digits) : null;
}

const WORDS = [
  'SOL',
  'RIO',
  'PAMPA',
  'MATE',
  'TANGO',
  'ANDES',
  'LAGO',
  'CERRO',
  'PUNA',
  'DELTA',
  'ROBLE',
  'CEIBO',
  'LUNA',
  'NUBE',
  'VIENTO',
  'MAR',
  'PINO',
  'SAUCE',
  'ARENA',
  'PIEDRA',
  'HOJA',
  'FARO',
  'PUENTE',
  'CAMPO',
  'TALA',
  'YERBA',
  'LIMON',
  'NOGAL',
  'OMBU',
  'QUENA',
  'BOMBO',
  'CHACRA',
  'ESTEPA',
  'GLACIAR',
  'COLINA',
  'VALLE',
];

/**
 * A unique alias of three words (`SOL.RIO.PAMPA`), 6 to 20 characters; `taken` compares case-insensitively.
 * With `base`, the alias is that base, cut to 20 and made unique with a numeric ending.
 */
export function generateAlias(ids: IdSource, taken: (alias: string) => boolean, base?: string): string {
  if (base !== undefined) {
    const clean = base
      .toUpperCase()
      .replace(/[^A-Z0-9.-]/g, '')
      .slice(0, 20)
      .padEnd(6, 'X');
    if (!taken(clean)) return clean;
    for (let n = 2; ; n++) {
      const suffix = `-${n}`;
      const candidate = clean.slice(0, 20 - suffix.length) + suffix;
      if (!taken(candidate)) return candidate;
    }
  }
  const pick = () => WORDS[ids.int(WORDS.length)]!;
  for (let attempt = 0; ; attempt++) {
    // Three words while they are plentiful (46,656 of them: once most are lent, a few tries, not many); then two
    // words and four digits, which never run out.
    const candidate =
      attempt < 3 ? `${pick()}.${pick()}.${pick()}` : `${pick()}.${pick()}.${String(ids.int(10_000)).padStart(4, '0')}`;
    if (candidate.length <= 20 && !taken(candidate)) return candidate;
  }
}
