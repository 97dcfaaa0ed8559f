/** What one operation of the OpenAPI document says, and the document's tags. */
import type { z } from 'zod';

/** Every endpoint of the API and the sandbox (`openapi.ts` makes the document of them): its schemas, answers and errors. */
export interface Operation {
  method: 'get' | 'post' | 'patch' | 'put' | 'delete';
  /** OpenAPI style: `{id}` for path parameters. */
  path: string;
  id: string;
  summary: string;
  tag: string;
  body?: z.ZodType;
  /** The body may be left out. */
  optionalBody?: true;
  query?: z.ZodObject;
  /** What the success answer's `data` holds (a list's item); the whole body for `raw-json`. */
  data?: z.ZodType;
  /** The envelope adds `message` beside `data` (cancel). */
  message?: true;
  /** The envelope may add `unreadable` beside `data`: the records of a damaged database an export left out. */
  unreadable?: true;
  status?: 200 | 201;
  /** Statuses beyond those every operation of its kind can answer. */
  errors?: number[];
  /** The success answer is not the JSON envelope. */
  produces?: 'text/event-stream' | 'raw-json';
  /** A list: `data` is the page's items and `pagination` sits beside it. */
  list?: true;
  public?: true;
}

export const PAYMENTS = 'VA payments';
export const CLIENTS = 'Clients';
export const SANDBOX = 'Sandbox';
export const DELIVERIES = 'Callback deliveries';
export const SERVICE = 'Service';
/** The document's tags, in its order. */
export const TAGS = [PAYMENTS, CLIENTS, SANDBOX, DELIVERIES, SERVICE];
