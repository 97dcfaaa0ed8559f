import { faultText, ruleWhen } from '../../client/api-fault-words.js';
import type { ApiFaultRuleView } from '../../core/api-faults/api-faults.js';
import { apiFaultKinds } from '../../core/records/words.js';
import { DataTable, ErrorNote, useAction, useApp, useLiveRefresh, useLoad } from '../ui.js';

/** The account's API fault rules (contract part 7): what each does, how often, its hits; a button clears them. */
export function ApiFaults() {
  const { api } = useApp();
  const rules = useLoad((signal) => api.list<ApiFaultRuleView>('/sandbox/v1/api-faults', { limit: 100 }, signal), []);
  const items = rules.data?.items ?? [];
  const clear = useAction(async () => {
    await api.apiFaults.clear();
    rules.reload();
  });
  const remove = useAction(async (id: string) => {
    await api.apiFaults.remove(id);
    rules.reload();
  });
  // Read again when the live stream says a rule was added or removed, or a request faulted (its hits).
  useLiveRefresh((message) => message.type === 'apiFaults', rules.reload);
  return (
    <section className="card" aria-labelledby="api-faults-title">
      <h2 id="api-faults-title">API faults</h2>
      <p className="muted">
        Rules that make this account's own /api/v1 requests fail as production does in an incident:{' '}
        {apiFaultKinds('named')}. Add them with <code>va-sandbox faults api add</code> or{' '}
        <code>POST /sandbox/v1/api-faults</code>; the first rule that matches applies.
      </p>
      <ErrorNote error={rules.error ?? clear.error ?? remove.error} />
      {items.length > 0 ? (
        <DataTable
          items={items}
          className="api-faults"
          columns={[
            ['Method', (rule) => rule.method, 'mono'],
            ['Path', (rule) => rule.path, 'mono'],
            ['Fault', (rule) => faultText(rule.fault)],
            ['Applies', (rule) => ruleWhen(rule)],
            ['Hits', (rule) => rule.hits, 'num'],
            [
              'Actions',
              (rule) => (
                <button
                  type="button"
                  onClick={() => void remove.run(rule.id)}
                  disabled={remove.busy}
                  aria-label={`Remove rule ${rule.method} ${rule.path}`}
                >
                  Remove
                </button>
              ),
            ],
          ]}
        />
      ) : rules.data ? (
        <p className="muted">No API fault rules: every request is answered as usual.</p>
      ) : null}
      <div className="actions">
        <button type="button" onClick={rules.reload}>
          Refresh
        </button>
        <button type="button" onClick={() => void clear.run()} disabled={clear.busy || items.length === 0}>
          Clear all rules
        </button>
      </div>
    </section>
  );
}
