/**
 * The request journal (contract part 9): every `/api/v1` request of an account as it was sent and answered, kept in
 * the database (`store/journal.ts`). `record` is the one way in: the Hono middleware below calls it, and so may any
 * other path that answers an `/api/v1` request. Never the API key: `Authorization` is left out of the headers, and
 * the key is blanked wherever else the request or its answer held it (a query string, a body that echoes it).
 */
import { randomUUID } from 'node:crypto';
import { type ApiFaultType, iso } from '../../core/index.js';
import { JOURNAL_BODY_BYTES, type JournalItem } from '../../core/records/request-journal.js';
import type { JournalRow, JournalStore } from '../store/journal.js';
import { withoutKey } from './server-log.js';

/** A request as seen, before it is made fit to keep. */
export interface SeenRequest {
  /** The account's clock when it came, ms. */
  at: number;
  method: string;
  path: string;
  query: Record<string, string>;
  /** As sent, `Authorization` among them: `recordRequest` leaves it out. */
  headers: [string, string][];
  /** Null when it had none, or its body was never read (refused before). */
  requestBody: string | null;
  /** Null when no answer was sent. */
  status: number | null;
  responseBody: string | null;
  durationMs: number;
  /** Answered with the stored answer of its Idempotency-Key. */
  replayed: boolean;
  apiFault: { ruleId: string; type: ApiFaultType } | null;
}

/**
 * Keeps one `/api/v1` request of the account of `key` in the journal: the one way in, for the middleware and for any
 * other path that answers such a request. It costs the caller no wait: the row is written at the end of the turn.
 */
export function recordRequest(journal: JournalStore, key: string, seen: SeenRequest): void {
  journal.record(key, journalRow(randomUUID(), key, seen));
}

/** A request as a row: the key blanked everywhere, `Authorization` left out, each body cut at 64 KiB. */
function journalRow(id: string, key: string, seen: SeenRequest): JournalRow {
  const blank = (text: string) => withoutKey(text, key);
  const requestHeaders: Record<string, string> = {};
  let idempotencyKey: string | null = null;
  for (const [name, value] of seen.headers) {
    const lower = name.toLowerCase();
    if (lower === 'authorization') continue;
    requestHeaders[blank(name)] = blank(value);
    if (lower === 'idempotency-key') idempotencyKey = blank(value);
  }
  const query: Record<string, string> = {};
  for (const [name, value] of Object.entries(seen.query)) query[blank(name)] = blank(value);
  const requestBody = cut(seen.requestBody === null ? null : blank(seen.requestBody));
  const responseBody = cut(seen.responseBody === null ? null : blank(seen.responseBody));
  const data = {
    query,
    requestHeaders,
    durationMs: seen.durationMs,
    idempotencyKey,
    replayed: seen.replayed,
    apiFault: seen.apiFault,
    ...(requestBody.cut || responseBody.cut ? { truncated: true } : {}),
  };
  return {
    id,
    at: seen.at,
    method: seen.method,
    path: blank(seen.path),
    status: seen.status,
    data: JSON.stringify(data),
    requestBody: requestBody.text,
    responseBody: responseBody.text,
  };
}

/** A body kept whole up to 64 KiB of UTF-8, else its first 64 KiB (a character split there is dropped). */
function cut(text: string | null): { text: string | null; cut: boolean } {
  if (text === null || text.length * 3 <= JOURNAL_BODY_BYTES) return { text, cut: false };
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= JOURNAL_BODY_BYTES) return { text, cut: false };
  return {
    text: new TextDecoder('utf-8', { fatal: false })
      .decode(bytes.subarray(0, JOURNAL_BODY_BYTES))
      .replace(/\uFFFD$/, ''),
    cut: true,
  };
}

/** A stored row as the API answers it: the bodies as the JSON they were, or as text. */
export function journalItem(row: JournalRow): JournalItem {
  const data = JSON.parse(row.data) as Omit<
    JournalItem,
    'id' | 'at' | 'method' | 'path' | 'status' | 'requestBody' | 'responseBody'
  >;
  const body = (text: string | null) => {
    if (text === null || text === '') return null;
    if (data.truncated) return text;
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return text;
    }
  };
  const { query, requestHeaders, durationMs, idempotencyKey, replayed, apiFault, truncated } = data;
  return {
    id: row.id,
    at: iso(row.at),
    method: row.method,
    path: row.path,
    query,
    requestHeaders,
    requestBody: body(row.requestBody),
    status: row.status,
    responseBody: body(row.responseBody),
    durationMs,
    idempotencyKey,
    replayed,
    apiFault,
    ...(truncated ? { truncated } : {}),
  };
}
