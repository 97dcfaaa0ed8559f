import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { faultsApiCommand } from '../src/cli/commands/faults-api.js';
import { apiFaultSchema } from '../src/core/records/index.js';
import { API_FAULT_KINDS, API_FAULT_TYPES, apiFaultKinds } from '../src/core/records/words.js';
import { openApiDocument } from '../src/sandbox/http/openapi.js';

const doc = (name: string) => readFileSync(resolve(import.meta.dirname, '..', 'docs', name), 'utf8');

/** The API fault kinds' words are declared once (`API_FAULT_KINDS`); what repeats them is held to it. */
describe('the API fault kinds, in words', () => {
  it('the rule schema has a fault of each declared kind, described in its words', () => {
    expect(apiFaultSchema.options.map((option) => option.shape.type.value)).toEqual(API_FAULT_TYPES);
    for (const option of apiFaultSchema.options)
      expect(option.description).toBe(API_FAULT_KINDS[option.shape.type.value].does);
  });

  it("docs/api-faults.md's table has a row for each kind and no other; docs/api.md names them all", () => {
    const rows = [...doc('api-faults.md').matchAll(/^\| `\{"type": "(\w+)"/gm)].map((match) => match[1]);
    expect(rows).toEqual(API_FAULT_TYPES);
    expect(doc('api.md')).toContain(apiFaultKinds('named'));
  });

  it('the OpenAPI summary and the CLI name every kind', () => {
    const named = apiFaultKinds('named');
    for (const kind of Object.values(API_FAULT_KINDS)) expect(named).toContain(kind.named);
    const document = openApiDocument('test') as { paths: Record<string, Record<string, { summary: string }>> };
    expect(document.paths['/sandbox/v1/api-faults']!.post!.summary).toContain(named);
    const api = faultsApiCommand();
    expect(api.description()).toContain(apiFaultKinds('many'));
    expect(api.commands.find((command) => command.name() === 'add')!.description()).toContain(named);
  });
});
