import { useState } from 'react';
import type { TriggerBody, TriggerView } from '../../client/api-client.js';
import { TRIGGER_EVENTS, triggerSchema } from '../../core/records/index.js';
import { fieldErrors } from '../api.js';
import { Field, SelectField } from '../fields.js';
import { Link } from '../router.js';
import { ErrorNote, useAction, useApp } from '../ui.js';
import { filled, issuesOf, numberOr } from './form-values.js';

/**
 * The trigger menu (contract part 9, after `stripe trigger`): one event made through the operations a user would
 * call (`POST /sandbox/v1/triggers`); the answer's steps, and the payment or client to follow its callbacks on.
 */
export function TriggerMenu() {
  const { api, reloadAll } = useApp();
  const [event, setEvent] = useState<string>('succeeded');
  const [callbackUrl, setCallbackUrl] = useState('');
  const [amount, setAmount] = useState('1500');
  const [hub, setHub] = useState('1');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [made, setMade] = useState<TriggerView | null>(null);
  const action = useAction(async () => {
    setMade(null);
    const body = filled({ event, callbackUrl, amount: numberOr(amount), paymentHubId: numberOr(hub) });
    const issues = issuesOf(triggerSchema, body);
    setErrors(fieldErrors(issues));
    if (issues.length > 0) return;
    setMade(await api.trigger(body as TriggerBody));
    reloadAll();
  });
  return (
    <form
      className="card form-grid"
      aria-labelledby="trigger-title"
      onSubmit={(submit) => {
        submit.preventDefault();
        void action.run();
      }}
    >
      <h2 id="trigger-title">Trigger an event</h2>
      <p className="muted">
        Makes the event as your integration would see it: a VA payment (or a client) with your callback URL, then a
        transfer, a cancel or the payment's expiry. Same as <code>va-sandbox trigger</code>.
      </p>
      <SelectField
        label="Event"
        value={event}
        onChange={(change) => setEvent(change.target.value)}
        options={TRIGGER_EVENTS.map((e) => [e, e])}
        error={errors.event}
      />
      <Field
        label="Callback URL"
        value={callbackUrl}
        placeholder="http://127.0.0.1:3000/webhooks"
        onChange={(change) => setCallbackUrl(change.target.value)}
        error={errors.callbackUrl}
        hint="empty: the forwarding URL while one is set, else the callbacks are dropped"
      />
      <Field
        label="Amount (ARS)"
        inputMode="decimal"
        value={amount}
        onChange={(change) => setAmount(change.target.value)}
        error={errors.amount}
      />
      <Field
        label="Payment hub"
        inputMode="numeric"
        value={hub}
        onChange={(change) => setHub(change.target.value)}
        error={errors.paymentHubId}
      />
      <div className="actions">
        <button type="submit" disabled={action.busy}>
          Trigger {event}
        </button>
      </div>
      <ErrorNote error={action.error} />
      {made ? <Triggered made={made} /> : null}
    </form>
  );
}

function Triggered({ made }: { made: TriggerView }) {
  const to = made.vaPaymentId ? `/payments/${made.vaPaymentId}` : `/clients/${made.clientId}`;
  return (
    <div role="status" className="trigger-result">
      <p>
        Triggered <strong>{made.event}</strong> (event <span className="mono">{made.eventId}</span>):{' '}
        <Link to={to}>{made.vaPaymentId ? 'open the VA payment' : 'open the client'}</Link> to see its callbacks.
      </p>
      <ol>
        {made.steps.map((step) => (
          <li key={step} className="mono">
            {step}
          </li>
        ))}
      </ol>
    </div>
  );
}
