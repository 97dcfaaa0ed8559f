import { join } from 'node:path';
import { setupServer } from 'msw/node';
import { describe, expect, it } from 'vitest';
import { sandboxClient } from '../src/client/api-client.js';
import { scenarioSchema } from '../src/core/scenarios/scenario.js';
import { sandboxHandlers } from '../src/msw.js';
import type { LogEntry } from '../src/sandbox/http/server-log.js';
import { jsonLine, logLine } from '../src/sandbox/http/server-log.js';
import { runScenarios } from '../src/sandbox/scenarios/scenario-runner.js';
import { api, eventually, PAYMENT, useReceiver, useServer, useTmp } from './helpers.js';
import { send } from './raw-http.js';

const CREATE = '/api/v1/va-payments';

describe('API fault rules: POST, GET and DELETE /sandbox/v1/api-faults (contract part 7)', () => {
  it('adds a rule with its defaults, lists rules in the order added, removes one or all; reset clears them', async () => {
    const { url } = await useServer();
    const a = api(url, 'sk_rules');
    const first = await a.post('/sandbox/v1/api-faults', {
      path: CREATE,
      fault: { type: 'error', status: 503 },
      times: 2,
    });
    expect(first.status).toBe(201);
    expect(first.body.data).toMatchObject({
      method: '*',
      path: CREATE,
      fault: { type: 'error', status: 503 },
      times: 2,
      probability: null,
      seed: null,
      hits: 0,
      spent: false,
    });
    const second = (
      await a.post('/sandbox/v1/api-faults', {
        method: 'GET',
        path: '/api/v1/va-payments/{id}',
        fault: { type: 'hang' },
        probability: 0.5,
      })
    ).body.data;
    expect(second).toMatchObject({ fault: { type: 'hang', ms: 30_000 }, seed: 1 });
    const listed = await a.list('/sandbox/v1/api-faults');
    expect(listed.data.map((r: { id: string }) => r.id)).toEqual([first.body.data.id, second.id]);
    expect(listed.pagination).toEqual({ page: 1, limit: 20, total: 2, totalPages: 1 });

    expect((await a.call('DELETE', `/sandbox/v1/api-faults/${second.id}`)).body.data.id).toBe(second.id);
    expect((await a.call('DELETE', `/sandbox/v1/api-faults/${second.id}`)).body.error.code).toBe('NOT_FOUND');
    await a.post('/sandbox/v1/api-faults', { path: CREATE, fault: { type: 'reset' }, times: 1 });
    expect((await a.call('DELETE', '/sandbox/v1/api-faults')).body.data).toEqual({ deleted: 2 });
    await a.post('/sandbox/v1/api-faults', { path: CREATE, fault: { type: 'reset' }, times: 1 });
    await a.post('/sandbox/v1/reset');
    expect((await a.list('/sandbox/v1/api-faults')).pagination.total).toBe(0);
    expect((await a.post(CREATE, PAYMENT)).status).toBe(201);
  });

  it('refuses a rule that breaks the contract, naming each field', async () => {
    const { url } = await useServer();
    const a = api(url, 'sk_rules_bad');
    const refused = async (body: unknown) => {
      const answer = await a.post('/sandbox/v1/api-faults', body);
      expect(answer.status).toBe(400);
      expect(answer.body.error.code).toBe('VALIDATION_ERROR');
      return answer.body.error.details as string[];
    };
    expect(await refused({ path: CREATE, fault: { type: 'reset' } })).toEqual([
      'times: give times or probability, exactly one',
    ]);
    expect(await refused({ path: CREATE, fault: { type: 'reset' }, times: 1, probability: 0.5 })).toEqual([
      'times: give times or probability, exactly one',
    ]);
    expect(await refused({ path: CREATE, fault: { type: 'reset' }, times: 1, seed: 3 })).toEqual([
      'seed: only a rule with a probability draws',
    ]);
    expect(
      (
        await refused({ path: '/sandbox/v1/clock', fault: { type: 'error', status: 404 }, times: 0, method: 'PUT' })
      ).map((d) => d.split(':')[0]),
    ).toEqual(['method', 'path', 'fault.status', 'times']);
    expect(
      await refused({ path: CREATE, fault: { type: 'delay', ms: 60_001 }, probability: 2, colour: 'red' }),
    ).toHaveLength(3);
  });

  it("leaves the rules out of an export; an import keeps the account's own", async () => {
    const { url } = await useServer();
    const source = api(url, 'sk_export_faults');
    await source.post('/sandbox/v1/api-faults', { path: CREATE, fault: { type: 'reset' }, times: 1 });
    const doc = await source.data('GET', '/sandbox/v1/export');
    expect(JSON.stringify(doc)).not.toContain('reset');
    const target = api(url, 'sk_import_faults');
    const own = (
      await target.post('/sandbox/v1/api-faults', {
        method: 'GET',
        path: CREATE,
        fault: { type: 'error', status: 502 },
        times: 3,
      })
    ).body.data;
    expect((await target.post('/sandbox/v1/import', doc)).status).toBe(200);
    expect((await target.list('/sandbox/v1/api-faults')).data).toEqual([own]);
  });

  it("keeps each account's rules to itself", async () => {
    const { url } = await useServer();
    await api(url, 'sk_one').post('/sandbox/v1/api-faults', {
      path: CREATE,
      fault: { type: 'error', status: 500 },
      times: 5,
    });
    expect((await api(url, 'sk_two').post(CREATE, PAYMENT)).status).toBe(201);
    expect((await api(url, 'sk_two').list('/sandbox/v1/api-faults')).pagination.total).toBe(0);
    expect((await api(url, 'sk_one').post(CREATE, PAYMENT)).status).toBe(500);
  });
});

