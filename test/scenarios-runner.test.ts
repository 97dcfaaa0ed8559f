import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  loadScenarioFile,
  type RunEvent,
  runScenarios,
  ScenarioFileError,
} from '../src/sandbox/scenarios/scenario-runner.js';
import { api, freePort, PAYMENT, ROOT, useServer } from './helpers.js';

const server = await useServer();
const fixture = (name: string) => loadScenarioFile(join(ROOT, 'fixtures', name));
const failing = () => loadScenarioFile(join(ROOT, 'test', 'scenario-files', 'failing.json'));

describe('the scenario runner', () => {
  it('reports each failed expectation with what differs, and skips what follows a step that could not run', async () => {
    const events: RunEvent[] = [];
    const run = await runScenarios([await failing()], { url: server.url, onEvent: (event) => events.push(event) });
    expect(run).toMatchObject({ passed: 0, failed: 1 });
    const steps = run.scenarios[0]!.steps;
    expect(steps.map((s) => s.status)).toEqual(['passed', 'passed', 'failed', 'failed', 'failed', 'skipped']);
    expect(steps[2]!.failures).toEqual(['status: expected "underpaid", got "completed"']);
    expect(steps[3]!.failures).toEqual([
      'callbacks: expected 2 items, got 3',
      'callbacks[1].eventType: expected "succeeded", got "cash_in_received"',
      'received: created (1 attempt), cash_in_received (1 attempt), succeeded (1 attempt)',
    ]);
    expect(steps[4]!.failures[0]).toMatch(/^NOT_FOUND: /);
    // Every step is reported as it finishes, between the scenario's start and end.
    expect(events.map((e) => e.type)).toEqual(['scenario:start', ...steps.map(() => 'step'), 'scenario:end']);
  });

  it('runs each scenario in a fresh account: one that leaves an amount lock behind passes twice in a row', async () => {
    const once = await fixture('amount-lock-with-taxes.json');
    const run = await runScenarios([once, once], { url: server.url });
    expect(run.scenarios.map((s) => s.status)).toEqual(['passed', 'passed']);
    const [first, second] = run.scenarios.map((s) => s.apiKey);
    expect(first).not.toBe(second);
    // The first account still holds its lock: the same scenario in it would conflict.
    const left = await api(server.url, first).post('/api/v1/va-payments', {
      ...PAYMENT,
      amount: 5000,
      lockMode: 'amount',
    });
    expect(left.body.error.code).toBe('AMOUNT_LOCK_CONFLICT');
  });

  it('with an API key, resets that account before each scenario instead', async () => {
    const once = await fixture('amount-lock-with-taxes.json');
    const run = await runScenarios([once, once], { url: server.url, apiKey: 'sk_runner_shared' });
    expect(run.scenarios.map((s) => [s.status, s.apiKey])).toEqual([
      ['passed', 'sk_runner_shared'],
      ['passed', 'sk_runner_shared'],
    ]);
  });

  it('fails every scenario, running nothing, when the account it was told to use cannot be reset', async () => {
    const locked = await useServer({ apiKeys: ['sk_only'] });
    const run = await runScenarios([await fixture('cancel.json')], { url: locked.url, apiKey: 'sk_other' });
    const steps = run.scenarios[0]!.steps;
    expect(steps[0]).toMatchObject({
      do: 'reset',
      status: 'failed',
      failures: [expect.stringMatching(/^UNAUTHORIZED: /)],
    });
    expect(new Set(steps.slice(1).map((s) => s.status))).toEqual(new Set(['skipped']));
  });

  it('hands steps the --callback-url address of its receiver, listening on that port', async () => {
    const port = await freePort();
    const run = await runScenarios([await fixture('cancel.json')], {
      url: server.url,
      callbackUrl: `http://localhost:${port}`,
    });
    expect(run.scenarios[0]!.status).toBe('passed');
    const { data: deliveries } = await api(server.url, run.scenarios[0]!.apiKey).list(
      '/sandbox/v1/deliveries?limit=100',
    );
    expect(deliveries.map((d: any) => d.url)).toContain(`http://localhost:${port}/s1/va`);
  });

  it('starts an embedded sandbox when given no URL, and stops it after', async () => {
    const run = await runScenarios([await fixture('balance-formula.json')]);
    expect(run.scenarios[0]!.status).toBe('passed');
    await expect(fetch(`${run.url}/health`)).rejects.toThrow();
  });

  it('refuses a file that is not a scenario, naming every problem', async () => {
    const error = await loadScenarioFile(join(ROOT, 'test', 'scenario-files', 'invalid.json')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ScenarioFileError);
    expect((error as ScenarioFileError).details).toEqual(
      expect.arrayContaining([
        'steps.0.body.colour: unknown field',
        'steps.0.body.amount: must have at most 2 decimals',
        expect.stringMatching(/^steps\.0\.body\.lockMode: /),
        expect.stringMatching(/^steps\.2\.do: Invalid option "teleport": expected one of "createVaPayment"\|/),
        expect.stringMatching(
          /^steps\.3\.do: Invalid option "advanceClok": did you mean "advanceClock"\? expected one of /,
        ),
      ]),
    );
    // The step names there are, and nothing else (the apiFault step, whose `do` may be left out, adds no `undefined`).
    const steps = (error as ScenarioFileError).details
      .find((detail) => detail.startsWith('steps.2.do'))!
      .split('expected one of ')[1]!
      .split('|');
    expect(steps).toEqual(
      expect.arrayContaining(['"createVaPayment"', '"advanceClock"', '"apiFault"', '"expectEvents"']),
    );
    expect(steps.filter((step) => !/^"[a-zA-Z]+"$/.test(step))).toEqual([]);
    await expect(loadScenarioFile(join(ROOT, 'no-such.json'))).rejects.toThrow('no-such.json: cannot read it (ENOENT)');
  });
});
