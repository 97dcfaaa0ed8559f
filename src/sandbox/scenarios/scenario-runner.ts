import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { sandboxClient } from '../../client/api-client.js';
import { issuesToDetails } from '../../core/records/schemas.js';
import type { Scope } from '../../core/scenarios/references.js';
import {
  isExpectation,
  RECEIVER,
  type Scenario,
  type ScenarioStep,
  scenarioSchema,
} from '../../core/scenarios/scenario.js';
import { type Receiver, startReceiver } from '../delivery/receiver.js';
import { describeError, labelOf, runStep, type StepContext } from './scenario-steps.js';

/**
 * Runs scenario files against a sandbox over its HTTP API, each in a fresh account, with a built-in receiver for
 * the callbacks. It prints nothing: it reports each step through `onEvent`, and returns the results.
 */

/** A scenario file as read: its scenario, or why it is not one (it then runs as one failed step, the others run on). */
export type LoadedScenario = { file: string; scenario: Scenario } | { file: string; error: ScenarioFileError };

/** A scenario file that cannot be read or does not follow the format; `details` name every problem. */
export class ScenarioFileError extends Error {
  constructor(
    readonly file: string,
    message: string,
    readonly details: string[] = [],
  ) {
    super(`${file}: ${message}`);
  }
}