describe('API faults on a real server and a real client', () => {
  it('error: the envelope with the status code, Retry-After on 429; nothing is carried out; the rule is then spent', async () => {
    const lines: LogEntry[] = [];
    const { url } = await useServer({ onLog: (entry) => lines.push(entry) });
    const a = api(url, 'sk_faults');
    const rule = (
      await a.post('/sandbox/v1/api-faults', {
        method: 'POST',
        path: CREATE,
        fault: { type: 'error', status: 503 },
        times: 1,
      })
    ).body.data;
    const failed = await a.post(CREATE, PAYMENT);
    expect(failed.status).toBe(503);
    expect(failed.body.error).toEqual({
      code: 'SERVICE_UNAVAILABLE',
      message: `sandbox API fault ${rule.id}`,
      details: [],
    });
    expect(failed.body.path).toBe(CREATE);
    expect((await a.list(CREATE)).pagination.total).toBe(0);
    expect((await a.post(CREATE, PAYMENT)).status).toBe(201);
    expect((await a.list('/sandbox/v1/api-faults')).data[0]).toMatchObject({ hits: 1, spent: true });
    const fault = lines.find((l) => l.type === 'fault')!;
    expect(logLine(fault)).toMatch(new RegExp(`fault ${rule.id} error POST ${CREATE} …ults$`));
    // --log json: a warning, like a refused request.
    expect(JSON.parse(jsonLine(fault))).toMatchObject({
      level: 40,
      type: 'fault',
      ruleId: rule.id,
      fault: 'error',
      method: 'POST',
      path: CREATE,
    });

    for (const [status, code] of [
      [500, 'INTERNAL_ERROR'],
      [502, 'BAD_GATEWAY'],
      [504, 'GATEWAY_TIMEOUT'],
      [429, 'RATE_LIMIT_EXCEEDED'],
    ] as const) {
      await a.post('/sandbox/v1/api-faults', {
        method: 'GET',
        path: '/api/v1/va-payments/{id}',
        fault: { type: 'error', status },
        times: 1,
      });
      const answer = await a.get(`/api/v1/va-payments/${'0'.repeat(8)}-0000-4000-8000-${'0'.repeat(12)}`);
      expect([answer.status, answer.body.error.code]).toEqual([status, code]);
      expect(answer.headers.get('retry-after')).toBe(status === 429 ? '1' : null);
    }
  });

  it('matches by method and by path pattern, the first rule that matches deciding', async () => {
    const { url } = await useServer();
    const a = api(url, 'sk_match');
    const payment = await a.data('POST', CREATE, PAYMENT);
    await a.post('/sandbox/v1/api-faults', {
      method: 'POST',
      path: '/api/v1/va-payments/*/cancel',
      fault: { type: 'error', status: 502 },
      times: 1,
    });
    await a.post('/sandbox/v1/api-faults', {
      path: '/api/v1/va-payments/{id}/cancel',
      fault: { type: 'error', status: 504 },
      times: 1,
    });
    expect((await a.get(`/api/v1/va-payments/${payment.id}`)).status).toBe(200);
    expect((await a.post(`/api/v1/va-payments/${payment.id}/cancel`)).status).toBe(502);
    expect((await a.post(`/api/v1/va-payments/${payment.id}/cancel`)).status).toBe(504);
    expect((await a.post(`/api/v1/va-payments/${payment.id}/cancel`)).status).toBe(200);
  });

  it('delay: the request is carried out, its answer leaves that many ms later', async () => {
    const { url } = await useServer();
    const a = api(url, 'sk_faults');
    await a.post('/sandbox/v1/api-faults', { path: CREATE, fault: { type: 'delay', ms: 400 }, times: 1 });
    const answer = await send(url, 'POST', CREATE, PAYMENT);
    expect('status' in answer && answer.status).toBe(201);
    expect(answer.ms).toBeGreaterThanOrEqual(380);
  });

  it('reset: the connection is reset with no answer and nothing is carried out; the server serves on', async () => {
    const { url } = await useServer();
    const a = api(url, 'sk_faults');
    await a.post('/sandbox/v1/api-faults', { path: CREATE, fault: { type: 'reset' }, times: 1 });
    expect(await send(url, 'POST', CREATE, PAYMENT)).toMatchObject({ error: 'ECONNRESET' });
    expect((await a.list(CREATE)).pagination.total).toBe(0);
    expect((await a.post(CREATE, PAYMENT)).status).toBe(201);
  });

  it('hang: no answer for its ms, then the connection closes; nothing is carried out', async () => {
    const { url } = await useServer();
    const a = api(url, 'sk_faults');
    await a.post('/sandbox/v1/api-faults', { path: CREATE, fault: { type: 'hang', ms: 400 }, times: 1 });
    const hung = await send(url, 'POST', CREATE, PAYMENT);
    expect(hung).toMatchObject({ error: 'ECONNRESET' });
    expect(hung.ms).toBeGreaterThanOrEqual(380);
    expect((await a.list(CREATE)).pagination.total).toBe(0);
  });

  it('hang: ends when the client gives up first, and the server goes on', async () => {
    const { url } = await useServer();
    const a = api(url, 'sk_faults');
    await a.post('/sandbox/v1/api-faults', { path: CREATE, fault: { type: 'hang', ms: 120_000 }, times: 1 });
    const outcome = await send(url, 'POST', CREATE, PAYMENT, {}, AbortSignal.timeout(300));
    expect(outcome).toMatchObject({ error: 'ABORT_ERR' });
    expect((await a.post(CREATE, PAYMENT)).status).toBe(201);
    expect((await a.list(CREATE)).pagination.total).toBe(1);
  });

  it('lost answer: carried out, committed and its callback sent, then no answer; its Idempotency-Key replays the answer', async () => {
    const receiver = await useReceiver();
    const lines: LogEntry[] = [];
    const { url } = await useServer({ onLog: (entry) => lines.push(entry) });
    const a = api(url, 'sk_faults');
    await a.post('/sandbox/v1/api-faults', { method: 'POST', path: CREATE, fault: { type: 'lost_answer' }, times: 1 });
    const body = { ...PAYMENT, amount: 1500, lockMode: 'amount', callbackUrl: `${receiver.url}/va` };
    const key = { 'Idempotency-Key': 'order-1500' };
    expect(await send(url, 'POST', CREATE, body, key)).toMatchObject({ error: 'ECONNRESET' });
    const [created] = (await a.list(CREATE)).data;
    expect(created).toMatchObject({ amount: 1500, status: 'waiting' });
    const again = await a.post(CREATE, body, key);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.data.id).toBe(created.id);
    await receiver.waitFor(1);
    await eventually(async () => (await a.list('/sandbox/v1/deliveries')).data[0]?.status === 'delivered');
    expect((await a.list(CREATE)).pagination.total).toBe(1);
    expect(receiver.received.map((r) => r.body.eventType)).toEqual(['created']);
    expect(lines.filter((l) => l.type === 'fault').map((l) => l.type === 'fault' && l.fault)).toEqual(['lost_answer']);
  });

  it('keeps its rules, their hits and their generators across a restart', async () => {
    const data = join(useTmp(), 'state.db');
    const first = await useServer({ data }, 'test');
    const a = api(first.url, 'sk_restart');
    await a.post('/sandbox/v1/api-faults', {
      method: 'POST',
      path: CREATE,
      fault: { type: 'error', status: 503 },
      times: 2,
    });
    await a.post('/sandbox/v1/api-faults', {
      method: 'GET',
      path: CREATE,
      fault: { type: 'error', status: 500 },
      probability: 0.5,
      seed: 7,
    });
    expect((await a.post(CREATE, PAYMENT)).status).toBe(503);
    const before = [];
    for (let i = 0; i < 6; i++) before.push((await a.get(CREATE)).status);
    await first.close();
    const second = await useServer({ data }, 'test');
    const b = api(second.url, 'sk_restart');
    expect((await b.list('/sandbox/v1/api-faults')).data.map((r: { hits: number }) => r.hits)).toEqual([
      1,
      before.filter((s) => s === 500).length,
    ]);
    expect((await b.post(CREATE, PAYMENT)).status).toBe(503);
    expect((await b.post(CREATE, PAYMENT)).status).toBe(201);
    const after = [];
    for (let i = 0; i < 6; i++) after.push((await b.get(CREATE)).status);

    // The same twelve draws on one server without a restart.
    const { url } = await useServer({}, 'test');
    const c = api(url, 'sk_restart');
    await c.post('/sandbox/v1/api-faults', {
      method: 'GET',
      path: CREATE,
      fault: { type: 'error', status: 500 },
      probability: 0.5,
      seed: 7,
    });
    const straight = [];
    for (let i = 0; i < 12; i++) straight.push((await c.get(CREATE)).status);
    expect([...before, ...after]).toEqual(straight);
  });
});

