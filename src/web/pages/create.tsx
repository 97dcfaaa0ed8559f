import { type FormEvent, useState } from 'react';
import type { z } from 'zod';
import { createClientSchema, createVaPaymentSchema } from '../../core/records/schemas.js';
import { fieldErrors, SandboxApiError } from '../api.js';
import { bodyOf, type Control, type FormField, formFields } from '../form-fields.js';
import { navigate } from '../router.js';
import { SchemaFields } from '../schema-form.js';
import { ErrorNote, useAction, useApp } from '../ui.js';
import { issuesOf } from './form-values.js';

/**
 * A form's state and submit: the values are checked with the API's own zod schema first, and the API's answer
 * (if it refuses) lands on the same fields; `toBody` turns the texts typed into the request body.
 */
function useCreateForm<V extends Record<string, string>, S extends z.ZodType>(
  initial: V,
  schema: S,
  toBody: (values: V) => unknown,
  send: (body: z.input<S>) => Promise<void>,
) {
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

const PAYMENT_FIELDS = formFields(createVaPaymentSchema);
const CLIENT_FIELDS = formFields(createClientSchema);

/** What the VA payment form says beyond its request schema. */
const PAYMENT_CONTROLS: Record<string, Control> = {
  paymentHubId: { label: 'Payment hub ID' },
  lockMode: {
    choices: {
      time: 'time: a CVU of its own, any amount',
      amount: 'amount: the hub CVU, exact amount',
      amount_and_time: 'amount_and_time: own CVU, exact amount',
    },
  },
  amount: { label: 'Amount (ARS)', hint: 'empty for an open amount (lock mode time)', inputMode: 'decimal' },
  ttlSeconds: { label: 'TTL (seconds)' },
  callbackUrl: { hint: 'receives all seven events' },
};

/** What the client form says beyond its request schema. */
const CLIENT_CONTROLS: Record<string, Control> = {
  paymentHubId: { label: 'Payment hub ID' },
  taxId: { hint: 'digits with optional hyphens' },
  cashinCallbackUrl: { label: 'Cash-in callback URL' },
};

/** The first values of a form: each field's default (`currency` the one the API supports), the hub 1. */
const initialOf = (fields: FormField[], given: Record<string, string>) =>
  Object.fromEntries(fields.map(({ name, initial }) => [name, given[name] ?? initial])) as Record<string, string>;

function VaPaymentForm() {
  const { api } = useApp();
  const form = useCreateForm(
    initialOf(PAYMENT_FIELDS, { paymentHubId: '1', currency: 'ARS', lockMode: 'time' }),
    createVaPaymentSchema,
    (values) => bodyOf(PAYMENT_FIELDS, values),
    async (body) => {
      const payment = await api.vaPayments.create(body);
      navigate(`/payments/${payment.id}`);
    },
  );
  return (
    <form className="card form-grid" aria-labelledby="new-payment" onSubmit={form.onSubmit} noValidate>
      <h2 id="new-payment">New VA payment</h2>
      <SchemaFields fields={PAYMENT_FIELDS} bind={form.bind} controls={PAYMENT_CONTROLS} />
      <FormFoot action={form.action} errors={form.errors} label="Create VA payment" />
    </form>
  );
}

function ClientForm() {
  const { api } = useApp();
  const form = useCreateForm(
    initialOf(CLIENT_FIELDS, { paymentHubId: '1' }),
    createClientSchema,
    (values) => bodyOf(CLIENT_FIELDS, values),
    async (body) => {
      const client = await api.clients.create(body);
      navigate(`/clients/${client.id}`);
    },
  );
  return (
    <form className="card form-grid" aria-labelledby="new-client" onSubmit={form.onSubmit} noValidate>
      <h2 id="new-client">New client</h2>
      <SchemaFields fields={CLIENT_FIELDS} bind={form.bind} controls={CLIENT_CONTROLS} />
      <FormFoot action={form.action} errors={form.errors} label="Create client" />
    </form>
  );
}

/** The submit button, and what no field shows: an error of the whole body, or the API's refusal. */
function FormFoot({
  action,
  errors,
  label,
}: {
  action: { busy: boolean; error: unknown };
  errors: Record<string, string>;
  label: string;
}) {
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
