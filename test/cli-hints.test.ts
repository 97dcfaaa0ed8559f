import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { api, BIN, freePort, ROOT, runCli, spawnCli, spawnServer, useServer, useTmp } from './helpers.js';

/** What a command prints when something is off: one line that says what to do, never a stack or a wrong hint. */

/** Runs a command to completion with its own folder and a terminal (script(1) gives it a pty, as `ui` needs). */
function inTerminal(command: string, cwd: string) {
  return new Promise<{ code: number | null; output: string }>((done) => {
    const child = spawn('script', ['-qec', command, '/dev/null'], {
      cwd,
      env: { ...process.env, NO_COLOR: '1' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.once('close', (code) => done({ code, output }));
  });
}

describe('hints that say what to do', () => {
  it('a clone run before its first build says to build, in one line; --version still answers', async () => {
    const clone = useTmp();
    mkdirSync(join(clone, 'bin'));
    copyFileSync(BIN, join(clone, 'bin', 'va-sandbox.js'));
    copyFileSync(join(ROOT, 'package.json'), join(clone, 'package.json'));
    const run = await new Promise<{ code: number | null; stderr: string }>((done) => {
      const child = spawn(process.execPath, [join(clone, 'bin', 'va-sandbox.js'), 'start'], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (chunk) => (stderr += chunk));
      child.once('close', (code) => done({ code, stderr }));
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(`va-sandbox: not built yet: run \`npm run build\` in ${clone}/\n`);
  });

  it("an unknown option is one line, with commander's suggestion in it", async () => {
    const run = await runCli(['payments', 'list', '--stauts', 'waiting']);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      "va-sandbox: unknown option '--stauts' (Did you mean --status?) (see va-sandbox payments list --help)\n",
    );
  });

  it('an unknown API key is named by its last 4 characters, never in full', async () => {
    const server = await useServer({ apiKeys: ['sk_only_this'] });
    const response = await api(server.url, 'sk_secret_wxyz').get('/api/v1/va-payments');
    expect(response.status).toBe(401);
    expect(response.body.error.message).toBe(
      'Unknown API key …wxyz: this sandbox accepts only the keys it was started with (--api-key)',
    );
    expect(JSON.stringify(response.body)).not.toContain('sk_secret');
  });

  it('start --memory does not claim to have saved anything when it stops', async () => {
    const memory = await spawnServer(['--memory']);
    memory.child.kill('SIGINT');
    expect(await memory.exited).toBe(0);
    expect(memory.stdout()).toContain('va-sandbox stopped; it kept nothing (--memory)\n');
    expect(memory.stdout()).not.toContain('saved');
    const data = join(useTmp(), 'state.db');
    const file = await spawnServer(['--data', data]);
    file.child.kill('SIGINT');
    expect(await file.exited).toBe(0);
    expect(file.stdout()).toContain(`va-sandbox stopped; state saved in ${data}\n`);
  });

  it('run --url against a stopped sandbox is the one line every command gives', async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const run = await runCli(['run', join(ROOT, 'fixtures', 'cancel.json'), '--url', url]);
    expect(run.code).toBe(3);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(`va-sandbox: no sandbox at ${url} — start one with \`va-sandbox start\`\n`);
  });

  it('ui, finding the default data file held by a server at another address, points at --url (it has no --data)', async () => {
    const folder = useTmp();
    const holder = spawnCli(
      ['start', '--port', String(await freePort()), '--data', '.va-sandbox/state.db'],
      {},
      { cwd: folder },
    );
    await holder.waitFor(/listening on/);
    const elsewhere = `http://127.0.0.1:${await freePort()}`;
    const ui = await inTerminal(`${process.execPath} ${BIN} ui --url ${elsewhere}`, folder);
    expect(ui.code).toBe(1);
    const lines = ui.output
      .replace(/\x1b\[[?0-9;]*[a-zA-Z]/g, '')
      .trim()
      .split(/\r?\n/);
    expect(lines).toEqual([
      `va-sandbox: no sandbox at ${elsewhere}, and .va-sandbox/state.db is held by another va-sandbox server: give ui its address with --url, or stop it`,
    ]);
    expect(ui.output).not.toContain('--memory');
  });
});
