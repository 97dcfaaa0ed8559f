/**
 * How results reach people and scripts. `--json`: stdout carries only the JSON of the response's `data`;
 * otherwise aligned tables and key/value blocks, in colour where stdout takes it (`paint`).
 */
import { styleText } from 'node:util';

const ANSI = /\x1b\[[0-9;]*m/g;

export type Style = 'bold' | 'dim' | 'red' | 'green' | 'yellow' | 'magenta' | 'cyan' | 'gray';

/**
 * Text in a style when stdout takes colour: Node's `util.styleText` decides, as every Node tool does — a terminal,
 * unless `NO_COLOR` or `TERM=dumb`; `FORCE_COLOR` turns it on anywhere (a CI log).
 */
export const paint = (style: Style, text: string): string => styleText(style, text, { stream: process.stdout });

/** Every status word of the contract (payments, deliveries, transfers, CVUs, invoices) has one colour. */
const STATUS_STYLES: Record<string, Style> = {
  completed: 'green',
  delivered: 'green',
  credited: 'green',
  active: 'green',
  paid: 'green',
  waiting: 'yellow',
  underpaid: 'yellow',
  pending: 'yellow',
  retrying: 'yellow',
  provisioning: 'yellow',
  partial: 'yellow',
  overpaid: 'magenta',
  expired: 'red',
  cancelled: 'red',
  failed: 'red',
  returned: 'red',
  provisioning_failed: 'red',
  disabled: 'red',
  dropped: 'gray',
  held: 'cyan',
  not_provisioned: 'gray',
};

export const status = (value: string): string => paint(STATUS_STYLES[value] ?? 'bold', value);

/** Money for people: ARS with 2 decimals. */
export const ars = (amount: number | null | undefined): string => (amount == null ? '-' : `ARS ${amount.toFixed(2)}`);

type Cell = string | number | boolean | null | undefined;
const cellText = (value: Cell): string => (value == null || value === '' ? '-' : String(value));
const width = (text: string): number => text.replace(ANSI, '').length;
/** Pads to a width, counting only visible characters (colour codes take none). */
export const pad = (text: string, size: number, right = false): string => {
  const fill = ' '.repeat(Math.max(size - width(text), 0));
  return right ? fill + text : text + fill;
};

/** A column: its header, how a row fills it, and whether it lines up on the right (amounts, counts). */
export type Column<T> = [header: string, cell: (row: T) => Cell, align?: 'right'];

export function table<T>(rows: T[], columns: Column<T>[]): string {
  const cells = rows.map((row) => columns.map(([, cell]) => cellText(cell(row))));
  const sizes = columns.map(([header], i) => Math.max(header.length, ...cells.map((line) => width(line[i]!))));
  const line = (values: string[]) =>
    values
      .map((value, i) => pad(value, sizes[i]!, columns[i]![2] === 'right'))
      .join('  ')
      .trimEnd();
  return [line(columns.map(([header]) => paint('bold', header))), ...cells.map(line)].join('\n');
}

/** Labelled values, one a line, aligned; null and empty values are left out. */
export function block(pairs: [label: string, value: Cell][]): string {
  const shown = pairs.filter(([, value]) => value != null && value !== '');
  const size = Math.max(0, ...shown.map(([label]) => label.length));
  return shown.map(([label, value]) => `${paint('dim', label.padEnd(size))}  ${String(value)}`).join('\n');
}

/**
 * A record's view as a block: each of its fields in the answer's order (the view's declaration), a field's name its
 * label, so a field added to the view shows with no line here. `as` formats some (undefined leaves one out); an
 * object or a list with no format is left out (a table or a line of its own shows it).
 */
export function viewBlock<T extends object>(
  view: T,
  as: { [K in keyof T]?: (value: T[K]) => Cell | undefined },
): string {
  const formats = as as Record<string, ((value: unknown) => Cell | undefined) | undefined>;
  return block(
    Object.entries(view).flatMap(([name, value]): [string, Cell][] => {
      const format = formats[name];
      if (format) return [[name, format(value)]];
      return typeof value === 'object' && value !== null ? [] : [[name, value as Cell]];
    }),
  );
}

export interface Pagination {
  page: number;
  limit: number;
  total: number;
  totalPages: number;
}

/** A noun in its singular and plural forms. */
export type Noun = [one: string, many: string];

export const count = (n: number, [one, many]: Noun): string => `${n} ${n === 1 ? one : many}`;

/** One page of a list: a table and where the page stands, or a line saying there is nothing. */
export function page<T>(items: T[], pagination: Pagination, noun: Noun, columns: Column<T>[]): string {
  if (pagination.total === 0) return `no ${noun[1]}`;
  const where = `page ${pagination.page} of ${Math.max(pagination.totalPages, 1)} · ${count(pagination.total, noun)}`;
  return items.length === 0 ? where : `${table(items, columns)}\n${paint('dim', where)}`;
}

/** `key=value, …` for metadata-like objects. */
export const pairs = (record: Record<string, unknown> | null | undefined): string =>
  Object.entries(record ?? {})
    .map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`)
    .join(', ');

export interface Output {
  json: boolean;
  /** A command's result: its JSON, or its human rendering. */
  result<T>(data: T, human: (data: T) => string): void;
  /** One item of a live stream: a JSON line (for `jq` and line readers), or its human rendering. */
  item<T>(data: T, human: (data: T) => string): void;
  /** Anything that is not the result (hints, progress): stderr, so stdout stays clean for scripts. */
  note(text: string): void;
}

export function createOutput(json: boolean): Output {
  const write = (text: string) => process.stdout.write(`${text}\n`);
  return {
    json,
    result: (data, human) => write(json ? JSON.stringify(data, null, 2) : human(data)),
    item: (data, human) => write(json ? JSON.stringify(data) : human(data)),
    note: (text) => process.stderr.write(`${text}\n`),
  };
}
