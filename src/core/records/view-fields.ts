import { z } from 'zod';

/** The primitives of every answer's schema: the API's views and the callback bodies are built from them. */
export const uuid = z
  .string()
  .regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, 'must be a lower-case UUID');
export const isoTime = z.iso.datetime();
/** Money: ARS as a JSON number with at most 2 decimals. */
export const ars = z.number();

/**
 * `true` only when a view shows every field of its record but the `Hidden` ones; else names the missing fields. A view
 * declares `export const shown: ShowsEvery<Record, View> = true`, so a field added to a record alone is a type error.
 */
export type ShowsEvery<R, V, Hidden extends keyof R = never> =
  Exclude<keyof R, keyof V | Hidden> extends never ? true : { missing: Exclude<keyof R, keyof V | Hidden> };
