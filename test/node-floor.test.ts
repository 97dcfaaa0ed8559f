import { execFile, execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { BIN, ROOT } from './helpers.js';

const run = promisify(execFile);
const LINE = (version: string) => `va-sandbox needs Node.js 22.13 or later (this is ${version})\n`;

/** What the bin answers on `node`: exit code and both streams. */
async function bin(node: string, args: string[]) {
  try {
    const { stdout, stderr } = await run(node, [BIN, ...args], { cwd: ROOT, timeout: 20_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const { code, stdout, stderr } = error as { code: number; stdout: string; stderr: string };
    return { code, stdout, stderr };
  }
}

/** A Node older than the floor installed on this machine (Debian's is 20), if any. */
function oldNode(): { path: string; version: string } | undefined {
  for (const path of ['/usr/bin/node', '/usr/local/bin/node']) {
    if (!existsSync(path)) continue;
    const version = execFileSync(path, ['--version'], { encoding: 'utf8' }).trim();
    const [major, minor] = version.slice(1).split('.').map(Number) as [number, number];
    if (major < 22 || (major === 22 && minor < 13)) return { path, version };
  }
  return undefined;
}

const old = oldNode();

describe('the Node floor (22.13)', () => {
  it('is what package.json engines says', () => {
    expect(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).engines.node).toBe('>=22.13');
  });

  it.skipIf(!old)(
    `on an older Node (${old?.version ?? 'none installed here'}) every command prints one line and exits 1`,
    async () => {
      for (const args of [['--version'], ['start', '--memory', '--port', '0'], ['payments', 'list']]) {
        expect({ args, ...(await bin(old!.path, args)) }).toEqual({
          args,
          code: 1,
          stdout: '',
          stderr: LINE(old!.version),
        });
      }
    },
  );

  it('refuses exactly the versions below 22.13 (the check, under each version it may see)', async () => {
    // The bin imported under a stated version: the check reads process.versions.node and process.version.
    const under = async (version: string) => {
      const script = `
        Object.defineProperty(process.versions, 'node', { value: ${JSON.stringify(version)} });
        Object.defineProperty(process, 'version', { value: ${JSON.stringify(`v${version}`)} });
        process.argv = [process.argv[0], ${JSON.stringify(BIN)}, '--version'];
        await import(${JSON.stringify(pathToFileURL(BIN).href)});
      `;
      try {
        const { stdout, stderr } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT });
        return { version, code: 0, stdout, stderr };
      } catch (error) {
        const { code, stdout, stderr } = error as { code: number; stdout: string; stderr: string };
        return { version, code, stdout, stderr };
      }
    };
    const answers = await Promise.all(
      ['18.20.8', '20.20.2', '21.99.0', '22.12.9', '22.13.0', '22.23.3', '23.0.0', '26.12.1'].map(under),
    );
    const refused = answers.filter((answer) => answer.code === 1).map(({ version }) => version);
    expect(refused).toEqual(['18.20.8', '20.20.2', '21.99.0', '22.12.9']);
    for (const answer of answers) {
      expect(answer).toEqual(
        refused.includes(answer.version)
          ? { version: answer.version, code: 1, stdout: '', stderr: LINE(`v${answer.version}`) }
          : { version: answer.version, code: 0, stdout: expect.stringMatching(/^\d+\.\d+\.\d+\n$/), stderr: '' },
      );
    }
  });
});
