import { render } from 'ink-testing-library';
import { afterEach, describe, expect, it } from 'vitest';
import { createClient } from '../src/cli/client.js';
import { Dashboard } from '../src/cli/ui/dashboard.js';
import { api, eventually, PAYMENT, useServer } from './helpers.js';
import { screenWith } from './ui-helpers.js';

const server = await useServer();
const mounted: ReturnType<typeof render>[] = [];
afterEach(() => {
  for (const app of mounted.splice(0)) app.unmount();
});

describe("va-sandbox ui: API faults on the dashboard's status line", () => {
  it('shows how many rules are on and their hits as requests are faulted elsewhere, and nothing once they are cleared', async () => {
    const key = 'sk_uiaf';
    const sandbox = api(server.url, key);
    const app = render(
      <Dashboard
        connection={{ client: createClient(server.url, key), url: server.url, apiKey: key, embedded: null }}
      />,
    );
    mounted.push(app);
    const header = () => app.lastFrame()!.split('\n')[0]!;
    await screenWith(app, /live.*\n VA payments {2}0 of 0/);
    expect(header()).not.toContain('api faults');

    await sandbox.data('POST', '/sandbox/v1/api-faults', {
      method: 'POST',
      path: '/api/v1/va-payments',
      fault: { type: 'error', status: 503 },
      times: 1,
    });
    await sandbox.data('POST', '/sandbox/v1/api-faults', {
      method: 'PATCH',
      path: '/api/v1/clients/{id}',
      fault: { type: 'delay', ms: 10 },
      times: 5,
    });
    await eventually(() => /clock .*api faults 2 on, 0 hits/.test(header()), 10_000, 'the rules on the status line');
    // A create refused by the rule: the stream's apiFaults message tells of it, and the feed has a line.
    expect((await sandbox.post('/api/v1/va-payments', PAYMENT)).status).toBe(503);
    await eventually(
      () => /clock .*api faults 1 on, 1 hit(?!s)/.test(header()),
      10_000,
      'the rules and their hit on the status line',
    );
    await screenWith(app, /fault +error +POST \/api\/v1\/va-payments/);
    await sandbox.call('DELETE', '/sandbox/v1/api-faults');
    await eventually(() => !header().includes('api faults'), 10_000, 'the status line without rules');
  });
});
