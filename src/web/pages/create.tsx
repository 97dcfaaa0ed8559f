import { useState, type FormEvent } from 'react';
import type { z } from 'zod';
import { createClientSchema, createVaPaymentSchema } from '../../core/records/schemas.js';
import { SandboxApiError, fieldErrors } from '../api.js';
import { navigate } from '../router.js';
import { Field, SelectField, TextAreaField } from '../fields.js';
import { ErrorNote, useAction, useApp } from '../ui.js';
import { filled, issuesOf, jsonObjectOr, numberOr } from './form-values.js';

/**
 * A form's state and submit: the values are checked with the API's own zod schema first, and the API's answer
 * (if it refuses) lands on the same fields; `toBody` turns the texts typed into the request body.
 */
function useCreateForm<V extends Record<string, string>, S extends z.ZodType>(initial: V, schema: S, toBody: (values: V) => unknown, send: (body: z.input<S>) => Promise<void>) {
  const [values, setValues] = useState(initial);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const action = useAction(async () => {
    const body = toBody(values);
    const issues = issuesOf(schema, body);
    setErrors(fieldErrors(issues));
    if (issues.length > 0) return;
    try {
      // The schema the API validates with has just accepted it.
      await send(body as z.input<S>);
    } catch (error) {
      if (error instanceof SandboxApiError) setErrors(fieldErrors(error.details));
      throw error;
    }
  });
  const bind = (name: keyof V & string) => ({
    name,
    value: values[name],
    error: errors[name],
    onChange: (event: { target: { value: string } }) => setValues((old) => ({ ...old, [name]: event.target.value })),
  });
  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    void action.run();
  };
  return { bind, onSubmit, action, errors };
}

const list = (text: string) => (text.trim() === '' ? undefined : text.split(',').map((item) => item.trim()));

function VaPaymentForm() {
  const { api } = useApp();
  const form = useCreateForm(
    {
      paymentHubId: '1', currency: 'ARS', lockMode: 'time', amount: '', ttlSeconds: '1800', callbackUrl: '', successUrl: '', failureUrl: '',
      clientId: '', clientTaxId: '', clientName: '', externalReference: '', metadata: '',
    },
    createVaPaymentSchema,
    (v) => filled({ ...v, paymentHubId: numberOr(v.paymentHubId), amount: numberOr(v.amount), ttlSeconds: numberOr(v.ttlSeconds), metadata: jsonObjectOr(v.metadata) }),
    async (body) => {
      const payment = await api.vaPayments.create(body);
      navigate(`/payments/${payment.id}`);
    },
  );
  return (
    <form className="card form-grid" aria-labelledby="new-payment" onSubmit={form.onSubmit} noValidate>
      <h2 id="new-payment">New VA payment</h2>
      <Field label="Payment hub ID" inputMode="numeric" {...form.bind('paymentHubId')} />
      <Field label="Currency" {...form.bind('currency')} />
      <SelectField
        label="Lock mode"
        {...form.bind('lockMode')}
        options={[
          ['time', 'time: a CVU of its own, any amount'],
          ['amount', 'amount: the hub CVU, exact amount'],
          ['amount_and_time', 'amount_and_time: own CVU, exact amount'],
        ]}
      />
      <Field label="Amount (ARS)" inputMode="decimal" hint="empty for an open amount (lock mode time)" {...form.bind('amount')} />
      <Field label="TTL (seconds)" inputMode="numeric" {...form.bind('ttlSeconds')} />
      <Field label="Callback URL" type="url" hint="receives all seven events" {...form.bind('callbackUrl')} />
      <Field label="Success URL" type="url" {...form.bind('successUrl')} />
      <Field label="Failure URL" type="url" {...form.bind('failureUrl')} />
      <Field label="Client ID" {...form.bind('clientId')} />
      <Field label="Client tax ID" {...form.bind('clientTaxId')} />
      <Field label="Client name" {...form.bind('clientName')} />
      <Field label="External reference" {...form.bind('externalReference')} />
      <TextAreaField label="Metadata (JSON object)" {...form.bind('metadata')} />
      <FormFoot action={form.action} errors={form.errors} label="Create VA payment" />
    </form>
  );
}

function ClientForm() {
  const { api } = useApp();
  const form = useCreateForm(
    {
      paymentHubId: '1', name: '', taxId: '', cashinCallbackUrl: '', emails: '', phones: '', aliasPrefixHint: '', aliasSuffixHint: '',
      externalReference: '', metadata: '',
    },
    createClientSchema,
    (v) => filled({ ...v, paymentHubId: numberOr(v.paymentHubId), emails: list(v.emails), phones: list(v.phones), metadata: jsonObjectOr(v.metadata) }),
    async (body) => {
      const client = await api.clients.create(body);
      navigate(`/clients/${client.id}`);
    },
  );
  return (
    <form className="card form-grid" aria-labelledby="new-client" onSubmit={form.onSubmit} noValidate>
      <h2 id="new-client">New client</h2>
      <Field label="Payment hub ID" inputMode="numeric" {...form.bind('paymentHubId')} />
      <Field label="Name" {...form.bind('name')} />
      <Field label="Tax ID" hint="digits with optional hyphens" {...form.bind('taxId')} />
      <Field label="Cash-in callback URL" type="url" {...form.bind('cashinCallbackUrl')} />
      <Field label="Emails" hint="comma-separated" {...form.bind('emails')} />
      <Field label="Phones" hint="comma-separated" {...form.bind('phones')} />
      <Field label="Alias prefix hint" {...form.bind('aliasPrefixHint')} />
      <Field label="Alias suffix hint" {...form.bind('aliasSuffixHint')} />
      <Field label="External reference" {...form.bind('externalReference')} />
      <TextAreaField label="Metadata (JSON object)" {...form.bind('metadata')} />
      <FormFoot action={form.action} errors={form.errors} label="Create client" />
    </form>
  );
}

/** The submit button, and what no field shows: an error of the whole body, or the API's refusal. */
function FormFoot({ action, errors, label }: { action: { busy: boolean; error: unknown }; errors: Record<string, string>; label: string }) {
  const whole = errors['(body)'];
  return (
    <div className="actions wide">
      <button type="submit" disabled={action.busy}>
        {label}
      </button>
      {whole ? (
        <span className="field-error" role="alert">
          {whole}
        </span>
      ) : null}
      <ErrorNote error={action.error} />
    </div>
  );
}

/** `/ui/create`: the two create forms, side by side on a wide screen. */
export function CreatePage() {
  return (
    <main>
      <h1>Create</h1>
      <div className="columns">
        <VaPaymentForm />
        <ClientForm />
      </div>
    </main>
  );
}