describe('API faults in process, through the msw handlers', () => {
  it('makes a reset, a hang and a lost answer the network error fetch sees; the lost answer was carried out', async () => {
    const base = 'https://va-sandbox-faults.test';
    const server = setupServer(...sandboxHandlers({ baseUrl: base }));
    server.listen();
    try {
      const client = sandboxClient(base, 'sk_in_process');
      const create = (signal?: AbortSignal) =>
        fetch(`${base}${CREATE}`, {
          method: 'POST',
          headers: { authorization: 'Bearer sk_in_process', 'content-type': 'application/json' },
          body: JSON.stringify(PAYMENT),
          signal,
        });
      await client.apiFaults.add({ method: 'POST', path: CREATE, fault: { type: 'reset' }, times: 1 });
      await expect(create()).rejects.toThrow(TypeError);
      expect((await client.vaPayments.list()).pagination.total).toBe(0);
      await client.apiFaults.add({ method: 'POST', path: CREATE, fault: { type: 'hang', ms: 300 }, times: 1 });
      await expect(create()).rejects.toThrow(TypeError);
      await client.apiFaults.add({ method: 'POST', path: CREATE, fault: { type: 'lost_answer' }, times: 1 });
      await expect(create()).rejects.toThrow(TypeError);
      expect((await client.vaPayments.list()).pagination.total).toBe(1);
      expect((await create()).status).toBe(201);
    } finally {
      server.close();
    }
  });
});

