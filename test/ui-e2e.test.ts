import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, eventually, freePort, spawnServer, useReceiver, useTmp } from './helpers.js';

/** Screens are polled; these are only how long to keep trying on a slow, busy machine. */
const WAIT_MS = 30_000;
const SOCKETS: string[] = [];
afterAll(() => {
  for (const socket of SOCKETS) {
    try {
      execFileSync('tmux', ['-L', socket, 'kill-server'], { stdio: 'ignore' });
    } catch {
      // Already gone with its last session.
    }
  }
});

/**
 * The built `va-sandbox ui` in a real pseudo-terminal: a tmux session of its own (own socket, no user config).
 * A shell runs it and then says its exit status and stays, so the last screen can be read.
 */
function useTerminal(columns: number, rows: number, command: string[], cwd: string) {
  const socket = `va-sandbox-ui-${process.pid}-${SOCKETS.length + 1}`;
  SOCKETS.push(socket);
  const tmux = (...args: string[]) =>
    execFileSync('tmux', ['-L', socket, '-f', '/dev/null', ...args], { encoding: 'utf8' });
  const line = command.map((word) => `'${word.replaceAll("'", `'\\''`)}'`).join(' ');
  tmux(
    'new-session',
    '-d',
    '-s',
    'ui',
    '-x',
    String(columns),
    '-y',
    String(rows),
    '-c',
    cwd,
    `${line}; echo "[exited $?]"; sleep 600`,
  );
  const screen = (escapes = false) => tmux('capture-pane', '-t', 'ui', '-p', ...(escapes ? ['-e'] : []));
  /** The screen once `pattern` is on it. */
  const waitFor = (pattern: RegExp): Promise<string> =>
    eventually(() => (pattern.test(screen()) ? screen() : ''), WAIT_MS, `${pattern} on the screen`).catch(
      (error: Error) => {
        throw new Error(`${error.message}; the screen:\n${screen()}`);
      },
    );
  return {
    screen,
    waitFor,
    /** Keys by tmux name (`Enter`, `Tab`, `Right`), each sent on its own, as typed. */
    async keys(...keys: string[]) {
      for (const key of keys) {
        tmux('send-keys', '-t', 'ui', key);
        await pause();
      }
    },
    /** Text, typed as is. */
    async type(text: string) {
      tmux('send-keys', '-t', 'ui', '-l', text);
      await pause();
    },
    /** The program's exit status, once it has exited. */
    exited: async () => ({ status: Number(/\[exited (\d+)\]/.exec(await waitFor(/\[exited \d+\]/))![1]) }),
  };
}

/** A view subscribes to keys just after it shows: a person never types that fast, a script can. */
const pause = () => new Promise((resolve) => setTimeout(resolve, 100));

/** Foreground colours in SGR sequences (bold, dim and inverse are attributes, which NO_COLOR leaves). */
const COLOUR = /\x1b\[(?:[0-9;]*;)?(?:3[0-7]|9[0-7]|38;[0-9;]+)m/;

describe('va-sandbox ui in a real terminal', () => {
  it('in 80x24, against a running sandbox: a payment made and paid by key presses shows its succeeded callback; q quits cleanly', {
    timeout: 120_000,
  }, async () => {
    const server = await spawnServer(['--memory']);
    const receiver = await useReceiver();
    const terminal = useTerminal(
      80,
      24,
      [process.execPath, BIN, 'ui', '--url', server.url, '--api-key', 'sk_e2e_ui'],
      useTmp(),
    );
    await terminal.waitFor(/live[^]*VA payments {2}0 of 0/);

    await terminal.keys('n');
    await terminal.waitFor(/New VA payment/);
    await terminal.type('1500');
    await terminal.keys('Tab', 'Right', 'Tab', 'Tab');
    await terminal.type(`${receiver.url}/e2e`);
    await terminal.keys('Enter');
    await terminal.waitFor(/VA payment created: transfer ARS 1500\.00 to SANDBOX\.HUB\.COBROS/);
    await terminal.keys('t');
    await terminal.waitFor(/> to +SANDBOX\.HUB\.COBROS[^]*total +1500/);
    await terminal.keys('Enter');

    const screen = await terminal.waitFor(/delivered succeeded +attempt 1\/3 HTTP 200/);
    expect(screen).toMatch(/> completed +ARS 1500\.00 +ARS 1500\.00 +ARS 0\.00/);
    const lines = screen.replace(/\n$/, '').split('\n');
    expect(lines).toHaveLength(24);
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(80);
    // The help line stays on screen, the panes above it.
    expect(lines[22]).toMatch(/n payment +c client .* q quit/);
    // Status words in colour on a terminal: "delivered" in green.
    expect(terminal.screen(true)).toMatch(/\x1b\[32m ?delivered/);
    const got = await receiver.waitFor(3, (request) => request.url === '/e2e');
    expect(got.map((request) => request.body.eventType)).toEqual(['created', 'cash_in_received', 'succeeded']);

    await terminal.keys('q');
    expect(await terminal.exited()).toEqual({ status: 0 });
    // The terminal's own page is back: the dashboard was drawn on the alternate screen.
    expect(terminal.screen()).not.toContain('VA payments');
  });

  it('in 100x30, with nothing listening: starts a sandbox in the process and says so, honours NO_COLOR, and q stops it', {
    timeout: 120_000,
  }, async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const cwd = useTmp();
    const terminal = useTerminal(100, 30, ['env', 'NO_COLOR=1', process.execPath, BIN, 'ui', '--url', url], cwd);
    const screen = await terminal.waitFor(
      /\(embedded\) {2}live[^]*no sandbox answered, so one runs here: data \.va-sandbox\/state\.db, q stops it/,
    );
    expect(screen.replace(/\n$/, '').split('\n')).toHaveLength(30);
    expect((await fetch(`${url}/health`)).ok).toBe(true);
    await terminal.keys('c');
    await terminal.waitFor(/New client/);
    await terminal.type('Ana');
    await terminal.keys('Tab');
    await terminal.type('20-12345678-6');
    await terminal.keys('Enter');
    await terminal.waitFor(/> Ana +20-12345678-6 +active +ARS 0\.00/);
    expect(terminal.screen(true)).not.toMatch(COLOUR);

    await terminal.keys('q');
    expect(await terminal.exited()).toEqual({ status: 0 });
    expect(terminal.screen()).toMatch(
      /va-sandbox ui: stopped the sandbox it started; its state is in \.va-sandbox\/state\.db/,
    );
    await expect(fetch(`${url}/health`)).rejects.toThrow();
    expect(existsSync(join(cwd, '.va-sandbox', 'state.db'))).toBe(true);
  });
});
