import { describe, expect, it } from 'vitest';
import { api, keyValues, PAYMENT, runCli, spawnServer } from './helpers.js';
import { send } from './raw-http.js';

/** `va-sandbox start` as its own process (its lighter Request and Response in place), and the CLI pointed at it. */
const server = await spawnServer(['--memory']);
const env = { VA_SANDBOX_URL: server.url, VA_SANDBOX_API_KEY: 'sk_faults' };
const cli = (...args: string[]) => runCli(['faults', 'api', ...args], env);
const CREATE = '/api/v1/va-payments';

describe('va-sandbox faults api add|list|clear (contract part 7)', () => {
  it('adds rules from flags, lists them with their hits, and clears one or all', async () => {
    const added = await cli('add', '--path', CREATE, '--method', 'post', '--status', '503');
    expect(added.code, added.stderr).toBe(0);
    const rule = keyValues(added.stdout);
    expect(rule).toMatchObject({ method: 'POST', path: CREATE, fault: 'error 503', applies: 'next 1', hits: '0' });
    const drawn = JSON.parse(
      (
        await cli(
          'add',
          '--path',
          '/api/v1/va-payments/{id}',
          '--hang',
          '--probability',
          '0.25',
          '--seed',
          '9',
          '--json',
        )
      ).stdout,
    );
    expect(drawn).toMatchObject({
      method: '*',
      fault: { type: 'hang', ms: 30_000 },
      probability: 0.25,
      seed: 9,
      times: null,
    });
    const timed = async (...flags: string[]) =>
      JSON.parse((await cli('add', '--path', '/api/v1/clients', ...flags, '--json')).stdout);
    expect(await timed('--delay', '2s', '--times', '3')).toMatchObject({
      fault: { type: 'delay', ms: 2000 },
      times: 3,
    });
    expect(await timed('--hang', '500ms')).toMatchObject({ fault: { type: 'hang', ms: 500 }, times: 1 });
    expect(await timed('--reset', '--method', 'DELETE')).toMatchObject({ method: 'DELETE', fault: { type: 'reset' } });
    expect(await timed('--lost-answer', '--probability', '1')).toMatchObject({
      fault: { type: 'lost_answer' },
      probability: 1,
      seed: 1,
    });

    expect(await send(server.url, 'POST', CREATE, PAYMENT)).toMatchObject({ status: 503 });
    const listed = (await cli('list')).stdout.split('\n');
    expect(listed[0]).toMatch(/^ID +METHOD +PATH +FAULT +APPLIES +HITS$/);
    expect(listed[1]).toMatch(new RegExp(`^${rule.id} +POST +${CREATE} +error 503 +spent +1$`));
    expect(listed[2]).toMatch(/ +\* +\/api\/v1\/va-payments\/\{id\} +hang 30000ms +p=0.25 seed 9 +0$/);

    expect((await cli('clear', rule.id!)).stdout.trim()).toBe(`removed rule ${rule.id}`);
    expect((await cli('clear')).stdout.trim()).toBe('removed 5 API fault rules');
    expect((await cli('list')).stdout.trim()).toBe('no API fault rules');
  });

  it('refuses flags that do not make one rule as a usage error (exit 2), and a rule the API refuses with exit 1', async () => {
    const none = await cli('add', '--path', CREATE);
    expect([none.code, none.stderr.trim().split('\n').length]).toEqual([2, 1]);
    expect(none.stderr).toMatch(/give one fault/);
    expect((await cli('add', '--path', CREATE, '--reset', '--lost-answer')).code).toBe(2);
    expect((await cli('add', '--path', CREATE, '--reset', '--times', '2', '--probability', '0.5')).code).toBe(2);
    expect((await cli('add', '--path', CREATE, '--delay', 'soon')).code).toBe(2);
    const refused = await cli('add', '--path', '/sandbox/v1/clock', '--status', '418');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/VALIDATION_ERROR/);
    expect(refused.stderr).toMatch(/path/);
  });

  it('faults the requests of the running server: a reset, a lost answer (logged), the next one answered', async () => {
    const a = api(server.url, 'sk_faults_e2e');
    const as = { ...env, VA_SANDBOX_API_KEY: 'sk_faults_e2e' };
    const reset = keyValues((await runCli(['faults', 'api', 'add', '--path', CREATE, '--reset'], as)).stdout);
    expect(await send(server.url, 'POST', CREATE, PAYMENT, { authorization: 'Bearer sk_faults_e2e' })).toMatchObject({
      error: 'ECONNRESET',
    });
    const lost = keyValues((await runCli(['faults', 'api', 'add', '--path', CREATE, '--lost-answer'], as)).stdout);
    expect(await send(server.url, 'POST', CREATE, PAYMENT, { authorization: 'Bearer sk_faults_e2e' })).toMatchObject({
      error: 'ECONNRESET',
    });
    expect((await a.list(CREATE)).pagination.total).toBe(1);
    expect((await a.post(CREATE, PAYMENT)).status).toBe(201);
    await server.waitFor(new RegExp(`fault ${lost.id} lost_answer POST ${CREATE}`));
    expect(server.stdout()).toMatch(new RegExp(`fault ${reset.id} reset POST ${CREATE} …_e2e`));
    expect(server.stdout()).toMatch(new RegExp(`POST ${CREATE} 444 \\d+ms …_e2e`));
  });
});
