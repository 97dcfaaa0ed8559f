import { SandboxApiError, type SandboxClient, sandboxClient } from '../../client/api-client.js';
import { faultText } from '../../client/api-fault-words.js';
import type { ScenarioStep } from '../../core/scenarios/scenario.js';

/** API faults in scenarios (contract part 7): `{"apiFault": {rule}}` steps, and `expectFault` on a later request. */

type ApiFaultStep = Extract<ScenarioStep, { do: 'apiFault' }>;

/** `POST /api/v1/va-payments: error 503`, as a step's label shows it. */
export const apiFaultTarget = ({ apiFault: rule }: ApiFaultStep): string =>
  `${rule.method} ${rule.path}: ${faultText(rule.fault)}`;

/** The same account's client, sending `key` as the Idempotency-Key of every request. */
export const withIdempotencyKey = (client: SandboxClient, key: string): SandboxClient =>
  sandboxClient(client.url, client.apiKey, { headers: { 'idempotency-key': key } });

/**
 * What an `expectFault` step's failure says: nothing when a rule faulted it (an error whose message names the rule,
 * or a connection closed with no answer, which fetch reports as "fetch failed"; a refused one is no sandbox at all),
 * else why it is not a fault.
 */
export function faultFailures(error: unknown): string[] {
  if (error instanceof SandboxApiError)
    return error.reason.startsWith('sandbox API fault ') ? [] : [`expected an API fault, got ${error.message}`];
  const cause = (error as { cause?: { code?: string } }).cause?.code;
  if (error instanceof TypeError && error.message === 'fetch failed' && cause !== 'ECONNREFUSED') return [];
  return [`expected an API fault, got ${(error as Error).message}`];
}
