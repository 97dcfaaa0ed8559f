import { useEffect, useState } from 'react';
import type { ApiFaultRuleView } from '../../core/api-faults/api-faults.js';
import type { Client } from '../client.js';

export interface ApiFaultsSummary {
  /** Rules not spent: those that may still fault a request. */
  active: number;
  hits: number;
}

/**
 * The account's API fault rules in short, for the status line; null when there are none. Read again when `version`
 * changes: the live stream's `apiFaults` message (a rule added or removed, a request faulted) changes it.
 */
export function useApiFaults(
  client: Client,
  version: number,
  onError: (error: Error) => void,
): ApiFaultsSummary | null {
  const [summary, setSummary] = useState<ApiFaultsSummary | null>(null);
  useEffect(() => {
    let current = true;
    client.call<ApiFaultRuleView[]>('GET', '/sandbox/v1/api-faults', { query: { limit: 100 } }).then(
      ({ data }) =>
        current &&
        setSummary(
          data.length === 0
            ? null
            : {
                active: data.filter((rule) => !rule.spent).length,
                hits: data.reduce((sum, rule) => sum + rule.hits, 0),
              },
        ),
      (error: Error) => current && onError(error),
    );
    return () => {
      current = false;
    };
  }, [client, version]);
  return summary;
}

/** `api faults 2 on, 3 hits`, for the status line. */
export const apiFaultsText = ({ active, hits }: ApiFaultsSummary): string =>
  `api faults ${active} on, ${hits} hit${hits === 1 ? '' : 's'}`;
