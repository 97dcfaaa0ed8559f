import { glob, mkdir, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { Command } from 'commander';
import type { RunEvent, RunResult, StepResult } from '../../sandbox/scenarios/index.js';
import { createClient } from '../client.js';
import { DEFAULT_API_KEY, example, given, globalOptions, outputOf } from '../context.js';
import { baseUrl, url } from '../options.js';
import { paint } from '../render.js';

const MARK: Record<StepResult['status'], string> = {
  passed: paint('green', '✓'),
  failed: paint('red', '✗'),
  skipped: paint('gray', '-'),
};

const stepLine = (step: StepResult): string =>
  [
    `  ${MARK[step.status]} ${step.status === 'skipped' ? paint('gray', step.label) : step.label}`,
    ...step.failures.map((f) => `      ${paint('red', f)}`),
  ].join('\n');

/** Live, human lines for each scenario and step as it finishes. */
function humanProgress(event: RunEvent): void {
  const write = (text: string) => process.stdout.write(`${text}\n`);
  if (event.type === 'scenario:start') write(`${paint('bold', event.name)} ${paint('dim', `(${event.file})`)}`);
  else if (event.type === 'step') write(stepLine(event.step));
  else write(event.result.status === 'passed' ? `  ${paint('green', 'passed')}\n` : `  ${paint('red', 'failed')}\n`);
}

const summary = (run: RunResult): string => {
  const line = `${run.passed} passed, ${run.failed} failed`;
  return run.failed ? paint('red', line) : paint('green', line);
};

/**
 * The files each argument names: a pattern (`fixtures/*.json`, quoted or from a shell that left it as it was) is
 * expanded here, sorted; a name with no pattern stays as given, so a missing file fails as itself.
 */
async function expand(args: string[]): Promise<string[]> {
  const files: string[] = [];
  for (const arg of args) {
    if (!/[*?[{]/.test(arg)) files.push(arg);
    else {
      const matched: string[] = [];
      for await (const file of glob(arg)) matched.push(file);
      matched.sort();
      if (matched.length === 0) throw new Error(`no file matches ${arg}`);
      files.push(...matched);
    }
  }
  return files;
}

/**
 * `run <scenario...>`: plays scenario files against the sandbox at --url (or VA_SANDBOX_URL), or an embedded one
 * in memory when none is given, each in a fresh account. Exit 1 when any step or expectation fails.
 */
export function runCommand(): Command {
  const command = new Command('run')
    .description('Run scenario files: steps against the sandbox, expectations on payments, balances and callbacks')
    .argument('<scenario...>', 'scenario files (JSON), or patterns such as fixtures/*.json (expanded here)')
    .option(
      '--callback-url <url>',
      'the address the sandbox reaches the built-in receiver at, when not loopback (its port is used)',
      url,
    )
    .option('--report <file>', 'write a JUnit XML report here')
    .action(async (files: string[], opts: { callbackUrl?: string; report?: string }, cmd: Command) => {
      const out = outputOf(cmd);
      const envUrl = process.env.VA_SANDBOX_URL || undefined;
      const target = given<string>(cmd, 'url') ?? (envUrl === undefined ? undefined : baseUrl(envUrl));
      const apiKey = given<string>(cmd, 'apiKey') ?? (process.env.VA_SANDBOX_API_KEY || undefined);
      // A sandbox that is not there is one line, as for every other command, not a list of skipped steps.
      if (target)
        for await (const _ of (await createClient(target, apiKey ?? DEFAULT_API_KEY).send('GET', '/health')).body);
      const { loadScenarioFile, runScenarios, ScenarioFileError } = await import(
        '../../sandbox/scenarios/scenario-runner.js'
      );
      const paths = await expand(files);
      // A file that is not a scenario fails on its own; the others run.
      const scenarios = await Promise.all(
        paths.map((file) =>
          loadScenarioFile(file).catch((error: unknown) => {
            if (error instanceof ScenarioFileError) return { file, error };
            throw error;
          }),
        ),
      );
      if (!out.json)
        out.note(
          target
            ? `running ${paths.length} scenario(s) against ${target}`
            : `running ${paths.length} scenario(s) on an embedded sandbox`,
        );
      const run = await runScenarios(scenarios, {
        url: target,
        apiKey,
        callbackUrl: opts.callbackUrl,
        onEvent: out.json ? undefined : humanProgress,
      });
      if (opts.report) {
        const { junitReport } = await import('../../sandbox/scenarios/junit.js');
        await mkdir(dirname(resolve(opts.report)), { recursive: true });
        await writeFile(opts.report, junitReport(run));
      }
      out.result(run, summary);
      if (run.failed > 0) throw new Error(`${run.failed} of ${run.scenarios.length} scenario(s) failed`);
    });
  return example(
    globalOptions(command),
    'va-sandbox run fixtures/*.json',
    'va-sandbox run fixtures/*.json --url http://127.0.0.1:4580 --report junit.xml',
    'va-sandbox run incident.json --json | jq .scenarios[0].steps',
  );
}
