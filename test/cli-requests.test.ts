import { describe, expect, it } from 'vitest';
import { api, PAYMENT, runCli, spawnCli, spawnServer } from './helpers.js';

/** `va-sandbox requests list|show` against a real server process, as a user runs them. */
const server = await spawnServer(['--memory', '--quiet']);
const KEY = 'sk_cli_requests';
const env = { VA_SANDBOX_URL: server.url, VA_SANDBOX_API_KEY: KEY };
const client = api(server.url, KEY);

describe('va-sandbox requests', () => {
  it('lists the journal (filtered, as a table and as --json) and shows one by its short id', async () => {
    const created = (
      await client.post(
        '/api/v1/va-payments',
        { ...PAYMENT, amount: 77, externalReference: 'cli-1' },
        { 'Idempotency-Key': 'cli-1' },
      )
    ).body.data;
    await client.get(`/api/v1/va-payments/${created.id}`);
    expect((await client.post('/api/v1/va-payments', { ...PAYMENT, amount: -1 })).status).toBe(400);

    const table = await runCli(['requests', 'list'], env);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/POST\s+\/api\/v1\/va-payments\s+400/);
    expect(table.stdout).toMatch(/GET\s+\/api\/v1\/va-payments\/[0-9a-f-]{36}\s+200/);
    expect(table.stdout).toContain('3 requests');

    const posts = await runCli(['requests', 'list', '--method', 'post', '--status', '201', '--json'], env);
    expect(posts.code).toBe(0);
    const list = JSON.parse(posts.stdout);
    expect(list.pagination.total).toBe(1);
    expect(list.data[0]).toMatchObject({
      method: 'POST',
      status: 201,
      idempotencyKey: 'cli-1',
      requestBody: { externalReference: 'cli-1' },
    });
    const byPath = JSON.parse(
      (await runCli(['requests', 'list', '--path', '/api/v1/va-payments/{id}', '--json'], env)).stdout,
    );
    expect(byPath.data.map((item: { path: string }) => item.path)).toEqual([`/api/v1/va-payments/${created.id}`]);

    const shown = await runCli(['requests', 'show', list.data[0].id.slice(0, 8)], env);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(`request         POST /api/v1/va-payments`);
    expect(shown.stdout).toContain('"externalReference": "cli-1"');
    expect(shown.stdout).toContain(created.id);
    expect(shown.stdout).not.toContain(KEY);
    const json = await runCli(['requests', 'show', list.data[0].id, '--json'], env);
    expect(JSON.parse(json.stdout)).toEqual(list.data[0]);

    const missing = await runCli(['requests', 'show', '5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d'], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr.trim().split('\n')).toHaveLength(1);
    const bad = await runCli(['requests', 'list', '--status', 'abc'], env);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('status');
  });

  it('--follow prints each new request as it comes (--json: one line each), and only those the filters let through', async () => {
    const follow = spawnCli(['requests', 'list', '--follow', '--json', '--method', 'POST'], {
      ...env,
      VA_SANDBOX_API_KEY: 'sk_cli_follow',
    });
    await follow.waitFor(/following requests/, 'stderr');
    const other = api(server.url, 'sk_cli_follow');
    await other.get('/api/v1/clients');
    await other.post('/api/v1/va-payments', { ...PAYMENT, amount: 5, externalReference: 'followed' });
    const out = await follow.waitFor(/followed/);
    const lines = out
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      method: 'POST',
      path: '/api/v1/va-payments',
      status: 201,
      requestBody: { externalReference: 'followed' },
    });
    follow.child.kill('SIGINT');
    expect(await follow.exited).toBe(0);
  });
});
