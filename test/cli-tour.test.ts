import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type CliProcess, eventually, freePort, ROOT, runCli, spawnCli, stored, useTmp } from './helpers.js';

/** The commands of the README's quick tour, in order, as written (comments dropped). */
function tourCommands(): string[] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const tour = /^## Quick tour\n([^]*?)^## /m.exec(readme)![1]!;
  const blocks = [...tour.matchAll(/^```sh\n([^]*?)^```/gm)].map((match) => match[1]!);
  return blocks
    .flatMap((block) => block.split('\n'))
    .map((line) => line.replace(/\s+#.*$/, '').trim())
    .filter((line) => line.startsWith('npx va-sandbox ') || line === 'npm start');
}

/** A command line into arguments (the tour uses no quoting); `npm start` is the built CLI's `start` in the clone. */
const words = (line: string) => (line === 'npm start' ? ['start'] : line.replace(/^npx va-sandbox /, '').split(/\s+/));

describe('README quick tour', () => {
  it('every command works as written and shows what the tour says (ports 4580, 9000 moved to free ones)', async () => {
    const commands = tourCommands();
    expect(commands.length).toBeGreaterThanOrEqual(8);
    const dir = useTmp();
    const sandboxPort = await freePort();
    const receiverPort = await freePort();
    const env = { VA_SANDBOX_URL: `http://127.0.0.1:${sandboxPort}` };
    const onFreePorts = (line: string) => line.replaceAll('9000', String(receiverPort));

    let receiver: CliProcess | undefined;
    let follow: CliProcess | undefined;
    const callbacks = () =>
      receiver!
        .stdout()
        .split(/^(?=POST )/m)
        .filter(Boolean);
    const ran: string[] = [];
    for (const line of commands.map(onFreePorts)) {
      const args = words(line);
      ran.push(args.slice(0, 2).join(' '));
      if (args[0] === 'start') {
        // As a newcomer runs it: state in ./.va-sandbox of the current folder (a temp one here).
        const sandbox = spawnCli([...args, '--port', String(sandboxPort)], {}, { cwd: dir });
        await sandbox.waitFor(/listening on/);
      } else if (args[0] === 'receiver') {
        receiver = spawnCli(args, env);
        await receiver.waitFor(/listening on/, 'stderr');
      } else if (args.includes('--follow')) {
        follow = spawnCli(args, env);
        await follow.waitFor(/following/, 'stderr');
      } else {
        const run = await runCli(args, env);
        expect({ line, code: run.code, stderr: run.code === 0 ? '' : run.stderr }).toEqual({
          line,
          code: 0,
          stderr: '',
        });
        if (args[0] === 'transfer') {
          // "Terminal 2 shows three callbacks: created (answered 500), cash_in_received and succeeded."
          await eventually(() => callbacks().length >= 3, 10_000, 'three callbacks');
          expect(
            callbacks().map((text) => [
              /X-Service-Event-Type: (\S+)/.exec(text)?.[1],
              /answered (\d+)/.exec(text)?.[1],
            ]),
          ).toEqual([
            ['created', '500'],
            ['cash_in_received', '200'],
            ['succeeded', '200'],
          ]);
          await follow!.waitFor(/retrying +created +payment \S+ +attempt 1/);
          // "About 5 seconds later terminal 2 gets created again, with the same X-Service-Event-Id, and answers 200":
          // the sandbox clock runs with real time, nobody moves it.
          await eventually(() => callbacks().length >= 4, 10_000, 'the retry');
          const eventId = (text: string) => /X-Service-Event-Id: (\S+)/.exec(text)?.[1];
          expect(callbacks()[3]).toMatch(/answered 200[^]*X-Service-Event-Type: created/);
          expect(eventId(callbacks()[3]!)).toBe(eventId(callbacks()[0]!));
          await follow!.waitFor(/delivered +created +payment \S+ +attempt 2 +HTTP 200/);
        }
        if (args[0] === 'clock') {
          // "Terminal 2 gets its created, and as soon as the advance answers, failed", dated the payment's expiresAt.
          expect(
            callbacks()
              .slice(4)
              .map((text) => /X-Service-Event-Type: (\S+)/.exec(text)?.[1]),
          ).toEqual(['created', 'failed']);
          const expired = (await runCli(['payments', 'list', '--status', 'expired', '--json'], env)).stdout;
          const createdAt = [...callbacks()[5]!.matchAll(/"createdAt": ?"([^"]+)"/g)].at(-1)?.[1];
          expect(createdAt).toBe(JSON.parse(expired).data[0].expiresAt);
        }
        if (line.endsWith('payments list'))
          expect(run.stdout).toMatch(/completed\s+amount\s+ARS 1500\.00\s+ARS 1500\.00/);
        if (line.endsWith('events')) expect(run.stdout).toMatch(/page 1 of 1 · 5 events/);
        if (line.endsWith('deliveries list')) expect(run.stdout.match(/ delivered /g)).toHaveLength(5);
      }
    }
    expect(ran).toEqual([
      'start',
      'receiver --port',
      'deliveries list',
      'payments create',
      'transfer --to',
      'payments create',
      'clock advance',
      'payments list',
      'events',
      'deliveries list',
      'reset',
    ]);
    expect((await runCli(['payments', 'list'], env)).stdout).toBe('no VA payments\n');
    // The state where the tour says it is: the database, which holds the account reset (its hub stays).
    expect(Object.keys(stored(join(dir, '.va-sandbox', 'state.db'), 'sk_sandbox').vaPayments)).toEqual([]);
  });
});
