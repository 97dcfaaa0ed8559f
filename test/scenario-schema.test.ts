import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { scenarioJsonSchema, scenarioSchema } from '../src/core/scenarios/scenario.js';
import { runScenarios } from '../src/sandbox/scenarios/scenario-runner.js';
import { ROOT, useServer } from './helpers.js';

const SHIPPED = JSON.parse(readFileSync(join(ROOT, 'scenario.schema.json'), 'utf8'));
const validate = new Ajv2020({ strict: false, allErrors: true }).compile(SHIPPED);
const FIXTURES = readdirSync(join(ROOT, 'fixtures')).filter((name) => name.endsWith('.json'));

describe('the scenario format as a JSON Schema', () => {
  it('is the format itself: the shipped file is what the schemas give (node scripts/scenario-schema.js writes it)', () => {
    expect(SHIPPED).toEqual(scenarioJsonSchema());
  });

  it('is served at /scenario.schema.json without a key', async () => {
    const server = await useServer();
    const response = await fetch(`${server.url}/scenario.schema.json`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(SHIPPED);
  });

  it.each(FIXTURES)('is named by %s, which it accepts', (name) => {
    const fixture = JSON.parse(readFileSync(join(ROOT, 'fixtures', name), 'utf8'));
    expect(fixture.$schema).toBe('../scenario.schema.json');
    expect(validate(fixture), JSON.stringify(validate.errors)).toBe(true);
  });

  it('refuses what the format refuses: an unknown step, an unknown body field, a wrong value; a reference passes as a string', () => {
    const scenario = (step: object) => ({ version: 1, name: 'x', steps: [step] });
    const body = { paymentHubId: 1, currency: 'ARS', lockMode: 'time' };
    expect(validate(scenario({ do: 'teleport' }))).toBe(false);
    expect(validate(scenario({ do: 'createVaPayment', body: { ...body, colour: 'red' } }))).toBe(false);
    expect(validate(scenario({ do: 'createVaPayment', body: { ...body, lockMode: 'sometimes' } }))).toBe(false);
    expect(validate(scenario({ do: 'createVaPayment', body: { ...body, amount: '${earlier.amount}' } }))).toBe(true);
    expect(validate(scenario({ do: 'createVaPayment', body }))).toBe(true);
  });
});

describe('docs/scenarios.md', () => {
  const examples = [...readFileSync(join(ROOT, 'docs', 'scenarios.md'), 'utf8').matchAll(/```json\n([^]*?)```/g)].map(
    (match) => JSON.parse(match[1]!),
  );

  it('holds examples, each a scenario that runs as written and passes', async () => {
    expect(examples.length).toBeGreaterThan(0);
    const run = await runScenarios(
      examples.map((example, i) => ({
        file: `docs/scenarios.md example ${i + 1}`,
        scenario: scenarioSchema.parse(example),
      })),
    );
    expect(
      run.scenarios.map((s) => [
        s.status,
        s.steps.filter((step) => step.status !== 'passed').flatMap((step) => step.failures),
      ]),
    ).toEqual(examples.map(() => ['passed', []]));
  });
});
