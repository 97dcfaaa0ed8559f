import { useState } from 'react';
import type { TransferBody } from '../../client/api-client.js';
import { transferSchema } from '../../core/records/schemas.js';
import { fieldErrors } from '../api.js';
import { Field, SelectField } from '../fields.js';
import { ErrorNote, useAction, useApp } from '../ui.js';
import { issuesOf, numberOr } from './form-values.js';

/** The bank's tax on credits and debits (0.6%), a realistic default for the taxes of a simulated transfer. */
const TAX_RATE = 0.006;
const taxesOf = (total: number) => Math.round(total * TAX_RATE * 100) / 100;

/**
 * `POST /sandbox/v1/transfers` to one of the given addresses (a CVU or alias), with the total and its taxes
 * prefilled; validated with the API's own schema before it is sent.
 */
export function TransferForm({ addresses, total, onDone }: { addresses: string[]; total: number; onDone: () => void }) {
  const { api } = useApp();
  const [to, setTo] = useState(addresses[0] ?? '');
  const [amount, setAmount] = useState(total.toFixed(2));
  const [taxes, setTaxes] = useState(taxesOf(total).toFixed(2));
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [result, setResult] = useState<string | null>(null);
  const action = useAction(async () => {
    const body = { to, total: numberOr(amount), taxes: numberOr(taxes) };
    const issues = issuesOf(transferSchema, body);
    setErrors(fieldErrors(issues));
    if (issues.length > 0) return;
    // The schema the API validates with has just accepted it.
    const transfer = await api.transfers.create(body as TransferBody);
    setResult(
      `Transfer ${transfer.outcome}${transfer.reason ? `: ${transfer.reason}` : ''} (net ${transfer.netAmount.toFixed(2)})`,
    );
    onDone();
  });
  return (
    <form
      className="card form-grid"
      aria-label="Inject a transfer"
      onSubmit={(event) => {
        event.preventDefault();
        void action.run();
      }}
    >
      <h3>Inject a transfer</h3>
      <SelectField
        label="To"
        value={to}
        onChange={(event) => setTo(event.target.value)}
        options={addresses.map((a) => [a, a])}
        error={errors.to}
      />
      <Field
        label="Total (ARS)"
        inputMode="decimal"
        value={amount}
        onChange={(event) => {
          setAmount(event.target.value);
          if (Number.isFinite(Number(event.target.value))) setTaxes(taxesOf(Number(event.target.value)).toFixed(2));
        }}
        error={errors.total}
      />
      <Field
        label="Taxes (ARS)"
        inputMode="decimal"
        value={taxes}
        onChange={(event) => setTaxes(event.target.value)}
        error={errors.taxes}
        hint="0.6% of the total by default"
      />
      <div className="actions">
        <button type="submit" disabled={action.busy || to === ''}>
          Send transfer
        </button>
        {result ? <span role="status">{result}</span> : null}
      </div>
      <ErrorNote error={action.error} />
    </form>
  );
}