export async function loadScenarioFile(file: string): Promise<Extract<LoadedScenario, { scenario: Scenario }>> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new ScenarioFileError(
      file,
      `cannot read it (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ScenarioFileError(file, `is not JSON: ${(error as Error).message}`);
  }
  const result = scenarioSchema.safeParse(json);
  if (!result.success) {
    const details = issuesToDetails(result.error, json);
    throw new ScenarioFileError(file, `is not a valid scenario: ${details.join('; ')}`, details);
  }
  return { file, scenario: result.data };
}

type StepStatus = 'passed' | 'failed' | 'skipped';

export interface StepResult {
  index: number;
  /** What the step does, as written (references not yet resolved), e.g. `expectVaPayment ${payment.id}`. */
  label: string;
  /** The step's kind; `reset` is the reset of the account that `apiKey` asks for before the first step; `load` reads the file. */
  do: ScenarioStep['do'] | 'reset' | 'load';
  kind: 'action' | 'expectation';
  status: StepStatus;
  /** Why it failed: one line each. */
  failures: string[];
  durationMs: number;
}

export interface ScenarioResult {
  file: string;
  name: string;
  apiKey: string;
  status: 'passed' | 'failed';
  steps: StepResult[];
  durationMs: number;
}

export interface RunResult {
  passed: number;
  failed: number;
  url: string;
  scenarios: ScenarioResult[];
  durationMs: number;
}

export type RunEvent =
  | { type: 'scenario:start'; file: string; name: string; apiKey: string }
  | { type: 'step'; file: string; step: StepResult }
  | { type: 'scenario:end'; result: ScenarioResult };

export interface RunOptions {
  /** A running sandbox; without it an embedded one starts on a free loopback port, in memory, and stops after. */
  url?: string;
  /** Run every scenario in this account, reset first, instead of a fresh API key each. */
  apiKey?: string;
  /**
   * The address the sandbox reaches the built-in receiver at (`${receiver.url}`), when it is not the receiver's
   * loopback address: the receiver then listens on that URL's port, on every interface unless the host is loopback.
   */
  callbackUrl?: string;
  onEvent?: (event: RunEvent) => void;
  /** How long to wait for due callbacks to finish before a clock move or an expectation. */
  settleTimeoutMs?: number;
}

/** Loopback host names of a URL, and the address the receiver binds for each. */
const LOOPBACK: Record<string, string> = { '127.0.0.1': '127.0.0.1', localhost: '127.0.0.1', '[::1]': '::1' };

export async function runScenarios(scenarios: LoadedScenario[], options: RunOptions = {}): Promise<RunResult> {
  const started = performance.now();
  const embedded = options.url === undefined ? await startEmbedded() : null;
  const callbackUrl = options.callbackUrl === undefined ? undefined : new URL(options.callbackUrl);
  let receiver: Receiver | null = null;
  try {
    receiver = await startReceiver(
      callbackUrl
        ? {
            port: Number(callbackUrl.port || (callbackUrl.protocol === 'https:' ? 443 : 80)),
            host: LOOPBACK[callbackUrl.hostname] ?? '0.0.0.0',
          }
        : {},
    );
    const url = options.url ?? embedded!.url;
    const receiverBase = (callbackUrl?.href ?? receiver.url).replace(/\/+$/, '');
    const results: ScenarioResult[] = [];
    for (const [i, loaded] of scenarios.entries()) {
      // Each scenario's callbacks go under a path of its own, so a late retry of one never lands in another.
      const base = `${receiverBase}/s${i + 1}`;
      results.push(
        await runOne(loaded, {
          url,
          receiver,
          receiverBase: base,
          prefix: new URL(base).pathname,
          settleTimeoutMs: options.settleTimeoutMs,
          options,
        }),
      );
    }
    const failed = results.filter((r) => r.status === 'failed').length;
    return {
      passed: results.length - failed,
      failed,
      url,
      scenarios: results,
      durationMs: Math.round(performance.now() - started),
    };
  } finally {
    await receiver?.close();
    await embedded?.close();
  }
}

async function startEmbedded() {
  // Loaded only when needed: a run against --url never pays for the server's modules.
  const { startServer } = await import('../http/server.js');
  return startServer({ port: 0, host: '127.0.0.1', memory: true });
}

interface Context extends StepContext {
  url: string;
  options: RunOptions;
}

async function runOne(loaded: LoadedScenario, ctx: Context): Promise<ScenarioResult> {
  const started = performance.now();
  const emit = ctx.options.onEvent ?? (() => {});
  if ('error' in loaded) return reportUnreadable(loaded, emit);
  const { file, scenario } = loaded;
  const apiKey = ctx.options.apiKey ?? freshApiKey(file);
  const client = sandboxClient(ctx.url, apiKey);
  emit({ type: 'scenario:start', file, name: scenario.name, apiKey });
  const scope: Scope = { [RECEIVER]: { url: ctx.receiverBase } };
  const steps: StepResult[] = [];
  let stopped = false;
  try {
    if (ctx.options.apiKey !== undefined) await client.reset();
  } catch (error) {
    stopped = true;
    const reset = result(-1, 'reset the account', 'reset', 'action', 'failed', [describeError(error)], 0);
    steps.push(reset);
    emit({ type: 'step', file, step: reset });
  }
  for (const [index, step] of scenario.steps.entries()) {
    const kind = isExpectation(step) ? 'expectation' : 'action';
    const label = labelOf(step);
    if (stopped) {
      const skipped = result(index, label, step.do, kind, 'skipped', [], 0);
      steps.push(skipped);
      emit({ type: 'step', file, step: skipped });
      continue;
    }
    const stepStarted = performance.now();
    let failures: string[];
    try {
      failures = await runStep(step, client, scope, ctx);
    } catch (error) {
      // The step could not run at all: later steps may need its result, so they are skipped.
      failures = [describeError(error)];
      stopped = kind === 'action';
    }
    const done = result(
      index,
      label,
      step.do,
      kind,
      failures.length ? 'failed' : 'passed',
      failures,
      performance.now() - stepStarted,
    );
    steps.push(done);
    emit({ type: 'step', file, step: done });
  }
  const outcome: ScenarioResult = {
    file,
    name: scenario.name,
    apiKey,
    status: steps.some((s) => s.status !== 'passed') ? 'failed' : 'passed',
    steps,
    durationMs: Math.round(performance.now() - started),
  };
  emit({ type: 'scenario:end', result: outcome });
  return outcome;
}

/** Not a scenario: one failed step that says why (every problem), in the report as in the output. */
function reportUnreadable(
  loaded: Extract<LoadedScenario, { error: ScenarioFileError }>,
  emit: (event: RunEvent) => void,
): ScenarioResult {
  const { file } = loaded;
  const name = basename(file);
  const load = result(
    0,
    `load ${file}`,
    'load',
    'action',
    'failed',
    loaded.error.details.length ? loaded.error.details : [loaded.error.message],
    0,
  );
  emit({ type: 'scenario:start', file, name, apiKey: '' });
  emit({ type: 'step', file, step: load });
  const outcome: ScenarioResult = { file, name, apiKey: '', status: 'failed', steps: [load], durationMs: 0 };
  emit({ type: 'scenario:end', result: outcome });
  return outcome;
}

/** A fresh account's API key, named after the scenario file: `sk_scenario_<file name as word characters>_<8 hex>`. */
const freshApiKey = (file: string): string =>
  `sk_scenario_${basename(file)
    .replace(/\.json$/, '')
    .replace(/\W+/g, '_')}_${randomUUID().slice(0, 8)}`;

const result = (
  index: number,
  label: string,
  kind: StepResult['do'],
  type: StepResult['kind'],
  status: StepStatus,
  failures: string[],
  ms: number,
): StepResult => ({ index, label, do: kind, kind: type, status, failures, durationMs: Math.round(ms) });
