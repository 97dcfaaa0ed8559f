import { type IdSource, withCheckDigits } from '../conventions/index.js';

/** The sandbox's PSP block: "000" marks a CVU (not a bank CBU), 4580 is the sandbox's PSP number. */
const PSP_PREFIX = '0004580';

export function generateCvu(ids: IdSource): string {
  const account = Array.from({ length: 13 }, () => ids.int(10)).join('');
  return withCheckDigits(PSP_PREFIX, account);
}

export const ALIAS_PATTERN = /^[A-Za-z0-9.-]{6,20}$/;

const WORDS = [
  'SOL', 'RIO', 'PAMPA', 'MATE', 'TANGO', 'ANDES', 'LAGO', 'CERRO', 'PUNA', 'DELTA', 'ROBLE', 'CEIBO',
  'LUNA', 'NUBE', 'VIENTO', 'MAR', 'PINO', 'SAUCE', 'ARENA', 'PIEDRA', 'HOJA', 'FARO', 'PUENTE', 'CAMPO',
  'TALA', 'YERBA', 'LIMON', 'NOGAL', 'OMBU', 'QUENA', 'BOMBO', 'CHACRA', 'ESTEPA', 'GLACIAR', 'COLINA', 'VALLE',
];

/** How many aliases of three words there are. */
export const THREE_WORDS = WORDS.length ** 3;

/**
 * A unique alias of three words (`SOL.RIO.PAMPA`), 6 to 20 characters; `taken` compares case-insensitively.
 * With `base`, the alias is that base, cut to 20 and made unique with a numeric ending. Without `threeWords` (the
 * caller knows most are lent), it is two words and four digits at once: each three-word try that is taken costs a
 * look-up of a lent alias (at 300,000 pool CVUs, three such reads of a stored index per create were a third of its CPU).
 */
export function generateAlias(ids: IdSource, taken: (alias: string) => boolean, base?: string, threeWords = true): string {
  if (base !== undefined) {
    const clean = base.toUpperCase().replace(/[^A-Z0-9.-]/g, '').slice(0, 20).padEnd(6, 'X');
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
      threeWords && attempt < 3 ? `${pick()}.${pick()}.${pick()}` : `${pick()}.${pick()}.${String(ids.int(10_000)).padStart(4, '0')}`;
    if (candidate.length <= 20 && !taken(candidate)) return candidate;
  }
}
