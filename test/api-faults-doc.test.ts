import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scenarioSchema } from '../src/core/scenarios/scenario.js';
import { runScenarios } from '../src/sandbox/scenarios/scenario-runner.js';
import { api, eventually, ROOT, runCli, useReceiver, useServer } from './helpers.js';

/** docs/api-faults.md's recipes, run as written: its JavaScript against a real server and receiver, its scenario by the runner. */
const page = readFileSync(join(ROOT, 'docs', 'api-faults.md'), 'utf8');
const blocks = (lang: string) => [...page.matchAll(new RegExp(`\`\`\`${lang}\\n([^]*?)\`\`\``, 'g'))].map((m) => m[1]!);

describe('docs/api-faults.md', () => {
  it('the idempotent-retry recipe: a lost-answer create, the same request again, one payment and one created callback', async () => {
    const { url } = await useServer();
    const receiver = await useReceiver();
    const [recipe] = blocks('js');
    const run = new (Object.getPrototypeOf(async () => {}).constructor)(
      'SANDBOX_URL',
      'API_KEY',
      'RECEIVER_URL',
      recipe,
    ) as (...args: string[]) => Promise<{ id: string }>;
    const payment = await run(url, 'sk_recipe', receiver.url);
    const account = api(url, 'sk_recipe');
    const payments = await account.list('/api/v1/va-payments');
    expect(payments.data.map((p: { id: string }) => p.id)).toEqual([payment.id]);
    expect((await account.list('/sandbox/v1/api-faults')).data[0]).toMatchObject({ hits: 1, spent: true });
    await eventually(async () => (await account.list('/sandbox/v1/deliveries')).data[0]?.status === 'delivered');
    expect(receiver.received.map((r) => [r.url, r.body.eventType, r.body.vaPaymentId])).toEqual([
      ['/callbacks', 'created', payment.id],
    ]);
  });

  it('the CLI recipe: the lost answer exits 3, the same command with its --idempotency-key gets that payment, one exists', async () => {
    const { url } = await useServer();
    const recipe = blocks('sh').find((block) => block.includes('--idempotency-key'))!;
    const env = { VA_SANDBOX_URL: url, VA_SANDBOX_API_KEY: 'sk_recipe_cli' };
    const runs = [];
    for (const line of recipe.trim().split('\n')) {
      const args = line.replace(/#.*$/, '').trim().split(/\s+/).slice(1);
      runs.push(await runCli([...args, ...(args[0] === 'payments' ? ['--json'] : [])], env));
    }
    expect(runs.map((run) => run.code)).toEqual([0, 3, 0, 0]);
    expect(runs[1]!.stderr).toMatch(/socket hang up/);
    const retried = JSON.parse(runs[2]!.stdout);
    expect(JSON.parse(runs[3]!.stdout).data.map((p: { id: string }) => p.id)).toEqual([retried.id]);
  });

  it('the scenario passes on a real server: a 503 and a lost answer, each retried with its key', async () => {
    const { url } = await useServer();
    const json = blocks('json').find((block) => block.includes('"$schema"'))!;
    const run = await runScenarios([{ file: 'docs/api-faults.md', scenario: scenarioSchema.parse(JSON.parse(json)) }], {
      url,
    });
    const [scenario] = run.scenarios;
    expect(scenario!.steps.filter((s) => s.status !== 'passed')).toEqual([]);
    expect(scenario!.steps.map((s) => s.label)).toContain('apiFault POST /api/v1/va-payments: lost_answer');
    expect((await api(url, scenario!.apiKey).list('/api/v1/va-payments')).pagination.total).toBe(2);
  });
});
