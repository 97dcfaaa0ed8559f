import { UUID_PATTERN } from '../core/conventions/ids.js';

/**
 * Short ids (the first characters of a UUID, as the web inspector's lists print them): the CLI and the inspector's
 * search take one where a record's id goes, and find the record by listing, newest first, at most `SHORT_ID_SCAN`
 * records. The API itself takes full ids only, as production does.
 */
export const SHORT_ID_SCAN = 1000;
const PAGE = 100;

/** A lower-case prefix of a UUID, at least 4 characters, that is not a whole one: what is worth looking up. */
export const isShortId = (text: string): boolean =>
  !UUID_PATTERN.test(text.toLowerCase()) && /^[0-9a-f][0-9a-f-]{3,35}$/i.test(text);

/** The start of a UUID under 4 characters (`4e8`): meant as a short id, but too short to be looked up. */
export const isTooShortId = (text: string): boolean => /^[0-9a-f][0-9a-f-]{0,2}$/i.test(text);

/** One page of a list, as the API answers it. */
export type ListPage = (
  page: number,
  limit: number,
) => Promise<{ data: { id: string }[]; pagination: { totalPages: number } }>;

/** The ids (at most two: one is enough to tell it is ambiguous) among the newest records that start with `prefix`. */
export async function idsStartingWith(list: ListPage, prefix: string): Promise<string[]> {
  const start = prefix.toLowerCase();
  const found: string[] = [];
  for (let page = 1; page <= SHORT_ID_SCAN / PAGE; page++) {
    const { data, pagination } = await list(page, PAGE);
    found.push(...data.map((record) => record.id).filter((id) => id.startsWith(start)));
    if (found.length > 1 || page >= pagination.totalPages) break;
  }
  return found.slice(0, 2);
}

/** Why a short id names no single record (`noun`: what it should name, "VA payment"), in one line. */
export const shortIdProblem = (prefix: string, ids: string[], noun: string): string =>
  isTooShortId(prefix)
    ? `${prefix} is too short to look up a ${noun}: give at least 4 characters of its id`
    : ids.length === 0
      ? `No ${noun} among the newest ${SHORT_ID_SCAN} has an id starting with ${prefix}: give the full id`
      : `${prefix} names more than one ${noun} (${ids.join(', ')}, …): give more of the id`;
