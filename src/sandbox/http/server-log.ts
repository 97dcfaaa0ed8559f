import type { LiveEvent } from '../../core/index.js';

/** The server log (contract part 5): one entry per request, one per callback attempt and one per API fault (part 7). */
export type LogEntry =
  | { type: 'request'; time: string; method: string; path: string; status: number; ms: number; key: string | null }
  | { type: 'fault'; time: string; ruleId: string; fault: string; method: string; path: string; key: string | null }
  | {
      type: 'callback';
      time: string;
      eventType: string;
      eventId: string;
      deliveryId: string;
      attempt: number;
      url: string | null;
      forwardedTo: string | null;
      status: number | null;
      error: string | null;
      ms: number;
      fault: string | null;
    };

/** An API key as the log shows it: its last 4 characters only, never the secret. */
const maskedKey = (key: string): string => `…${key.slice(-4)}`;

/** The Bearer key of a request's Authorization header, as sent; undefined without one. */
export const bearerKey = (authorization: string | undefined): string | undefined =>
  /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];

/** The Bearer key of a request's Authorization header, masked; null without one. */
export function requestKey(authorization: string | undefined): string | null {
  const key = bearerKey(authorization);
  return key === undefined ? null : maskedKey(key);
}

/** What stands where a request held its API key, in the log and the request journal. */
const BLANKED_KEY = '[API key]';

/** A text with the API key blanked wherever it held it (a path or a query that names it, a body that echoes it). */
export const withoutKey = (text: string, key: string | undefined): string =>
  key && text.includes(key) ? text.split(key).join(BLANKED_KEY) : text;

/** The log entry of a callback attempt the core reported, or null for any other live event. */
export function callbackEntry(live: LiveEvent, time: string): LogEntry | null {
  if (live.type !== 'delivery' || live.attempt === null) return null;
  const { delivery, attempt } = live;
  return {
    type: 'callback',
    time,
    eventType: delivery.eventType,
    eventId: delivery.eventId,
    deliveryId: delivery.id,
    attempt: attempt.n,
    url: delivery.url,
    forwardedTo: attempt.forwardedTo ?? null,
    status: attempt.responseStatus,
    error: attempt.error,
    ms: attempt.durationMs,
    fault: attempt.fault ?? null,
  };
}

/** One line of text: `method path status ms key` for a request; event, URL, status or error and ms for a callback. */
export function logLine(entry: LogEntry): string {
  const time = entry.time.slice(11, 23);
  if (entry.type === 'request')
    return `${time} ${entry.method} ${entry.path} ${entry.status} ${entry.ms}ms ${entry.key ?? '-'}`;
  if (entry.type === 'fault')
    return `${time} fault ${entry.ruleId} ${entry.fault} ${entry.method} ${entry.path} ${entry.key ?? '-'}`;
  const where = entry.forwardedTo ? `${entry.url ?? '-'} => ${entry.forwardedTo}` : (entry.url ?? '-');
  const got = entry.status === null ? (entry.error ?? '-') : String(entry.status);
  return `${time} callback ${entry.eventType} ${where} ${got} ${entry.ms}ms${entry.fault ? ` fault:${entry.fault}` : ''}`;
}

/**
 * One JSON line (`--log json`) in the shape log stacks read (pino's): `level` (30 info, 40 a request refused or a
 * callback that failed, 50 the sandbox's own error), `time` in epoch milliseconds and `msg` (the text line), beside
 * the entry's fields (its ISO time as `at`).
 */
export function jsonLine(entry: LogEntry): string {
  const failed =
    entry.type === 'fault' ||
    (entry.type === 'request' ? entry.status >= 400 : entry.status === null || entry.status >= 300);
  const level = entry.type === 'request' && entry.status >= 500 ? 50 : failed ? 40 : 30;
  const { time, ...fields } = entry;
  return JSON.stringify({ level, time: Date.parse(time), msg: logLine(entry), ...fields, at: time });
}

/** How long a log line may wait to be written with the next ones. */
const LOG_WAIT_MS = 20;

/**
 * Lines written to a stream together, at most `LOG_WAIT_MS` after the first of them: under load a write per request
 * line (a system call each, the stream's bookkeeping) cost more than making the lines. `flush()` writes what waits
 * now (before the stop's last words); the process's exit does too.
 */
export function lineWriter(stream: NodeJS.WritableStream) {
  let waiting = '';
  let timer: NodeJS.Timeout | null = null;
  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = null;
    if (waiting !== '') stream.write(waiting);
    waiting = '';
  };
  process.once('exit', flush);
  return {
    write(line: string): void {
      timer ??= setTimeout(flush, LOG_WAIT_MS);
      waiting += `${line}\n`;
    },
    flush,
  };
}
