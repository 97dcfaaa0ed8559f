import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, spawnServer, useServer, useTmp } from './helpers.js';

const server = await useServer();
const tmp = useTmp();
const FAILING = 'test/scenario-files/failing.json';

/** The attributes of the first element `tag` in an XML text. */
const attributes = (xml: string, tag: string) =>
  Object.fromEntries(
    [...(new RegExp(`<${tag}\\s([^>]*)>`).exec(xml)?.[1] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]),
  );

describe('va-sandbox run', () => {
  it('passes on an embedded sandbox: each step printed, exit 0, a JUnit report without failures', async () => {
    const report = join(tmp, 'ok.xml');
    const { code, stdout, stderr } = await runCli([
      'run',
      'fixtures/cancel.json',
      'fixtures/underpaid-then-completed.json',
      '--report',
      report,
    ]);
    expect(stderr).toContain('on an embedded sandbox');
    expect(code).toBe(0);
    expect(stdout).toContain('✓ cancel: cancelVaPayment ${payment.id}');
    expect(stdout).toContain('✓ expectCallbacks ${receiver.url}/va');
    expect(stdout.trimEnd().split('\n').at(-1)).toBe('2 passed, 0 failed');
    const xml = readFileSync(report, 'utf8');
    expect(attributes(xml, 'testsuites')).toMatchObject({ failures: '0', skipped: '0' });
    expect(xml.match(/<testsuite /g)).toHaveLength(2);
  });

  it('fails against a running sandbox (--url): the failures printed, one error line, exit 1, and the JUnit report says which', async () => {
    // As in docs/ci-example.yml: `va-sandbox start --memory` in the background, then `run --url`.
    const running = await spawnServer(['--memory']);
    const report = join(tmp, 'reports', 'failing.xml');
    const { code, stdout, stderr } = await runCli([
      'run',
      'fixtures/cancel.json',
      FAILING,
      '--url',
      running.url,
      '--report',
      report,
    ]);
    expect(code).toBe(1);
    expect(stdout).toContain('✗ expectVaPayment ${payment.id}');
    expect(stdout).toContain('status: expected "underpaid", got "completed"');
    expect(stdout).toContain('1 passed, 1 failed');
    expect(stderr.trimEnd().split('\n').at(-1)).toBe('va-sandbox: 1 of 2 scenario(s) failed');
    const xml = readFileSync(report, 'utf8');
    expect(attributes(xml, 'testsuites')).toMatchObject({ tests: '19', failures: '3', skipped: '1' });
    expect(xml).toContain(
      '<failure message="status: expected &quot;underpaid&quot;, got &quot;completed&quot;" type="expectation">',
    );
    expect(xml).toContain('<skipped message="an earlier step failed"/>');
  });

  it('prints only the run as JSON with --json', async () => {
    const { code, stdout } = await runCli(['run', FAILING, '--json'], { VA_SANDBOX_URL: server.url });
    expect(code).toBe(1);
    const run = JSON.parse(stdout);
    expect(run).toMatchObject({ passed: 0, failed: 1, url: server.url });
    expect(run.scenarios[0].steps[2]).toMatchObject({ status: 'failed', label: 'expectVaPayment ${payment.id}' });
  });

  it('an invalid scenario file is one failed test case, naming every problem, and the others run', async () => {
    const report = join(tmp, 'invalid.xml');
    const { code, stdout, stderr } = await runCli([
      'run',
      'test/scenario-files/invalid.json',
      'fixtures/cancel.json',
      '--url',
      server.url,
      '--report',
      report,
    ]);
    expect(code).toBe(1);
    expect(stdout).toContain('✗ load test/scenario-files/invalid.json');
    expect(stdout).toContain('steps.0.body.colour: unknown field');
    expect(stdout).toContain('✓ cancel: cancelVaPayment ${payment.id}');
    expect(stdout).toContain('1 passed, 1 failed');
    expect(stderr.trimEnd().split('\n').at(-1)).toBe('va-sandbox: 1 of 2 scenario(s) failed');
    const xml = readFileSync(report, 'utf8');
    expect(xml.match(/<testsuite /g)).toHaveLength(2);
    expect(xml).toMatch(
      /<testsuite name="invalid.json" file="test\/scenario-files\/invalid.json" tests="1" failures="1"/,
    );
    expect(xml).toContain('steps.0.body.colour: unknown field');
  });

  it('expands file patterns itself (quoted, as a shell that leaves them or Windows would pass them)', async () => {
    const { code, stdout } = await runCli(['run', 'fixtures/c*.json', '--url', server.url]);
    expect(code).toBe(0);
    // fixtures/callback-url-all-seven-events.json, cancel.json, client-cashin-disabled-cvu.json, in that order
    expect(stdout.trimEnd().split('\n').at(-1)).toBe('3 passed, 0 failed');
    expect(stdout.indexOf('callback-url-all-seven-events.json')).toBeLessThan(stdout.indexOf('cancel.json'));
    const none = await runCli(['run', 'fixtures/nothing-*.json', '--url', server.url]);
    expect(none.code).toBe(1);
    expect(none.stderr).toBe('va-sandbox: no file matches fixtures/nothing-*.json\n');
  });

  it('scenario record writes an account as a scenario file that run replays on a fresh account', async () => {
    const env = { VA_SANDBOX_URL: server.url, VA_SANDBOX_API_KEY: 'sk_cli_record' };
    const payment = await runCli(['payments', 'create', '--amount', '1500', '--lock', 'amount', '--json'], env);
    expect(payment.code).toBe(0);
    expect((await runCli(['transfer', '--to', 'SANDBOX.HUB.COBROS', '--amount', '1500'], env)).code).toBe(0);
    const file = join(tmp, 'recorded.json');
    const record = await runCli(['scenario', 'record', '--out', file], env);
    expect(record.code).toBe(0);
    expect(record.stdout).toMatch(/^recorded \d+ steps to .*recorded\.json; replay them with: va-sandbox run /);
    const { code, stdout } = await runCli(['run', file, '--url', server.url]);
    expect(code).toBe(0);
    expect(stdout).toContain('✓ expectVaPayment ${payment_1.id}');
    expect(stdout.trimEnd().split('\n').at(-1)).toBe('1 passed, 0 failed');
  });
});
