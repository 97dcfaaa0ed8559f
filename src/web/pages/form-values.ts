import type { z } from 'zod';
import { issuesToDetails } from '../../core/records/schemas.js';

/** A form's text as a number when it reads as one, else the text itself, so the schema names the field. */
export const numberOr = (text: string): number | string =>
  text.trim() !== '' && Number.isFinite(Number(text)) ? Number(text) : text;

/** Drops the fields left empty, as a client that leaves optional fields out does. */
export const filled = (values: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(values).filter(([, value]) => value !== '' && value !== undefined));

/** "path: problem" for every way `value` fails `schema` (the same words the API would answer with). */
export function issuesOf(schema: z.ZodType, value: unknown): string[] {
  const result = schema.safeParse(value);
  return result.success ? [] : issuesToDetails(result.error);
}

/** A JSON object typed in a text area; the text itself when it is not one (the schema then says why). */
export function jsonObjectOr(text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
