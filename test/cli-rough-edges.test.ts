import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, runCli, spawnCli, useTmp } from './helpers.js';

/** `start` with these arguments: its exit code, or `running` once it prints its banner (then it is stopped). */
async function startExit(args: string[], env: Record<string, string> = {}) {
  const start = spawnCli([...args, '--memory', '--port', '0'], env);
  const running = start.waitFor(/try: /).then(() => 'running' as const, () => start.exited);
  const code = await Promise.race([start.exited, running]);
  if (code === 'running') start.child.kill('SIGINT');
  return { code, stdout: start.stdout(), stderr: start.stderr() };
}

describe('start refuses an API key the server could never match (exit 2, one line)', () => {
  const refused = (key: string, why: RegExp) => ({ code: 2, stdout: '', stderr: expect.stringMatching(new RegExp(`^va-sandbox: .*"${key}".*${why.source}.*\\n$`)) });
  const SPACE = /visible ASCII, no spaces/;
  const BEARER = /without "Bearer "/;

  it('from --api-key, given after start or before it', async () => {
    expect(await startExit(['start', '--api-key', 'sk ci'])).toEqual(refused('sk ci', SPACE));
    expect(await startExit(['start', '--api-key', 'sk_ok', '--api-key', 'Bearer sk_x'])).toEqual(refused('Bearer sk_x', BEARER));
    expect(await startExit(['--api-key', 'Bearer sk_x', 'start'])).toEqual(refused('Bearer sk_x', BEARER));
    expect(await startExit(['start', '--api-key', 'sk_\u00f1'])).toEqual(refused('sk_\u00f1', SPACE));
  });

  it('from VA_SANDBOX_API_KEYS and from apiKeys in a config file', async () => {
    expect(await startExit(['start'], { VA_SANDBOX_API_KEYS: 'sk_a,sk b' })).toEqual(refused('sk b', SPACE));
    const config = join(useTmp(), 'va-sandbox.json');
    writeFileSync(config, JSON.stringify({ apiKeys: ['sk_a', 'Bearer sk_x'] }));
    expect(await startExit(['start', '--config', config])).toEqual(refused('Bearer sk_x', BEARER));
  });

  it('a token starts as before', async () => {
    const start = await startExit(['start', '--api-key', 'sk_ci-1.x~/+='], { VA_SANDBOX_API_KEYS: '' });
    expect(start.code).toBe('running');
    expect(start.stdout).toContain("-H 'Authorization: Bearer sk_ci-1.x~/+='");
  });
});

describe('listen --events: what is said of the other events', () => {
  it('README, docs/cli.md and listen --help say the others still go to their own URLs', async () => {
    const said = [readFileSync(join(ROOT, 'README.md'), 'utf8'), readFileSync(join(ROOT, 'docs', 'cli.md'), 'utf8'), (await runCli(['listen', '--help'])).stdout];
    for (const text of said) {
      const flat = text.replace(/\s+/g, ' ');
      // What follows the first mention of --events, up to the end of its sentence or option.
      expect(flat.slice(flat.indexOf('--events'), flat.indexOf('--events') + 250)).toMatch(/the others still go to their own URLs/);
    }
  });
});
