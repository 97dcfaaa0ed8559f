import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scenarioSchema } from '../src/core/scenarios/scenario.js';
import { loadScenarioFile, type RunResult, runScenarios } from '../src/sandbox/scenarios/scenario-runner.js';
import { api, ROOT, useServer } from './helpers.js';

/** An account's story as a scenario (GET /sandbox/v1/scenario): recorded, then run on a fresh account, it passes. */
const server = await useServer();
const FIXTURES = readdirSync(join(ROOT, 'fixtures')).filter((name) => name.endsWith('.json'));

/** Each failed step of a run, with why. */
const failures = (run: RunResult) =>
  run.scenarios.flatMap((s) =>
    s.steps
      .filter((step) => step.status !== 'passed')
      .map((step) => `${step.label}: ${step.status} ${step.failures.join('; ')}`),
  );

/** Records an account's story, checks it is a scenario, and runs it on a fresh account. */
async function replay(key: string) {
  const recorded = await api(server.url, key).data('GET', '/sandbox/v1/scenario?name=replay');
  const scenario = scenarioSchema.parse(recorded);
  return { scenario, run: await runScenarios([{ file: 'recorded.json', scenario }], { url: server.url }) };
}

describe('recording an account as a scenario', () => {
  it.each(FIXTURES)('%s: run, record, run the record: it passes, with the same outcome', async (name) => {
    const original = await runScenarios([await loadScenarioFile(join(ROOT, 'fixtures', name))], { url: server.url });
    expect(failures(original)).toEqual([]);
    const { scenario, run } = await replay(original.scenarios[0]!.apiKey);
    expect(failures(run)).toEqual([]);
    expect(scenario.steps.some((step) => step.do === 'expectVaPayment' || step.do === 'expectBalance')).toBe(true);
  });

  it('an incident file loaded into another account: recorded, its story replays, and no step names a URL of the file', async () => {
    const source = api(server.url, 'sk_record_source');
    const payment = await source.data('POST', '/api/v1/va-payments', {
      paymentHubId: 1,
      currency: 'ARS',
      lockMode: 'amount',
      amount: 700,
      callbackUrl: 'https://merchant.example/hooks/va',
    });
    await source.data('POST', '/sandbox/v1/transfers', { to: 'SANDBOX.HUB.COBROS', total: 300 });
    await source.data('POST', '/sandbox/v1/transfers', { to: 'SANDBOX.HUB.COBROS', total: 700, taxes: 7 });
    const client = await source.data('POST', '/api/v1/clients', {
      paymentHubId: 1,
      name: 'Ana',
      taxId: '20-12345678-6',
      cashinCallbackUrl: 'https://merchant.example/hooks/cashin',
    });
    await source.data('POST', '/sandbox/v1/transfers', { to: client.cvu, total: 50 });
    await source.data('POST', `/sandbox/v1/clients/${client.id}/debits`, { amount: 20, description: 'fee' });
    await source.data('POST', '/sandbox/v1/clock/advance', { seconds: 120 });
    const incident = await source.data('GET', '/sandbox/v1/export');
    const target = api(server.url, 'sk_record_target');
    await target.data('POST', '/sandbox/v1/import', incident);

    const { scenario, run } = await replay('sk_record_target');
    expect(failures(run)).toEqual([]);
    expect(JSON.stringify(scenario)).not.toContain('merchant.example');
    expect(scenario.steps).toContainEqual({
      do: 'expectVaPayment',
      id: '${payment_1.id}',
      match: expect.objectContaining({ status: 'completed', totalReceived: 700, receivedAmount: 693 }),
    });
    expect(scenario.steps).toContainEqual({
      do: 'expectBalance',
      clientId: '${client_1.id}',
      match: { totalCashIn: 50, totalCashOut: 20, totalInvoiced: 0, balance: 30 },
    });
    expect(payment.status).toBe('waiting');
  });
});
