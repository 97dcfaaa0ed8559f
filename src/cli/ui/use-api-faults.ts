import { useEffect, useState } from 'react';
import type { ApiFaultRuleView } from '../../core/api-faults.js';
import type { Client } from '../client.js';

/** How often hits are read again while the account has rules: a faulted request tells the live stream nothing. */
const HITS_REFRESH_MS = 2000;

export interface ApiFaultsSummary {
  /** Rules not spent: those that may still fault a request. */
  active: number;
  hits: number;
}

/**
 * The account's API fault rules in short, for the status line: read when `version` changes, and every couple of
 * seconds while there are rules (none: no polling, the dashboard asks nothing while nothing happens); null when none.
 */
export function useApiFaults(client: Client, version: number, onError: (error: Error) => void): ApiFaultsSummary | null {
  const [summary, setSummary] = useState<ApiFaultsSummary | null>(null);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let current = true;
    client.call<ApiFaultRuleView[]>('GET', '/sandbox/v1/api-faults', { query: { limit: 100 } }).then(
      ({ data }) =>
        current && setSummary(data.length === 0 ? null : { active: data.filter((rule) => !rule.spent).length, hits: data.reduce((sum, rule) => sum + rule.hits, 0) }),
      (error: Error) => current && onError(error),
    );
    return () => {
      current = false;
    };
  }, [client, version, tick]);
  useEffect(() => {
    if (summary === null) return;
    const timer = setTimeout(() => setTick((n) => n + 1), HITS_REFRESH_MS);
    return () => clearTimeout(timer);
  }, [summary, tick]);
  return summary;
}

/** `api faults 2 on, 3 hits`, for the status line. */
export const apiFaultsText = ({ active, hits }: ApiFaultsSummary): string => `api faults ${active} on, ${hits} hit${hits === 1 ? '' : 's'}`;
