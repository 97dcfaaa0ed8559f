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
    const key = 'sk_ui_api_faults';
    const sandbox = api(server.url, key);
    const app = render(<Dashboard connection={{ client: createClient(server.url, key), url: server.url, apiKey: key, embedded: null }} />);
    mounted.push(app);
    const header = () => app.lastFrame()!.split('\n')[0]!;
    await screenWith(app, /live.*\n VA payments {2}0 of 0/);
    expect(header()).not.toContain('api faults');

    await sandbox.data('POST', '/sandbox/v1/api-faults', { method: 'POST', path: '/api/v1/va-payments', fault: { type: 'error', status: 503 }, times: 1 });
    await sandbox.data('POST', '/sandbox/v1/api-faults', { method: 'GET', path: '/api/v1/clients', fault: { type: 'delay', ms: 10 }, times: 5 });
    // A create refused by the rule: nothing on the live stream says so, the status line reads the hits again itself.
    expect((await sandbox.post('/api/v1/va-payments', PAYMENT)).status).toBe(503);
    await eventually(() => /clock .*api faults 1 on, 1 hit(?!s)/.test(header()), 10_000, 'the rules and their hit on the status line');
    await sandbox.call('DELETE', '/sandbox/v1/api-faults');
    // A create the stream tells of: the dashboard reads everything again, the rules too.
    await sandbox.post('/api/v1/va-payments', PAYMENT);
    await eventually(() => !header().includes('api faults'), 10_000, 'the status line without rules');
  });
});
