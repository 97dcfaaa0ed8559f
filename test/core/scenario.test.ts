import { describe, expect, it } from 'vitest';
import { issuesToDetails } from '../../src/core/records/schemas.js';
import { mismatches } from '../../src/core/scenarios/mismatches.js';
import { interpolate, ScenarioReferenceError } from '../../src/core/scenarios/references.js';
import { scenarioSchema } from '../../src/core/scenarios/scenario.js';

const scope = {
  payment: { id: 'p-1', amount: 5000, cashIns: [{ total: 40 }], metadata: { a: 1 } },
  receiver: { url: 'http://127.0.0.1:9/s1' },
};

describe('references', () => {
  it('keeps the value of a string that is one reference, and splices text into longer strings', () => {
    expect(
      interpolate(
        { amount: '${payment.amount}', url: '${receiver.url}/va', first: '${payment.cashIns.0.total}' },
        scope,
      ),
    ).toEqual({
      amount: 5000,
      url: 'http://127.0.0.1:9/s1/va',
      first: 40,
    });
    expect(interpolate(['${payment.metadata}', 'm=${payment.metadata}'], scope)).toEqual([{ a: 1 }, 'm={"a":1}']);
  });

  it('fails on a path that is not in the result', () => {
    expect(() => interpolate('${payment.cvu}', scope)).toThrow(ScenarioReferenceError);
    expect(() => interpolate('${payment.cvu}', scope)).toThrow('${payment.cvu} is undefined');
  });
});

describe('mismatches', () => {
  it('matches objects on the keys they give, arrays item by item and in length, values exactly', () => {
    expect(
      mismatches(
        { status: 'completed', payload: { total: 10 } },
        { status: 'completed', extra: 1, payload: { total: 10, taxes: 0 } },
      ),
    ).toEqual([]);
    expect(mismatches({ status: 'completed' }, { status: 'waiting' })).toEqual([
      'status: expected "completed", got "waiting"',
    ]);
    expect(
      mismatches([{ eventType: 'created' }], [{ eventType: 'created' }, { eventType: 'failed' }], 'callbacks'),
    ).toEqual(['callbacks: expected 1 items, got 2']);
    expect(mismatches({ amount: null }, { amount: 0 })).toEqual(['amount: expected null, got 0']);
    expect(mismatches({ a: { b: 1 } }, { a: 'x' })).toEqual(['a: expected an object, got "x"']);
  });
});

describe('the scenario file format', () => {
  const parse = (steps: unknown[]) => {
    const result = scenarioSchema.safeParse({ version: 1, name: 'x', steps });
    return result.success ? [] : issuesToDetails(result.error);
  };

  it('checks request bodies with the API schemas, unless a field holds a reference', () => {
    expect(parse([{ do: 'createVaPayment', body: { lockMode: 'time', amount: 10.001, ttlSeconds: 0 } }])).toEqual([
      'steps.0.body.paymentHubId: Invalid input: expected number, received undefined',
      'steps.0.body.currency: Invalid input: expected string, received undefined',
      'steps.0.body.amount: must have at most 2 decimals',
      'steps.0.body.ttlSeconds: Too small: expected number to be >=1',
    ]);
    expect(
      parse([
        { name: 'p', do: 'createVaPayment', body: { paymentHubId: 1, currency: 'ARS', lockMode: 'time' } },
        { do: 'transfer', body: { to: '${p.cvu}', total: '${p.amount}' } },
      ]),
    ).toEqual([]);
    expect(parse([{ do: 'transfer', body: { total: 1 } }])).toEqual([
      'steps.0.body.to: Invalid input: expected string, received undefined',
    ]);
  });

  it('refuses references to steps that come later or do not exist, and names used twice', () => {
    expect(
      parse([
        { do: 'getVaPayment', id: '${later.id}' },
        { name: 'later', do: 'getHub' },
      ]),
    ).toEqual(['steps.0: refers to ${later…}, which no earlier step is named']);
    expect(
      parse([
        { name: 'a', do: 'getHub' },
        { name: 'a', do: 'getHub' },
      ]),
    ).toEqual(['steps.1.name: "a" is already taken']);
    expect(parse([{ name: 'receiver', do: 'getHub' }])).toEqual(['steps.0.name: "receiver" is already taken']);
    expect(parse([{ name: 'self', do: 'getHub', expect: { id: '${self.id}' } }])).toEqual([]);
  });

  it('refuses unknown step kinds, unknown fields and bad expectation values', () => {
    expect(parse([{ do: 'teleport' }])[0]).toMatch(/^steps\.0\.do: /);
    expect(parse([{ do: 'getHub', colour: 'red' }])).toEqual(['steps.0.colour: unknown field']);
    expect(parse([{ do: 'expectVaPayment', id: 'x', match: { status: 'paid' } }])[0]).toMatch(
      /^steps\.0\.match\.status: /,
    );
    expect(parse([{ do: 'expectCallbacks', url: 'x', callbacks: [{ eventType: 'paid' }] }])[0]).toMatch(
      /^steps\.0\.callbacks\.0\.eventType: /,
    );
  });
});
