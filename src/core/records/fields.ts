import { z } from 'zod';
import { isValidCvu, MAX_CENTS, RECORD_ALIAS_PATTERN, UUID_PATTERN } from '../conventions/index.js';

/**
 * The field types records are declared with (one schema per kind of record in this folder). The request schemas take
 * the same bounds (`schemas.ts`), so an export holds nothing a request could not have made: no name over 255, no
 * metadata over 50 keys, no `file://` callback URL.
 */

export const id = z.string().regex(UUID_PATTERN, 'must be a lower-case UUID');
export const time = z.iso.datetime({ message: 'must be an ISO 8601 UTC time' });
export const cents = z.number().int('must be whole cents').min(-MAX_CENTS).max(MAX_CENTS);
/** Money as the API takes it: more than 0 (or 0 and more). */
export const positive = cents.min(1, 'must be greater than 0');
export const nonNegative = cents.min(0, 'must be 0 or more');
export const text = (max?: number) => (max === undefined ? z.string() : z.string().max(max));
/** A CVU as the sandbox makes them: 22 digits with their check digits (a key such as `constructor` is not one). */
export const cvu = z.string().refine(isValidCvu, 'must be a CVU: 22 digits with valid check digits');
/** An alias of a record (a hub's, a pool CVU's, a client's, a VA payment's): ASCII, so it has one upper case. */
export const alias = z.string().regex(RECORD_ALIAS_PATTERN, 'must be 6 to 34 ASCII letters, digits, dots or hyphens');
export const json = z.record(z.string(), z.unknown());
/** A payment hub's id: any positive integer (contract part 1). */
export const hubId = z.number().int().min(1).max(Number.MAX_SAFE_INTEGER);
/** A tax id as the reference takes it: any string of at most 64 characters (compared by its digits when it has any). */
export const taxId = z.string().min(1).max(64);

export const httpUrl = z
  .string()
  .max(2048)
  .refine((value) => {
    try {
      const url = new URL(value);
      return url.protocol === 'http:' || url.protocol === 'https:';
    } catch {
      return false;
    }
  }, 'must be an http(s) URL');

/** JSON size of a value, or Infinity when it nests too deep to even measure (it is far over any limit then). */
function jsonSize(value: unknown): number {
  try {
    return JSON.stringify(value).length;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

/** How deep JSON may nest where it is free-form (metadata: the object itself is level 1) [sandbox]. */
const MAX_JSON_DEPTH = 32;

/**
 * Whether a value parsed from JSON nests at most `limit` levels. Measured without recursion: JSON.parse takes any
 * depth, and a value nested thousands deep would overflow the stack of every recursive walk after it (stringify).
 */
function nestsAtMost(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  for (let item = stack.pop(); item; item = stack.pop()) {
    const [node, level] = item;
    if (node === null || typeof node !== 'object') continue;
    if (level > limit) return false;
    for (const child of Object.values(node)) stack.push([child, level + 1]);
  }
  return true;
}

export const metadata = z.preprocess(
  (value, ctx) => {
    // A record is made anew by assignment, where `__proto__` would set the prototype and vanish: refused by name rather.
    if (typeof value === 'object' && value !== null && Object.hasOwn(value, '__proto__')) {
      ctx.addIssue({
        code: 'custom',
        path: ['__proto__'],
        message: 'is not a key the sandbox can keep: use another name',
        input: value,
      });
    }
    return value;
  },
  z
    .record(z.string(), z.unknown())
    .refine((value) => Object.keys(value).length <= 50, 'must have at most 50 keys')
    // `abort`: measuring the size of a value nested too deep is not even tried.
    .refine((value) => nestsAtMost(value, MAX_JSON_DEPTH), {
      message: `must nest at most ${MAX_JSON_DEPTH} levels deep`,
      abort: true,
    })
    .refine((value) => jsonSize(value) <= 8192, 'must be at most 8 KiB as JSON'),
);

/**
 * A body as sent or answered (an event's, a remembered response's) holds a VA payment's metadata at most 6 levels down
 * (a remembered redelivery answer: data, attempts, one, request, body, payload), so it nests at most 8 more than that.
 */
export const bodyDepth = <T extends z.ZodType>(schema: T) =>
  schema.refine(
    (value) => nestsAtMost(value, MAX_JSON_DEPTH + 8),
    `must nest at most ${MAX_JSON_DEPTH + 8} levels deep`,
  );
