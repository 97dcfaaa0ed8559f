import { useState } from 'react';
import type { z } from 'zod';
import { allocationSchema, createInvoiceSchema, ledgerEntrySchema } from '../../core/records/schemas.js';
import { INVOICE_TYPES } from '../../core/records/state.js';
import type { invoiceView } from '../../core/records/views.js';
import { fieldErrors } from '../api.js';
import { Field, SelectField } from '../fields.js';
import { ErrorNote, useAction, useApp } from '../ui.js';
import { filled, issuesOf, numberOr } from './form-values.js';

type Invoice = ReturnType<typeof invoiceView>;

/** A field of a form: typed text, money (sent as a number when it reads as one), or a choice. */
interface FormField {
  name: string;
  label: string;
  money?: true;
  options?: [string, string][];
  hint?: string;
  /** Goes into the path, not the body. */
  inPath?: true;
}

/**
 * A form of the client page: its fields' values, checked with the API's own schema before it is sent to `path`,
 * the fields left empty left out.
 */
function ClientForm({
  title,
  fields,
  schema,
  path,
  submit,
  initial = {},
  onDone,
}: {
  title: string;
  fields: FormField[];
  schema: z.ZodType;
  path: (values: Record<string, string>) => string;
  submit: string;
  initial?: Record<string, string>;
  onDone: () => void;
}) {
  const { api } = useApp();
  const [values, setValues] = useState<Record<string, string>>(initial);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [done, setDone] = useState<string | null>(null);
  const action = useAction(async () => {
    const sent = fields.filter((f) => !f.inPath);
    const body = filled(
      Object.fromEntries(sent.map((f) => [f.name, f.money ? numberOr(values[f.name] ?? '') : values[f.name]])),
    );
    const issues = issuesOf(schema, body);
    setErrors(fieldErrors(issues));
    setDone(null);
    if (issues.length > 0) return;
    await api.call('POST', path(values), { body });
    setDone('Done');
    onDone();
  });
  return (
    <form
      className="card form-grid"
      aria-label={title}
      onSubmit={(event) => {
        event.preventDefault();
        void action.run();
      }}
    >
      <h3>{title}</h3>
      {fields.map((f) => {
        const common = { label: f.label, value: values[f.name] ?? '', error: errors[f.name], hint: f.hint ?? '' };
        const set = (value: string) => setValues((current) => ({ ...current, [f.name]: value }));
        return f.options ? (
          <SelectField key={f.name} {...common} options={f.options} onChange={(event) => set(event.target.value)} />
        ) : (
          <Field
            key={f.name}
            {...common}
            inputMode={f.money ? 'decimal' : 'text'}
            onChange={(event) => set(event.target.value)}
          />
        );
      })}
      <div className="actions">
        <button type="submit" disabled={action.busy}>
          {submit}
        </button>
        {done ? <span role="status">{done}</span> : null}
      </div>
      <ErrorNote error={action.error} />
    </form>
  );
}

/** `POST /api/v1/clients/{id}/invoices`: a new invoice of the client. */
export function InvoiceForm({ clientId, onDone }: { clientId: string; onDone: () => void }) {
  return (
    <ClientForm
      title="New invoice"
      submit="Create invoice"
      schema={createInvoiceSchema}
      path={() => `/api/v1/clients/${clientId}/invoices`}
      initial={{ invoiceType: 'B' }}
      onDone={onDone}
      fields={[
        { name: 'totalAmount', label: 'Total (ARS)', money: true },
        { name: 'invoiceType', label: 'Type', options: INVOICE_TYPES.map((t) => [t, t]) },
        { name: 'dueAt', label: 'Due', hint: 'YYYY-MM-DD' },
        { name: 'observations', label: 'Observations' },
      ]}
    />
  );
}

/** `POST /sandbox/v1/clients/{id}/ledger`: a credit, debit, adjustment or reversal. */
export function LedgerForm({ clientId, onDone }: { clientId: string; onDone: () => void }) {
  return (
    <ClientForm
      title="Ledger movement"
      submit="Record movement"
      schema={ledgerEntrySchema}
      path={() => `/sandbox/v1/clients/${clientId}/ledger`}
      initial={{ entryType: 'credit' }}
      onDone={onDone}
      fields={[
        {
          name: 'entryType',
          label: 'Type',
          options: [
            ['credit', 'credit'],
            ['debit', 'debit'],
            ['adjustment', 'adjustment'],
            ['reversal', 'reversal'],
          ],
        },
        {
          name: 'amount',
          label: 'Amount (ARS)',
          money: true,
          hint: 'an adjustment may be negative; a reversal takes its operation’s',
        },
        { name: 'operationId', label: 'Operation ID', hint: 'a reversal names the credited operation' },
        { name: 'description', label: 'Description' },
      ]}
    />
  );
}

/** `POST /sandbox/v1/clients/{id}/invoices/{invoiceId}/allocations`: applies the client's cash to an open invoice. */
export function AllocationForm({
  clientId,
  invoices,
  onDone,
}: {
  clientId: string;
  invoices: Invoice[];
  onDone: () => void;
}) {
  const open = invoices.filter((invoice) => invoice.paymentStatus === 'pending' || invoice.paymentStatus === 'partial');
  if (open.length === 0) return null;
  return (
    <ClientForm
      key={open.map((invoice) => invoice.id).join()}
      title="Allocate to an invoice"
      submit="Allocate"
      schema={allocationSchema}
      path={(values) => `/sandbox/v1/clients/${clientId}/invoices/${values.invoiceId}/allocations`}
      initial={{ invoiceId: open[0]!.id }}
      onDone={onDone}
      fields={[
        {
          name: 'invoiceId',
          label: 'Invoice',
          inPath: true,
          options: open.map((invoice) => [
            invoice.id,
            `${invoice.invoiceType} ${invoice.invoiceNumber} · ${invoice.totalAmount.toFixed(2)}`,
          ]),
        },
        { name: 'amount', label: 'Amount (ARS)', money: true },
      ]}
    />
  );
}
