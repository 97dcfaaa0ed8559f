import type { JournalItem } from '../core/records/request-journal.js';

/** What else about a journaled request is worth a glance in a list: a replay, an API fault, a cut body. */
export const journalNote = (item: JournalItem): string =>
  [
    item.replayed ? 'replayed' : '',
    item.apiFault ? `fault ${item.apiFault.type}` : '',
    item.truncated ? 'truncated' : '',
  ]
    .filter(Boolean)
    .join(', ');
