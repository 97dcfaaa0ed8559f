import { idsStartingWith, isShortId, isTooShortId, shortIdProblem } from '../client/short-id.js';
import type { Api } from './api.js';

/**
 * The record a searched id names: a full id as typed; a short one (the first characters, as the lists print them)
 * found by listing `listPath` when it names exactly one record; else why not, in one line.
 */
export async function findById(
  api: Api,
  listPath: string,
  noun: string,
  text: string,
): Promise<{ id: string } | { problem: string }> {
  const typed = text.trim().toLowerCase();
  if (isTooShortId(typed)) return { problem: shortIdProblem(typed, [], noun) };
  if (!isShortId(typed)) return { id: typed };
  const ids = await idsStartingWith(async (page, limit) => {
    const { items, pagination } = await api.list<{ id: string }>(listPath, { page, limit });
    return { data: items, pagination };
  }, typed);
  return ids.length === 1 ? { id: ids[0]! } : { problem: shortIdProblem(typed, ids, noun) };
}
