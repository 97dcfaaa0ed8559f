import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, expect, it } from 'vitest';
import { scenarioSchema } from '../src/core/scenarios/scenario.js';
import { runScenarios } from '../src/sandbox/scenarios/scenario-runner.js';
import { fileStore } from '../src/sandbox/store/database.js';
import { NEWEST } from '../src/sandbox/store/schema.js';
import { api, PAYMENT, runCli, spawnServer, useServer, useTmp } from './helpers.js';

/** Every text column of every table of a database file, as one string per row. */
function everyRow(file: string): string[] {
  const db = new DatabaseSync(file, { readOnly: true });
  try {
    const tables = (db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table'").all() as { name: string }[]).map(
      (row) => row.name,
    );
    return tables.flatMap((table) =>
      (db.prepare(`SELECT * FROM ${table}`).all() as Record<string, unknown>[]).map(
        (row) => `${table} ${JSON.stringify(row)}`,
      ),
    );
  } finally {
    db.close();
  }
}

describe('the request journal', () => {
  it('answers what an integration sent across a restart of a real server process, newest first', async () => {
    const data = join(useTmp(), 'state.db');
    const first = await spawnServer(['--data', data, '--quiet']);
    const client = api(first.url, 'sk_journal_restart');
    const created = await client.post(
      '/api/v1/va-payments?source=shop',
      { ...PAYMENT, amount: 1042, externalReference: 'order-1042' },
      { 'Idempotency-Key': 'order-1042' },
    );
    const again = await client.post(
      '/api/v1/va-payments?source=shop',
      { ...PAYMENT, amount: 1042, externalReference: 'order-1042' },
      { 'Idempotency-Key': 'order-1042' },
    );
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    await client.get(`/api/v1/va-payments/${created.body.data.id}`);
    expect((await client.post('/api/v1/va-payments', '{"amount": ')).status).toBe(400);
    first.child.kill('SIGTERM');
    await new Promise((resolve) => first.child.once('exit', resolve));

    const second = await spawnServer(['--data', data, '--quiet']);
    try {
      const list = await api(second.url, 'sk_journal_restart').get('/sandbox/v1/requests');
      expect(list.status).toBe(200);
      expect(list.body.pagination).toMatchObject({ total: 4, page: 1 });
      const [broken, read, replay, create] = list.body.data;
      expect(create).toMatchObject({
        method: 'POST',
        path: '/api/v1/va-payments',
        query: { source: 'shop' },
        requestBody: { ...PAYMENT, amount: 1042, externalReference: 'order-1042' },
        status: 201,
        responseBody: { success: true, data: { id: created.body.data.id, amount: 1042 } },
        idempotencyKey: 'order-1042',
        replayed: false,
        apiFault: null,
      });
      expect(create.requestHeaders['content-type']).toBe('application/json');
      expect(create.durationMs).toBeGreaterThanOrEqual(0);
      expect(replay).toMatchObject({ status: 201, replayed: true, responseBody: create.responseBody });
      expect(read).toMatchObject({
        method: 'GET',
        path: `/api/v1/va-payments/${created.body.data.id}`,
        requestBody: null,
        status: 200,
      });
      expect(broken).toMatchObject({
        status: 400,
        requestBody: '{"amount": ',
        responseBody: { error: { code: 'INVALID_JSON' } },
      });
      const one = await api(second.url, 'sk_journal_restart').get(`/sandbox/v1/requests/${create.id}`);
      expect(one.body.data).toEqual(create);
      // Another account's journal is its own.
      expect((await api(second.url, 'sk_journal_other').get('/sandbox/v1/requests')).body.data).toEqual([]);
    } finally {
      second.child.kill('SIGTERM');
      await new Promise((resolve) => second.child.once('exit', resolve));
    }
  });

  it('never holds the API key: not in headers, a query string, a body that echoes it, the database file or the log', async () => {
    const key = 'sk_secret_d41d8cd98f00b204';
    const dir = useTmp();
    const data = join(dir, 'state.db');
    const server = await spawnServer(['--data', data]);
    const client = api(server.url, key);
    // A body that holds it and an answer that echoes it (a 404 names the id asked for).
    expect(
      (
        await client.post(
          `/api/v1/va-payments?token=${key}`,
          { ...PAYMENT, amount: key },
          { 'X-Echo': `Bearer ${key}` },
        )
      ).status,
    ).toBe(400);
    await client.get(`/api/v1/va-payments?externalReference=${key}`);
    expect(JSON.stringify((await client.get(`/api/v1/clients/${key}`)).body)).toContain(key);
    const answers = [
      await client.get('/sandbox/v1/requests'),
      await client.get(`/sandbox/v1/requests?path=/api/v1/clients/*`),
    ];
    const items = answers[0]!.body.data as { id: string; requestHeaders: Record<string, string> }[];
    expect(items).toHaveLength(3);
    answers.push(...(await Promise.all(items.map((item) => client.get(`/sandbox/v1/requests/${item.id}`)))));
    for (const answer of answers) expect(JSON.stringify(answer.body)).not.toContain(key);
    expect(JSON.stringify(answers[0]!.body)).toContain('[API key]');
    for (const item of items)
      expect(Object.keys(item.requestHeaders).map((name) => name.toLowerCase())).not.toContain('authorization');
    server.child.kill('SIGTERM');
    await new Promise((resolve) => server.child.once('exit', resolve));
    // The account's own row keeps its key (that is how the account is found); nothing else does.
    const holding = everyRow(data).filter((row) => row.includes(key));
    expect(holding).toHaveLength(1);
    expect(holding[0]).toMatch(/^accounts /);
    const db = new DatabaseSync(data, { readOnly: true });
    expect((db.prepare('SELECT count(*) AS n FROM requests').get() as { n: number }).n).toBe(3);
    db.close();
    expect(server.stdout()).toContain('/api/v1/clients/[API key]');
    expect(server.stdout() + server.stderr()).not.toContain(key);
  });

  it('cuts each body at 64 KiB and says so; a body under it is kept whole', async () => {
    const server = await useServer({}, 'test');
    const client = api(server.url, 'sk_journal_cut');
    const long = 'é'.repeat(40_000); // 80,000 bytes of UTF-8
    expect((await client.post('/api/v1/va-payments', { ...PAYMENT, amount: 10, externalReference: long })).status).toBe(
      400,
    );
    await client.post('/api/v1/va-payments', { ...PAYMENT, amount: 10, externalReference: 'é'.repeat(100) });
    const [whole, cut] = (await client.get('/sandbox/v1/requests')).body.data;
    expect(cut.truncated).toBe(true);
    expect(typeof cut.requestBody).toBe('string');
    expect(Buffer.byteLength(cut.requestBody)).toBeLessThanOrEqual(64 * 1024);
    expect(Buffer.byteLength(cut.requestBody)).toBeGreaterThan(64 * 1024 - 4);
    expect(JSON.stringify({ ...PAYMENT, amount: 10, externalReference: long }).startsWith(cut.requestBody)).toBe(true);
    expect(whole.truncated).toBeUndefined();
    expect(whole.requestBody.externalReference).toBe('é'.repeat(100));
  });

  it('keeps the newest N per account (--journal N), none with 0, and is cleared by reset and by DELETE', async () => {
    const server = await useServer({ journal: 3 }, 'test');
    const client = api(server.url, 'sk_journal_bound');
    for (let page = 1; page <= 5; page++) await client.get(`/api/v1/va-payments?page=${page}`);
    const kept = (await client.get('/sandbox/v1/requests')).body;
    expect(kept.pagination.total).toBe(3);
    expect(kept.data.map((item: { query: { page: string } }) => item.query.page)).toEqual(['5', '4', '3']);
    expect((await client.post('/sandbox/v1/reset')).status).toBe(200);
    expect((await client.get('/sandbox/v1/requests')).body.pagination.total).toBe(0);
    await client.get('/api/v1/clients');
    expect((await client.get('/sandbox/v1/requests')).body.pagination.total).toBe(1);
    expect((await client.call('DELETE', '/sandbox/v1/requests')).body.data).toEqual({ deleted: 1 });
    expect((await client.get('/sandbox/v1/requests')).body.pagination.total).toBe(0);

    const none = await useServer({ journal: 0 }, 'test');
    const quiet = api(none.url, 'sk_journal_none');
    await quiet.post('/api/v1/va-payments', { ...PAYMENT, amount: 10 });
    expect((await quiet.get('/sandbox/v1/requests')).body).toMatchObject({ data: [], pagination: { total: 0 } });
  });

  it('filters by method, path pattern, status and since; a bad filter is a 400 naming it', async () => {
    const server = await useServer({}, 'test');
    const client = api(server.url, 'sk_journal_filters');
    const payment = (await client.post('/api/v1/va-payments', { ...PAYMENT, amount: 10 })).body.data;
    const since = (await client.get('/sandbox/v1/clock')).body.data.now;
    await client.get(`/api/v1/va-payments/${payment.id}`);
    await client.post(`/api/v1/va-payments/${payment.id}/cancel`);
    await client.get('/api/v1/va-payments/not-an-id');
    const paths = async (query: string) =>
      ((await client.get(`/sandbox/v1/requests?${query}`)).body.data as { method: string; path: string }[]).map(
        (item) => `${item.method} ${item.path}`,
      );
    expect(await paths('method=post')).toEqual([
      `POST /api/v1/va-payments/${payment.id}/cancel`,
      'POST /api/v1/va-payments',
    ]);
    expect(await paths('path=/api/v1/va-payments/{id}')).toEqual([
      'GET /api/v1/va-payments/not-an-id',
      `GET /api/v1/va-payments/${payment.id}`,
    ]);
    expect(await paths('path=/api/v1/va-payments/*/cancel')).toEqual([`POST /api/v1/va-payments/${payment.id}/cancel`]);
    expect(await paths('status=404')).toEqual(['GET /api/v1/va-payments/not-an-id']);
    expect(await paths(`method=GET&status=200&since=${since}`)).toEqual([`GET /api/v1/va-payments/${payment.id}`]);
    expect((await client.get('/sandbox/v1/requests?method=GET&limit=1&page=2')).body).toMatchObject({
      pagination: { total: 2, page: 2, totalPages: 2 },
    });
    for (const bad of ['status=abc', 'path=/sandbox/v1/requests', 'since=yesterday', 'method=TRACE']) {
      const answer = await client.get(`/sandbox/v1/requests?${bad}`);
      expect(answer.status, bad).toBe(400);
      expect(answer.body.error.details[0], bad).toMatch(new RegExp(`^${bad.split('=')[0]}`));
    }
    expect((await client.get('/sandbox/v1/requests/5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d')).status).toBe(404);
  });

  it('names the API fault that answered a request, and a request the fault closed has no status', async () => {
    const server = await useServer({}, 'test');
    const client = api(server.url, 'sk_journal_faults');
    const rule = (
      await client.post('/sandbox/v1/api-faults', {
        path: '/api/v1/va-payments',
        method: 'POST',
        fault: { type: 'error', status: 503 },
        times: 1,
      })
    ).body.data;
    expect((await client.post('/api/v1/va-payments', { ...PAYMENT, amount: 10 })).status).toBe(503);
    const reset = (
      await client.post('/sandbox/v1/api-faults', { path: '/api/v1/clients', fault: { type: 'reset' }, times: 1 })
    ).body.data;
    await expect(client.get('/api/v1/clients')).rejects.toThrow();
    const [closed, faulted] = (await client.get('/sandbox/v1/requests')).body.data;
    expect(faulted).toMatchObject({
      status: 503,
      apiFault: { ruleId: rule.id, type: 'error' },
      responseBody: { error: { code: 'SERVICE_UNAVAILABLE' } },
    });
    expect(closed).toMatchObject({ status: null, responseBody: null, apiFault: { ruleId: reset.id, type: 'reset' } });
  });

  it('is swept by retention (--keep): requests older than the days kept go when the clock moves past them', async () => {
    const server = await useServer({ keepDays: 1 }, 'test');
    const client = api(server.url, 'sk_journal_keep');
    await client.get('/api/v1/va-payments?old=1');
    await client.post('/sandbox/v1/clock/advance', { seconds: 20 * 3600 });
    await client.get('/api/v1/va-payments?new=1');
    await client.post('/sandbox/v1/clock/advance', { seconds: 5 * 3600 });
    const kept = (await client.get('/sandbox/v1/requests')).body.data as { query: Record<string, string> }[];
    expect(kept.map((item) => item.query)).toEqual([{ new: '1' }]);
  });

  it('takes its bound from a config file (`journal`), and refuses a negative one in one line', async () => {
    const dir = useTmp();
    const config = join(dir, 'va-sandbox.json');
    writeFileSync(config, JSON.stringify({ journal: 2, memory: true }));
    const server = await spawnServer(['--config', config, '--quiet']);
    try {
      const client = api(server.url, 'sk_journal_config');
      for (let i = 0; i < 4; i++) await client.get('/api/v1/clients');
      expect((await client.get('/sandbox/v1/requests')).body.pagination.total).toBe(2);
    } finally {
      server.child.kill('SIGTERM');
    }
    writeFileSync(config, JSON.stringify({ journal: -1 }));
    const refused = await runCli(['start', '--config', config, '--port', '0']);
    expect(refused.code).toBe(2);
    expect(refused.stderr.trim().split('\n')).toHaveLength(1);
    expect(refused.stderr).toContain('journal');
  });

  it('is schema 4 and on: a file whose header says 3 but holds the journal is refused, never migrated again', async () => {
    const data = join(useTmp(), 'state.db');
    await fileStore(data).close();
    const db = new DatabaseSync(data);
    db.exec('PRAGMA user_version = 3');
    db.close();
    expect(() => fileStore(data)).toThrow(new RegExp(`its header says schema 3, its tables are schema ${NEWEST}`));
  });
});

