import { spawnSync } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, runCli, useTmp } from './helpers.js';

describe('completion', () => {
  it.each(['bash', 'zsh', 'fish'])('completion %s prints a script that completes va-sandbox', async (shell) => {
    const run = await runCli(['completion', shell]);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toContain('va-sandbox complete --');
    expect(run.stdout.length).toBeGreaterThan(500);
  });

  it('a wrong shell is a usage error: exit 2, one line', async () => {
    const run = await runCli(['completion', 'tcsh']);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^va-sandbox: .*'tcsh'.*bash, zsh, fish.*\n$/);
  });

  it('complete -- lists commands, subcommands, options and choices', async () => {
    const words = async (...args: string[]) => {
      const run = await runCli(['complete', '--', ...args]);
      expect(run.code).toBe(0);
      return run.stdout
        .split('\n')
        .filter((line) => line && !line.startsWith(':'))
        .map((line) => line.split('\t')[0]);
    };
    expect(await words('pay')).toEqual(['payments']);
    expect(await words('')).toEqual(expect.arrayContaining(['start', 'payments', 'clients', 'check', 'completion']));
    expect(await words('')).not.toContain('complete');
    expect(await words('payments', 'cr')).toEqual(['create']);
    expect(await words('payments', '')).toEqual(expect.arrayContaining(['create', 'list', 'get', 'cancel']));
    expect(await words('payments', 'create', '--am')).toEqual(['--amount']);
    expect(await words('payments', 'list', '--js')).toEqual(['--json']);
    expect(await words('completion', '')).toEqual(['bash', 'zsh', 'fish']);
  });

  it('bash: the script, sourced, completes `va-sandbox pay` and `va-sandbox payments cr`', async () => {
    const dir = useTmp();
    writeFileSync(
      join(dir, 'va-sandbox'),
      `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} "$@"\n`,
    );
    chmodSync(join(dir, 'va-sandbox'), 0o755);
    writeFileSync(join(dir, 'completion.bash'), (await runCli(['completion', 'bash'])).stdout);
    // What the bash-completion package gives completion functions, where it is not installed.
    const words = `type _get_comp_words_by_ref >/dev/null 2>&1 || _get_comp_words_by_ref() { cur=\${COMP_WORDS[COMP_CWORD]}; prev=\${COMP_WORDS[COMP_CWORD-1]}; words=("\${COMP_WORDS[@]}"); cword=$COMP_CWORD; }`;
    const ask = (line: string) =>
      `COMP_WORDS=(${line}); COMP_CWORD=$((\${#COMP_WORDS[@]} - 1)); COMPREPLY=(); __va_sandbox_complete 2>/dev/null; echo "${line}: \${COMPREPLY[*]}"`;
    const script = [
      words,
      `source ${JSON.stringify(join(dir, 'completion.bash'))}`,
      ask('va-sandbox pay'),
      ask('va-sandbox payments cr'),
      ask('va-sandbox clock ad'),
    ].join('\n');
    const bash = spawnSync('bash', ['--norc', '--noprofile', '-c', script], {
      env: { ...process.env, PATH: `${dir}:${process.env.PATH}` },
      encoding: 'utf8',
    });
    expect(bash.status).toBe(0);
    expect(bash.stdout).toBe(
      'va-sandbox pay: payments\nva-sandbox payments cr: create\nva-sandbox clock ad: advance\n',
    );
  });
});