describe('API faults in scenarios', () => {
  const step = { do: 'createVaPayment', body: { ...PAYMENT } } as const;
  const scenario = (steps: unknown[]) => scenarioSchema.parse({ version: 1, name: 'api faults', steps });

  it('fails an expectFault step that was not faulted, or refused for another reason, and names why', async () => {
    const { url } = await useServer();
    const rule = { apiFault: { method: 'POST', path: CREATE, fault: { type: 'error', status: 504 }, times: 1 } };
    const run = await runScenarios(
      [
        {
          file: 'faults.json',
          scenario: scenario([
            rule,
            { ...step, expectFault: true },
            { ...step, expectFault: true },
            { do: 'getVaPayment', id: '00000000-0000-4000-8000-000000000000', expectFault: true },
          ]),
        },
      ],
      { url },
    );
    expect(run.scenarios[0]!.steps.map((s) => [s.status, s.failures])).toEqual([
      ['passed', []],
      ['passed', []],
      ['failed', ['expected an API fault, but the step succeeded']],
      ['failed', [expect.stringMatching(/^expected an API fault, got NOT_FOUND: /)]],
    ]);
  });

  it('runs every kind of fault from a scenario: a reset and a hang fault their step, a delay only slows it', async () => {
    const { url } = await useServer();
    const rule = (fault: unknown) => ({ apiFault: { method: 'POST', path: CREATE, fault, times: 1 } });
    const steps: unknown[] = [
      rule({ type: 'reset' }),
      { ...step, expectFault: true },
      rule({ type: 'hang', ms: 300 }),
      { ...step, expectFault: true },
    ];
    steps.push(rule({ type: 'delay', ms: 50 }), { ...step, name: 'slow', expect: { status: 'waiting' } });
    steps.push(
      rule({ type: 'lost_answer' }),
      { ...step, expectFault: true },
      { do: 'expectVaPayment', id: '${slow.id}', match: { status: 'waiting' } },
    );
    const run = await runScenarios([{ file: 'kinds.json', scenario: scenario(steps) }], { url });
    expect(run.scenarios[0]!.steps.filter((s) => s.status !== 'passed')).toEqual([]);
    expect((await api(url, run.scenarios[0]!.apiKey).list(CREATE)).pagination.total).toBe(2);
  });

  it('refuses a step that expects a fault and an answer or an error at once, and a rule that breaks the contract', () => {
    const refused = (steps: unknown[]) =>
      scenarioSchema
        .safeParse({ version: 1, name: 'x', steps })
        .error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    expect(refused([{ ...step, expectFault: true, expectError: 'NOT_FOUND' }])).toEqual([
      'steps.0: give one of expect, expectError and expectFault',
    ]);
    expect(refused([{ apiFault: { path: CREATE, fault: { type: 'reset' } } }])).toEqual([
      'steps.0.apiFault.times: give times or probability, exactly one',
    ]);
    expect(refused([{ apiFault: { path: '/sandbox/v1/clock', fault: { type: 'reset' }, times: 1 } }])).toHaveLength(1);
  });
});

describe('a probability rule draws from its own seeded generator', () => {
  /** Which of `count` GETs a probability rule faults, on a fresh server. */
  async function faulted(seed: number | null, count = 40): Promise<number[]> {
    const { url } = await useServer({}, 'test');
    const a = api(url, 'sk_seed');
    await a.post('/sandbox/v1/api-faults', {
      method: 'GET',
      path: CREATE,
      fault: { type: 'error', status: 503 },
      probability: 0.3,
      ...(seed === null ? {} : { seed }),
    });
    const hit: number[] = [];
    for (let i = 0; i < count; i++) if ((await a.get(CREATE)).status === 503) hit.push(i);
    expect((await a.list('/sandbox/v1/api-faults')).data[0].hits).toBe(hit.length);
    return hit;
  }

  it('faults the same requests on every run for the same seed and sequence, and others for another seed', async () => {
    const run = await faulted(42);
    expect(await faulted(42)).toEqual(run);
    expect(run.length).toBeGreaterThan(0);
    expect(run.length).toBeLessThan(40);
    expect(await faulted(null)).toEqual(await faulted(1));
    expect(await faulted(43)).not.toEqual(run);
  });
});
