import type { SandboxClient } from '../../client/api-client.js';
import { pathMatches } from '../../core/api-faults/api-faults.js';
import type { JournalItem } from '../../core/records/request-journal.js';
import { mismatches } from '../../core/scenarios/mismatches.js';
import type { ScenarioStep } from '../../core/scenarios/scenario.js';

/** `{"expectRequest": {...}}` (contract part 9): what the account sent to `/api/v1`, read from its request journal. */

type Expected = Extract<ScenarioStep, { do: 'expectRequest' }>['expectRequest'];

/** How many of the closest requests a failure shows. */
const CLOSEST = 3;

/** `POST /api/v1/va-payments`, as a step's label shows it. */
export const requestTarget = ({ expectRequest: e }: { expectRequest: Expected }): string =>
  `${e.method ?? '*'} ${e.path}`;

/** The step's failures: none when as many requests matched as it asks; else how many did, and the closest ones seen. */
export async function expectRequest(expected: Expected, client: SandboxClient): Promise<string[]> {
  const seen = await client.requests.all();
  const matching = seen.filter((request) => problemsOf(expected, request).length === 0).length;
  const passed = expected.times === undefined ? matching > 0 : matching === expected.times;
  if (passed) return [];
  const wanted = expected.times === undefined ? 'at least 1' : `exactly ${expected.times}`;
  const failure = `expected ${wanted} ${requestTarget({ expectRequest: expected })}${expected.body ? ` with body ${JSON.stringify(expected.body)}` : ''}, saw ${matching}`;
  const closest = seen
    .map((request) => ({ request, problems: problemsOf(expected, request) }))
    .filter(({ problems }) => problems.length > 0)
    .sort((a, b) => distance(a.problems) - distance(b.problems))
    .slice(0, CLOSEST)
    .map(
      ({ request, problems }) =>
        `closest: ${request.method} ${request.path} ${request.status ?? 'no answer'} (${request.id}): ${problems.join('; ')}`,
    );
  return [failure, ...(seen.length === 0 ? ['the account sent no /api/v1 request'] : closest)];
}

/** Why a request is not the one expected: its method, its path, each part of its body that differs. */
function problemsOf(expected: Expected, request: JournalItem): string[] {
  const problems: string[] = [];
  if (expected.method && expected.method !== request.method) problems.push(`method ${request.method}`);
  if (!pathMatches(expected.path, request.path)) problems.push(`path ${request.path}`);
  if (expected.body) problems.push(...mismatches(expected.body, request.requestBody, 'body'));
  return problems;
}

/** How far a request is from the one expected: a wrong path weighs most, then the method, then each body difference. */
const distance = (problems: string[]): number =>
  problems.reduce(
    (sum, problem) => sum + (problem.startsWith('path ') ? 100 : problem.startsWith('method ') ? 10 : 1),
    0,
  );
