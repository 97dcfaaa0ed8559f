import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadScenarioFile, runScenarios, type ScenarioResult } from '../src/sandbox/scenarios/scenario-runner.js';
import { ROOT, useServer } from './helpers.js';

const FIXTURES = join(ROOT, 'fixtures');
const files = readdirSync(FIXTURES)
  .filter((name) => name.endsWith('.json'))
  .sort();
const server = await useServer();

/** What failed, readably, so a red test says which step and why. */
const failuresOf = (result: ScenarioResult) =>
  result.steps.filter((s) => s.status !== 'passed').map((s) => `${s.label}: ${s.status} ${s.failures.join(' | ')}`);

describe('the scenarios under fixtures/', () => {
  it('are at least ten', () => {
    expect(files.length).toBeGreaterThanOrEqual(10);
  });

  it.each(files)('%s passes against the sandbox, in an account of its own', async (name) => {
    const loaded = await loadScenarioFile(join(FIXTURES, name));
    const run = await runScenarios([loaded], { url: server.url });
    const [result] = run.scenarios;
    expect(failuresOf(result!)).toEqual([]);
    expect(result!.status).toBe('passed');
    expect(result!.steps.length).toBe(loaded.scenario.steps.length);
  });
});
