/** The checks of an account export record by record: a record's own bounds that its schema does not say. */
import { ms } from '../conventions/index.js';
import type { VaPayment } from '../records/index.js';
import type { Problem, Records } from './export-problems.js';

/** A string that is not well-formed UTF-16 (a lone surrogate), which no store or JSON writer keeps as given. */
const LONE_SURROGATE = /\p{Surrogate}/u;

/** Whether a JSON value holds a lone surrogate in a key or a string, walked without recursion. */
function holdsLoneSurrogate(value: unknown): boolean {
  const stack = [value];
  for (let node = stack.pop(); stack.length > 0 || node !== undefined; node = stack.pop()) {
    if (typeof node === 'string' && LONE_SURROGATE.test(node)) return true;
    if (node === null || typeof node !== 'object') continue;
    for (const [key, child] of Object.entries(node)) {
      if (LONE_SURROGATE.test(key)) return true;
      stack.push(child);
    }
  }
  return false;
}

/** The paths under `path` of every key and string of a JSON value holding a lone surrogate. */
function loneSurrogates(value: unknown, path: (string | number)[]): (string | number)[][] {
  if (!holdsLoneSurrogate(value)) return [];
  const found: (string | number)[][] = [];
  const stack: [unknown, (string | number)[]][] = [[value, path]];
  for (let item = stack.pop(); item; item = stack.pop()) {
    const [node, at] = item;
    if (typeof node === 'string' && LONE_SURROGATE.test(node)) found.push(at);
    if (node === null || typeof node !== 'object') continue;
    for (const [key, child] of Object.entries(node)) {
      if (LONE_SURROGATE.test(key)) found.push([...at, key]);
      else stack.push([child, [...at, Array.isArray(node) ? Number(key) : key]]);
    }
  }
  return found;
}

/**
 * A record's own bounds that its schema does not say, checked as each record is read: no lone surrogate in a key
 * or a string (it would be stored as another text than the file's), and a VA payment that expires after it was made.
 */
export function recordProblems(table: keyof Records, key: string, record: unknown): Problem[] {
  // The record under its key, so a key of the table (an Idempotency-Key's) is looked at too.
  const message = 'must be well-formed Unicode: it holds a lone surrogate';
  const problems = loneSurrogates({ [key]: record }, [table]).map((path) => ({ path, message }));
  if (table === 'vaPayments') {
    const { expiresAt, createdAt } = record as VaPayment;
    if (ms(expiresAt) <= ms(createdAt)) {
      problems.push({ path: [table, key, 'expiresAt'], message: `must be after createdAt (${createdAt})` });
    }
  }
  return problems;
}
