import { useState } from 'react';
import type { hubView } from '../../core/records/views.js';
import { DEFAULT_KEY } from '../api.js';
import { Field, SelectField } from '../fields.js';
import { ErrorNote, Facts, useAction, useApp, useLoad, When } from '../ui.js';
import { ApiFaults } from './api-faults.js';
import { IncidentFile } from './incident-file.js';
import { TriggerMenu } from './trigger-form.js';

type Hub = ReturnType<typeof hubView>;
type Clock = { now: string; offsetSeconds: number };

/** The API key form: the page uses only a key the user gives it (kept in this browser's storage). */
export function KeyForm({ current, onKey }: { current: string | null; onKey: (key: string) => void }) {
  const [key, setKey] = useState(current ?? DEFAULT_KEY);
  return (
    <form
      className="card key-form"
      aria-labelledby="key-title"
      onSubmit={(event) => {
        event.preventDefault();
        if (key.trim()) onKey(key.trim());
      }}
    >
      <h2 id="key-title">API key</h2>
      <p className="muted">
        Each key is its own sandbox account. The page sends it as a Bearer token, like any client, and keeps it in this
        browser.
      </p>
      <Field
        label="API key"
        value={key}
        onChange={(event) => setKey(event.target.value)}
        autoComplete="off"
        spellCheck={false}
        required
      />
      <button type="submit">Use this key</button>
    </form>
  );
}

/** `/ui/account`: the key, the clock, the trigger menu, the hubs, the API fault rules, and the incident file (export and import). */
export function AccountPage({ onKey }: { onKey: (key: string) => void }) {
  const { api } = useApp();
  return (
    <main>
      <h1>Account</h1>
      <div className="columns">
        <KeyForm current={api.key} onKey={onKey} />
        <ClockCard />
      </div>
      <TriggerMenu />
      <Hubs />
      <ApiFaults />
      <IncidentFile />
    </main>
  );
}

function ClockCard() {
  const { api } = useApp();
  const clock = useLoad((signal) => api.get<Clock>('/sandbox/v1/clock', undefined, signal), []);
  // The server's retention (`start --keep D`), which `/health` says.
  const health = useLoad(
    (signal) =>
      fetch('/health', { signal }).then((response) => response.json() as Promise<{ keepDays: number | null }>),
    [],
  );
  const [seconds, setSeconds] = useState('60');
  const [at, setAt] = useState('');
  const advance = useAction(async () => {
    await api.clock.advance(Number(seconds));
    clock.reload();
  });
  const set = useAction(async () => {
    await api.clock.set(at);
    clock.reload();
  });
  return (
    <section className="card" aria-labelledby="clock-title">
      <h2 id="clock-title">Sandbox clock</h2>
      <ErrorNote error={clock.error} />
      {clock.data ? (
        <Facts
          items={[
            ['Now', <When at={clock.data.now} />],
            ['Ahead of real time', `${Math.round(clock.data.offsetSeconds).toLocaleString('en-US')} s`],
            [
              'Retention',
              health.data?.keepDays == null
                ? 'off: everything is kept (start --keep D removes ended payments after D days)'
                : `ended payments, their events, deliveries and transfers go after ${health.data.keepDays} days of this clock`,
            ],
          ]}
        />
      ) : null}
      <form
        className="inline-form"
        onSubmit={(event) => {
          event.preventDefault();
          void advance.run();
        }}
      >
        <Field
          label="Advance by (seconds)"
          inputMode="numeric"
          value={seconds}
          onChange={(event) => setSeconds(event.target.value)}
        />
        <button type="submit" disabled={advance.busy}>
          Advance clock
        </button>
      </form>
      <ErrorNote error={advance.error} />
      <form
        className="inline-form"
        onSubmit={(event) => {
          event.preventDefault();
          void set.run();
        }}
      >
        <Field
          label="Set to (ISO time, forward only)"
          value={at}
          placeholder={clock.data?.now ?? '2030-01-01T00:00:00.000Z'}
          onChange={(event) => setAt(event.target.value)}
        />
        <button type="submit" disabled={set.busy || at === ''}>
          Set clock
        </button>
      </form>
      <ErrorNote error={set.error} />
    </section>
  );
}

function Hubs() {
  const { api } = useApp();
  const hubs = useLoad((signal) => api.list<Hub>('/sandbox/v1/hubs', { limit: 100 }, signal), []);
  const patch = useAction(async (id: number, change: Partial<Hub>) => {
    await api.hubs.update(id, change);
    hubs.reload();
  });
  return (
    <section aria-labelledby="hubs-title">
      <h2 id="hubs-title">Payment hubs</h2>
      <ErrorNote error={hubs.error ?? patch.error} />
      <div className="columns">
        {(hubs.data?.items ?? []).map((hub) => (
          <div className="card" key={hub.id}>
            <h3>
              {hub.id} · {hub.name}
            </h3>
            <Facts
              items={[
                ['Brand', hub.brand],
                ['Collection CVU', <span className="mono">{hub.collectionCvu}</span>],
                ['Collection alias', <span className="mono">{hub.collectionAlias}</span>],
              ]}
            />
            <SelectField
              label="CVU provisioning"
              value={hub.cvuProvisioning}
              onChange={(event) =>
                void patch.run(hub.id, { cvuProvisioning: event.target.value as Hub['cvuProvisioning'] })
              }
              options={[
                ['inline', 'inline'],
                ['delayed', 'delayed (5 s)'],
                ['fail', 'fail'],
                ['manual', 'manual (the sandbox switch)'],
              ]}
            />
            <label className="check">
              <input
                type="checkbox"
                checked={hub.dedicated_client_cvus_enabled}
                onChange={(event) => void patch.run(hub.id, { dedicated_client_cvus_enabled: event.target.checked })}
              />
              Dedicated client CVUs enabled
            </label>
          </div>
        ))}
      </div>
      {hubs.data?.items.length === 0 ? (
        <p className="muted">No hub yet: one is opened by the first create that names it.</p>
      ) : null}
    </section>
  );
}
