import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers.js';

const run = promisify(execFile);
const BIN = pathToFileURL(join(ROOT, 'bin', 'va-sandbox.js')).href;

/**
 * Node 22 warns that node:sqlite is experimental when it is loaded; the CLI prints no such warning on any supported
 * Node (the `va-sandbox` bin drops exactly that one) and still prints every other warning. Runs on the Node that runs
 * the suite: CI runs it on 22, 24 and 26.
 */
describe('warnings of the va-sandbox bin', () => {
  it(`loading node:sqlite prints nothing on Node ${process.versions.node}; other warnings still print`, async () => {
    // The real bin, as `va-sandbox --version` runs it (that command exits by itself, not the bin), then node:sqlite,
    // a SQLite ExperimentalWarning as Node 22 emits it, in each form emitWarning takes, and two others.
    const script = `
      process.argv = [process.argv[0], ${JSON.stringify(join(ROOT, 'bin', 'va-sandbox.js'))}, '--version'];
      await import(${JSON.stringify(BIN)});
      await import('node:sqlite');
      process.emitWarning('SQLite is an experimental feature and might change at any time', 'ExperimentalWarning');
      process.emitWarning('SQLite is an experimental feature and might change at any time', { type: 'ExperimentalWarning' });
      const error = new Error('SQLite is an experimental feature and might change at any time');
      error.name = 'ExperimentalWarning';
      process.emitWarning(error);
      process.emitWarning('Something else is an experimental feature', 'ExperimentalWarning');
      process.emitWarning('SQLite said something else', 'DeprecationWarning');
    `;
    const { stdout, stderr } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT });
    expect(stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
    const warnings = stderr
      .split('\n')
      .filter((line) => /Warning:/.test(line))
      .map((line) => line.replace(/^\(node:\d+\) /, ''));
    expect(warnings).toEqual([
      'ExperimentalWarning: Something else is an experimental feature',
      'DeprecationWarning: SQLite said something else',
    ]);
  });

  it('without the bin, the same script shows Node 22 would print the SQLite warning (what the filter drops)', async () => {
    const script = `
      await import('node:sqlite');
      process.emitWarning('SQLite is an experimental feature and might change at any time', 'ExperimentalWarning');
    `;
    const { stderr } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT });
    const sqlite = stderr.split('\n').filter((line) => /ExperimentalWarning: SQLite/.test(line));
    // The one emitted by hand, plus Node 22's own when it loads node:sqlite.
    expect(sqlite).toHaveLength(process.versions.node.startsWith('22.') ? 2 : 1);
  });

  it(`code that embeds the sandbox (startSandbox, with a file and in memory) prints no warning on Node ${process.versions.node}`, async () => {
    const script = `
      const { startSandbox } = await import(${JSON.stringify(pathToFileURL(join(ROOT, 'dist', 'index.js')).href)});
      for (const store of ['memory', 'file']) {
        const sandbox = await startSandbox({ store });
        await sandbox.client.vaPayments.create({ paymentHubId: 1, currency: 'ARS', lockMode: 'time', amount: 10 });
        await sandbox.stop();
      }
      console.log('done');
    `;
    const { stdout, stderr } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT });
    expect(stdout).toBe('done\n');
    expect(stderr).toBe('');
  });
});