describe('the scenario step expectRequest', () => {
  const scenario = (steps: unknown[]) => ({
    file: 'requests.json',
    scenario: scenarioSchema.parse({ version: 1, name: 'requests', steps }),
  });
  const create = (externalReference: string, name?: string) => ({
    do: 'createVaPayment',
    ...(name ? { name } : {}),
    body: { ...PAYMENT, amount: 10, externalReference },
  });

  it('passes when the account sent the requests (at least once, or exactly `times`), a part of the body matching', async () => {
    const { url } = await useServer({}, 'test');
    const run = await runScenarios(
      [
        scenario([
          create('order-1', 'first'),
          create('order-2'),
          { do: 'cancelVaPayment', id: '${first.id}' },
          { expectRequest: { method: 'POST', path: '/api/v1/va-payments', times: 2 } },
          {
            expectRequest: {
              method: 'POST',
              path: '/api/v1/va-payments',
              times: 1,
              body: { externalReference: 'order-2', amount: 10 },
            },
          },
          { expectRequest: { path: '/api/v1/va-payments/${first.id}/cancel' } },
          { expectRequest: { method: 'POST', path: '/api/v1/va-payments/{id}/cancel', times: 1 } },
          { expectRequest: { method: 'DELETE', path: '/api/v1/clients', times: 0 } },
        ]),
      ],
      { url },
    );
    expect(run.scenarios[0]!.steps.filter((s) => s.status !== 'passed')).toEqual([]);
    expect(run.scenarios[0]!.steps[3]!.label).toBe('expectRequest POST /api/v1/va-payments');
  });

  it('fails with how many matched and the closest requests it saw, nearest first', async () => {
    const { url } = await useServer({}, 'test');
    const run = await runScenarios(
      [
        scenario([
          create('order-1'),
          { do: 'getClient', id: '00000000-0000-4000-8000-000000000000', expectError: 'NOT_FOUND' },
          { expectRequest: { method: 'POST', path: '/api/v1/va-payments', body: { externalReference: 'order-9' } } },
          { expectRequest: { method: 'POST', path: '/api/v1/va-payments', times: 2 } },
        ]),
      ],
      { url },
    );
    const [, , byBody, byTimes] = run.scenarios[0]!.steps;
    expect(byBody!.status).toBe('failed');
    expect(byBody!.failures[0]).toBe(
      'expected at least 1 POST /api/v1/va-payments with body {"externalReference":"order-9"}, saw 0',
    );
    expect(byBody!.failures[1]).toMatch(
      /^closest: POST \/api\/v1\/va-payments 201 \([0-9a-f-]{36}\): body\.externalReference: expected "order-9", got "order-1"$/,
    );
    expect(byBody!.failures[2]).toMatch(
      /^closest: GET \/api\/v1\/clients\/0{8}-0000-4000-8000-0{12} 404 \(.*\): method GET; path /,
    );
    expect(byTimes!.failures[0]).toBe('expected exactly 2 POST /api/v1/va-payments, saw 1');
  });
});
