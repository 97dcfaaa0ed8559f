import { InvalidArgumentError } from 'commander';

/**
 * Option value parsers. They check only that a value has the option's type (a number, a URL...), so a typo is a
 * usage error (exit 2) before anything runs. What the value may be (ranges, fields that go together) is the
 * API's to judge: its schemas answer with a VALIDATION_ERROR naming the field. Nothing here imports zod, which
 * would cost every command ~70 ms of start-up.
 */

const invalid = (message: string): never => {
  throw new InvalidArgumentError(message);
};

export const port = (value: string): number => {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > 65535) invalid('must be a port number from 0 to 65535');
  return n;
};

export const positiveInt = (value: string): number => {
  if (!/^\d+$/.test(value) || Number(value) < 1) invalid('must be a whole number of 1 or more');
  return Number(value);
};

export const wholeNumber = (value: string): number => {
  if (!/^\d+$/.test(value)) invalid('must be a whole number');
  return Number(value);
};

export const httpStatus = (value: string): number => {
  const n = Number(value);
  if (!/^\d{3}$/.test(value) || n < 200 || n > 599) invalid('must be an HTTP status from 200 to 599');
  return n;
};

/** A signed amount in ARS, for adjustments: "-250", "99.90". */
export const signedMoney = (value: string): number => {
  if (!/^-?\d+(\.\d{1,2})?$/.test(value))
    invalid(
      'must be an amount in ARS with at most 2 decimals, with a minus sign to take money off, e.g. -250 or 99.90',
    );
  return Number(value);
};

/** ARS with at most 2 decimals, as the API takes it: "1500", "99.9", "0.30". */
export const money = (value: string): number => {
  if (!/^\d+(\.\d{1,2})?$/.test(value)) invalid('must be an amount in ARS with at most 2 decimals, e.g. 1500 or 99.90');
  return Number(value);
};

const UNIT_BYTES: Record<string, number> = { b: 1, kib: 1024, mib: 1024 ** 2, gib: 1024 ** 3 };

/** A size in bytes, plain ("268435456"), or "512KiB", "256MiB", "1GiB". */
export const size = (value: string): number => {
  const match = /^(\d+)(B|KiB|MiB|GiB)?$/i.exec(value.trim());
  const bytes = match ? Number(match[1]) * UNIT_BYTES[(match[2] ?? 'b').toLowerCase()]! : 0;
  if (!Number.isSafeInteger(bytes) || bytes < 1)
    invalid('must be a size of 1 byte or more: bytes, or with a unit, e.g. 256MiB, 512KiB, 1GiB');
  return bytes;
};

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };

/** Seconds, plain ("90") or with units ("90s", "15m", "2h", "1h30m", "1d"). */
export const duration = (value: string): number => {
  if (/^\d+$/.test(value)) return Number(value);
  if (!/^(\d+[smhd])+$/.test(value)) invalid('must be seconds or a duration like 90s, 15m, 2h or 1h30m');
  let seconds = 0;
  for (const [, n, unit] of value.matchAll(/(\d+)([smhd])/g)) seconds += Number(n) * UNIT_SECONDS[unit!]!;
  return seconds;
};

/** Milliseconds, plain ("200"), or "200ms", "2s". */
export const milliseconds = (value: string): number => {
  const match = /^(\d+)(ms|s)?$/.exec(value);
  if (!match) invalid('must be milliseconds, e.g. 200 or 200ms, or seconds like 2s');
  return Number(match![1]) * (match![2] === 's' ? 1000 : 1);
};

/** A time in ISO 8601 with its zone ("2026-03-01T12:00:00Z", "2026-03-01T09:00:00-03:00"). */
export const isoTime = (value: string): string => {
  if (
    !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(value) ||
    Number.isNaN(Date.parse(value))
  ) {
    invalid('must be an ISO 8601 time with its zone, e.g. 2026-03-01T12:00:00Z');
  }
  return value;
};

export const url = (value: string): string => {
  if (!URL.canParse(value)) invalid('must be a URL, e.g. http://127.0.0.1:9000/callbacks');
  return value;
};

/** The sandbox's base URL, without a trailing slash so paths can be appended. */
export const baseUrl = (value: string): string => {
  const parsed = URL.canParse(value) ? new URL(value) : null;
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:'))
    invalid('must be an http(s) URL, e.g. http://127.0.0.1:4580');
  return value.replace(/\/+$/, '');
};

export const boolean = (value: string): boolean => {
  if (value !== 'true' && value !== 'false') invalid('must be true or false');
  return value === 'true';
};

/** A comma-separated list ("created,succeeded"), without empty items; what each item may be is the API's to judge. */
export const list = (value: string): string[] => {
  const items = value
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
  if (items.length === 0) invalid('must be a comma-separated list, e.g. created,succeeded');
  return items;
};

/** A repeatable option: every value, in order. */
export const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

/** A repeatable `key=value` option, gathered into an object (`--metadata order=42 --metadata channel=web`). */
export const keyValue = (value: string, previous: Record<string, string> = {}): Record<string, string> => {
  const at = value.indexOf('=');
  if (at < 1) invalid('must be key=value');
  return { ...previous, [value.slice(0, at)]: value.slice(at + 1) };
};
