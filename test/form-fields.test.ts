import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClientSchema, createVaPaymentSchema } from '../src/core/records/schemas.js';
import { bodyOf, formFields } from '../src/web/form-fields.js';
import { labelOf } from '../src/web/labels.js';

/** The web inspector's create forms come from the request schemas: a field added there shows with no line in src/web. */
describe('forms and facts from the declarations', () => {
  it('a create form has a control for each field of its request schema, of its kind, in its order', () => {
    const fields = formFields(createVaPaymentSchema);
    expect(fields.map((field) => field.name)).toEqual(Object.keys(createVaPaymentSchema.shape));
    const kind = Object.fromEntries(fields.map((field) => [field.name, field.kind]));
    expect(kind).toMatchObject({
      paymentHubId: 'number',
      lockMode: 'choice',
      amount: 'number',
      ttlSeconds: 'number',
      clientName: 'text',
      metadata: 'json',
    });
    expect(fields.find((field) => field.name === 'lockMode')!.choices).toEqual(['time', 'amount', 'amount_and_time']);
    expect(fields.find((field) => field.name === 'ttlSeconds')!.initial).toBe('1800');
    expect(formFields(createClientSchema).find((field) => field.name === 'emails')!.kind).toBe('list');
  });

  it('a field added to a request schema is in its form, and its body', () => {
    const withPurpose = z.strictObject({ ...createVaPaymentSchema.shape, purpose: z.string().max(80).nullish() });
    const fields = formFields(withPurpose);
    expect(fields.at(-1)).toEqual({ name: 'purpose', kind: 'text', choices: [], initial: '' });
    const body = bodyOf(fields, {
      paymentHubId: '1',
      amount: '12.5',
      metadata: '{"a":1}',
      purpose: 'rent',
      clientName: '',
    });
    expect(body).toEqual({ paymentHubId: 1, amount: 12.5, metadata: { a: 1 }, purpose: 'rent' });
  });

  it('labels a field from its name, the contract initialisms written as such', () => {
    expect(labelOf('externalReference')).toBe('External reference');
    expect(labelOf('callbackUrl')).toBe('Callback URL');
    expect(labelOf('paymentHubId')).toBe('Payment hub ID');
    expect(labelOf('purpose')).toBe('Purpose');
  });
});
