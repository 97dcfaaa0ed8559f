import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { progressText, progressWanted } from '../src/cli/progress.js';
import { api, BIN, eventually, freePort, PAYMENT, ROOT, runCli, useReceiver, useServer, useTmp } from './helpers.js';

/**
 * Runs the built CLI in a real pseudo-terminal (util-linux `script`), as a person at a terminal does: stdout and stderr
 * are the terminal. Resolves with everything the terminal was sent, escape sequences included.
 */
function inTerminal(args: string[], env: Record<string, string>) {
  const command = [process.execPath, BIN, ...args].map((word) => `'${word}'`).join(' ');
  const { CI: _ci, ...rest } = process.env;
  return new Promise<{ code: number | null; output: string }>((done) => {
    const child = spawn('script', ['-qfec', command, '/dev/null'], {
      env: { ...rest, NO_COLOR: '1', COLUMNS: '100', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.once('close', (code) => done({ code, output }));
  });
}

/** The built CLI's `start` in a pseudo-terminal, stopped (SIGTERM) once it answers /health; everything the terminal was sent. */
async function startInTerminal(args: string[]) {
  const port = await freePort();
  const command = [process.execPath, BIN, 'start', '--port', String(port), ...args]
    .map((word) => `'${word}'`)
    .join(' ');
  const { CI: _ci, ...rest } = process.env;
  const child = spawn('script', ['-qfec', command, '/dev/null'], {
    env: { ...rest, NO_COLOR: '1', COLUMNS: '100' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  const closed = new Promise((done) => child.once('close', done));
  await eventually(async () => (await fetch(`http://127.0.0.1:${port}/health`)).ok, 100_000, 'the server');
  child.kill('SIGTERM');
  await closed;
  return output;
}

/** A data set of the previous release (test/data/previous-release/clean) whose one account is copied under `accounts` keys. */
function previousRelease(accounts: number): string {
  const state = JSON.parse(readFileSync(join(ROOT, 'test', 'data', 'previous-release', 'clean', 'state.json'), 'utf8'));
  const [account] = Object.values(state.accounts);
  state.accounts = Object.fromEntries(Array.from({ length: accounts }, (_, i) => [`sk_previous_${i}`, account]));
  const file = join(useTmp(), 'state.json');
  writeFileSync(file, JSON.stringify(state));
  return file;
}

/** An account whose next 90 minutes of clock hold six expiries, each a `failed` callback its receiver takes 500 ms to answer. */
async function slowClock(key: string) {
  const server = await useServer();
  const receiver = await useReceiver(async () => {
    await new Promise((resolve) => setTimeout(resolve, 500));
    return { status: 200 };
  });
  const client = api(server.url, key);
  for (let i = 1; i <= 6; i++)
    await client.data('POST', '/api/v1/va-payments', {
      ...PAYMENT,
      ttlSeconds: i * 600,
      callbackUrl: `${receiver.url}/cb`,
    });
  await receiver.waitFor(6);
  return { env: { VA_SANDBOX_URL: server.url, VA_SANDBOX_API_KEY: key }, receiver };
}

describe('the progress line of long work', () => {
  it('says what, how far and how long is left, and "finishing" once all it counts is done', () => {
    expect(
      progressText({ what: 'clock advance', done: 1800, total: 3600, unit: 'sandbox seconds', elapsedMs: 3000 }),
    ).toBe('clock advance: 50% (1,800 of 3,600 sandbox seconds), about 3 s left');
    expect(progressText({ what: 'import', done: 0, total: 10, unit: 'steps', elapsedMs: 1200 })).toBe(
      'import: 0% (0 of 10 steps), working out the time left',
    );
    expect(progressText({ what: 'import', done: 10, total: 10, unit: 'steps', elapsedMs: 1200 })).toBe(
      'import: 100% (10 of 10 steps), finishing',
    );
    expect(progressText({ what: 'export', done: 0, total: 0, unit: 'MB received', elapsedMs: 4200 })).toBe(
      'export: 4 s so far',
    );
  });

  it('is wanted on a terminal only, and not with --json or --quiet, nor in CI', () => {
    const terminal = { isTTY: true } as NodeJS.WriteStream;
    const saved = process.env.CI;
    try {
      delete process.env.CI;
      expect([
        progressWanted(false, terminal),
        progressWanted(true, terminal),
        progressWanted(false, { isTTY: false } as NodeJS.WriteStream),
      ]).toEqual([true, false, false]);
      process.env.CI = 'true';
      expect(progressWanted(false, terminal)).toBe(false);
      process.env.CI = 'false';
      expect(progressWanted(false, terminal)).toBe(true);
    } finally {
      if (saved === undefined) delete process.env.CI;
      else process.env.CI = saved;
    }
  });

  it('clock advance over more than a second of due work shows one line on a terminal, redrawn in place, then erased', async () => {
    const { env, receiver } = await slowClock('sk_progress_tty');
    const run = await inTerminal(['clock', 'advance', '90m'], env);
    expect(run.code).toBe(0);
    expect(receiver.received.filter((r) => r.body.eventType === 'failed')).toHaveLength(6);
    // Each redraw starts with a carriage return and an erase of the line; none has a line break in it.
    const draws = run.output.split('\r\x1b[K').slice(1);
    const lines = draws.filter((draw) => draw.startsWith('clock advance: '));
    expect(lines.length).toBeGreaterThan(1);
    for (const line of lines)
      expect(line).toMatch(
        /^clock advance: \d+% \([\d,]+ of 5,400 sandbox seconds\), (about \d+ s left|working out the time left|finishing)$/,
      );
    // The line is erased before the answer, which starts on a clean line.
    expect(draws.at(-1)).toMatch(/^now +\S+\r?\noffsetSeconds +5400\r?\n$/);
  }, 60_000);

  it.each([
    ['--json', ['--json'], {}],
    ['CI', [], { CI: 'true' }],
  ])(
    'clock advance shows nothing with %s on a terminal',
    async (_, flags, more) => {
      const { env } = await slowClock(`sk_progress_${flags.length}`);
      const run = await inTerminal(['clock', 'advance', '90m', ...flags], { ...env, ...more });
      expect(run.code).toBe(0);
      expect(run.output).not.toContain('clock advance:');
      expect(run.output).not.toContain('\x1b[K');
    },
    60_000,
  );

  it('clock advance shows nothing when stderr is not a terminal', async () => {
    const { env } = await slowClock('sk_progress_pipe');
    const run = await runCli(['clock', 'advance', '90m'], env);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toMatch(/^now +\S+\noffsetSeconds +5400\n$/);
  }, 60_000);
});

describe('the progress line of an import and an export', () => {
  it('an import of 30,000 payments shows it on a terminal, then gives way to the answer; exported again, the account is whole', async () => {
    // A real export of one expired payment, its payment copied 30,000 times under new ids.
    const server = await useServer();
    const source = api(server.url, 'sk_progress_source');
    await source.data('POST', '/api/v1/va-payments', { ...PAYMENT, ttlSeconds: 60 });
    await source.data('POST', '/sandbox/v1/clock/advance', { seconds: 120 });
    const doc = await source.data('GET', '/sandbox/v1/export');
    const [payment] = Object.values(doc.account.vaPayments) as { id: string }[];
    doc.account.events = {};
    doc.account.deliveries = {};
    doc.account.vaPayments = Object.fromEntries(
      Array.from({ length: 30_000 }, () => randomUUID()).map((id) => [id, { ...payment, id }]),
    );
    const dir = useTmp();
    writeFileSync(join(dir, 'big.json'), JSON.stringify(doc));
    const env = { VA_SANDBOX_URL: server.url, VA_SANDBOX_API_KEY: 'sk_progress_import' };

    const imported = await inTerminal(['import', join(dir, 'big.json')], env);
    expect(imported.code).toBe(0);
    const importDraws = imported.output.split('\r\x1b[K').slice(1);
    expect(
      importDraws.filter((draw) =>
        /^import: \d+% \([\d,]+ of 30,00\d steps\), (about \d+ s left|working out the time left|finishing)$/.test(draw),
      ).length,
    ).toBeGreaterThan(0);
    expect(importDraws.at(-1)).toMatch(/^imported 30000 vaPayments, /);

    // Exported again, whole (on a fast machine in less than the second a line waits for: the next test paces one).
    const exported = await inTerminal(['export', '--out', join(dir, 'again.json')], env);
    expect(exported.code).toBe(0);
    expect(exported.output.split('\r\x1b[K').at(-1)).toMatch(/^exported 30000 vaPayments, /);
    expect(Object.keys(JSON.parse(readFileSync(join(dir, 'again.json'), 'utf8')).account.vaPayments)).toHaveLength(
      30_000,
    );

    // Piped, neither says anything on stderr.
    const piped = await runCli(['import', join(dir, 'big.json')], env);
    expect(piped).toMatchObject({ code: 0, stderr: '' });
  }, 120_000);
});

describe('the progress line of an export', () => {
  it('says how long it waited for the answer, then how much of it came, from a sandbox that answers slowly', async () => {
    const server = await useServer();
    const source = api(server.url, 'sk_progress_paced');
    await source.data('POST', '/api/v1/va-payments', { ...PAYMENT });
    const body = Buffer.from(
      JSON.stringify({
        success: true,
        data: await source.data('GET', '/sandbox/v1/export'),
        timestamp: new Date().toISOString(),
      }),
    );
    // The sandbox's own answer, held 1.5 s (as a large account's is while it is built), then sent in 20 parts 100 ms apart.
    const paced = createServer(async (_request, response) => {
      await sleep(1500);
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
      const part = Math.ceil(body.length / 20);
      for (let at = 0; at < body.length; at += part) {
        response.write(body.subarray(at, at + part));
        await sleep(100);
      }
      response.end();
    });
    await new Promise<void>((done) => paced.listen(0, '127.0.0.1', done));
    try {
      const file = join(useTmp(), 'paced.json');
      const run = await inTerminal(['export', '--out', file], {
        VA_SANDBOX_URL: `http://127.0.0.1:${(paced.address() as AddressInfo).port}`,
      });
      expect(run.code).toBe(0);
      const draws = run.output.split('\r\x1b[K').slice(1);
      expect(draws).toContain('export: 1 s so far');
      expect(
        draws.filter((draw) =>
          /^export: \d+% \([\d,]+ of [\d,]+ KB received\), (about \d+ s left|finishing)$/.test(draw),
        ).length,
      ).toBeGreaterThan(0);
      expect(draws.at(-1)).toMatch(/^exported 1 vaPayments, /);
      expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(JSON.parse(body.toString()).data);
    } finally {
      paced.close();
    }
  }, 60_000);
});

describe("the progress of the server's own work", () => {
  it('a migration at start shows the line on the terminal of va-sandbox start, erased before the line saying it is done', async () => {
    const output = await startInTerminal(['--data', previousRelease(1000)]);
    const draws = output.split('\r\x1b[K').slice(1);
    expect(
      draws.filter((draw) =>
        /^migration: \d+% \([\d,]+ of 1,000 accounts\), (about \d+ s left|working out the time left|finishing)$/.test(
          draw,
        ),
      ).length,
    ).toBeGreaterThan(0);
    expect(draws.find((draw) => draw.startsWith('copied '))).toMatch(
      /^copied the previous release's data set \S+ into \S+ \(1000 accounts\)/,
    );
  }, 120_000);

  it("what fell due while no server ran (the data set's expiries) is reported as catching up at start, then over", async () => {
    // Reported to the same board as the migration, so `start` draws it the same way once it runs past a second.
    const views: ({ what: string; total: number; unit: string } | null)[] = [];
    await useServer({ data: previousRelease(1000), onServerWork: (view) => views.push(view) });
    const catchingUp = views.filter((view) => view?.what === 'catching up at start');
    expect(catchingUp.length).toBeGreaterThan(0);
    expect(catchingUp.at(-1)).toMatchObject({ total: 1000, unit: 'accounts' });
    expect(views.at(-1)).toBeNull();
  }, 120_000);

  it('a migration at start shows nothing with --quiet', async () => {
    const output = await startInTerminal(['--data', previousRelease(1000), '--quiet']);
    expect(output).toContain('(1000 accounts)');
    expect(output).not.toContain('migration:');
    expect(output).not.toContain('\x1b[K');
  }, 120_000);

  it('a retention sweep says how many of the accounts in use it went through, then that it is over', async () => {
    const views: unknown[] = [];
    const server = await useServer({ keepDays: 1, onServerWork: (view) => views.push(view) });
    for (const key of ['sk_sweep_1', 'sk_sweep_2', 'sk_sweep_3'])
      await api(server.url, key).data('POST', '/api/v1/va-payments', { ...PAYMENT });
    server.runtime.sweep();
    expect(
      views.map((view) =>
        view === null
          ? null
          : [(view as { what: string }).what, (view as { done: number }).done, (view as { total: number }).total],
      ),
    ).toEqual([
      ['retention sweep', 0, 3],
      ['retention sweep', 1, 3],
      ['retention sweep', 2, 3],
      ['retention sweep', 3, 3],
      null,
    ]);
  });
});

describe('GET /sandbox/v1/progress', () => {
  it("answers the account's clock move as it stands while it runs, and null once it is over or for another account", async () => {
    const { env } = await slowClock('sk_progress_endpoint');
    const mine = api(env.VA_SANDBOX_URL, 'sk_progress_endpoint');
    const moving = mine.data('POST', '/sandbox/v1/clock/advance', { seconds: 5400 });
    const during = await eventually(
      async () => {
        const view = await mine.data('GET', '/sandbox/v1/progress');
        return view?.done > 0 ? view : null;
      },
      10_000,
      'progress of the clock move',
    );
    expect(during).toMatchObject({ what: 'clock advance', total: 5400, unit: 'sandbox seconds' });
    expect(await api(env.VA_SANDBOX_URL, 'sk_progress_other').data('GET', '/sandbox/v1/progress')).toBeNull();
    await moving;
    expect(await mine.data('GET', '/sandbox/v1/progress')).toBeNull();
  }, 60_000);
});
