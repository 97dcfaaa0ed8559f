import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { issuesToDetails } from '../core/schemas.js';
import {
  interpolate,
  isExpectation,
  mismatches,
  RECEIVER,
  scenarioSchema,
  ScenarioReferenceError,
  type Scenario,
  type ScenarioStep,
  type Scope,
} from '../core/scenario.js';
import {
  SandboxApiError,
  sandboxClient,
  type CreateClientBody,
  type CreateInvoiceBody,
  type CreateVaPaymentBody,
  type DebitBody,
  type LedgerEntryBody,
  type AllocationBody,
  type UpdateInvoiceBody,
  type HubPatchBody,
  type SandboxClient,
  type TransferBody,
  type UpdateClientBody,
} from '../client/api-client.js';
import { startReceiver, type Receiver } from './receiver.js';
import { apiFaultTarget, faultFailures, withIdempotencyKey } from './scenario-faults.js';

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
    throw new ScenarioFileError(file, `cannot read it (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ScenarioFileError(file, `is not JSON: ${(error as Error).message}`);
  }
  const result = scenarioSchema.safeParse(json);
  if (!result.success) {
    const details = issuesToDetails(result.error);
    throw new ScenarioFileError(file, `is not a valid scenario: ${details.join('; ')}`, details);
  }
  return { file, scenario: result.data };
}

export type StepStatus = 'passed' | 'failed' | 'skipped';

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
        ? { port: Number(callbackUrl.port || (callbackUrl.protocol === 'https:' ? 443 : 80)), host: LOOPBACK[callbackUrl.hostname] ?? '0.0.0.0' }
        : {},
    );
    const url = options.url ?? embedded!.url;
    const receiverBase = (callbackUrl?.href ?? receiver.url).replace(/\/+$/, '');
    const results: ScenarioResult[] = [];
    for (const [i, loaded] of scenarios.entries()) {
      // Each scenario's callbacks go under a path of its own, so a late retry of one never lands in another.
      const base = `${receiverBase}/s${i + 1}`;
      results.push(await runOne(loaded, { url, receiver, receiverBase: base, prefix: new URL(base).pathname, options }));
    }
    const failed = results.filter((r) => r.status === 'failed').length;
    return { passed: results.length - failed, failed, url, scenarios: results, durationMs: Math.round(performance.now() - started) };
  } finally {
    await receiver?.close();
    await embedded?.close();
  }
}

async function startEmbedded() {
  // Loaded only when needed: a run against --url never pays for the server's modules.
  const { startServer } = await import('./server.js');
  return startServer({ port: 0, host: '127.0.0.1', memory: true });
}

interface Context {
  url: string;
  receiver: Receiver;
  /** `${receiver.url}` of this scenario. */
  receiverBase: string;
  /** The path of `receiverBase`: this scenario's callbacks arrive under it. */
  prefix: string;
  options: RunOptions;
}

async function runOne(loaded: LoadedScenario, ctx: Context): Promise<ScenarioResult> {
  const started = performance.now();
  const emit = ctx.options.onEvent ?? (() => {});
  const { file } = loaded;
  if ('error' in loaded) {
    // Not a scenario: one failed step that says why (every problem), in the report as in the output.
    const name = basename(file);
    const load = result(0, `load ${file}`, 'load', 'action', 'failed', loaded.error.details.length ? loaded.error.details : [loaded.error.message], 0);
    emit({ type: 'scenario:start', file, name, apiKey: '' });
    emit({ type: 'step', file, step: load });
    const outcome: ScenarioResult = { file, name, apiKey: '', status: 'failed', steps: [load], durationMs: 0 };
    emit({ type: 'scenario:end', result: outcome });
    return outcome;
  }
  const { scenario } = loaded;
  const apiKey = ctx.options.apiKey ?? `sk_scenario_${basename(file).replace(/\.json$/, '').replace(/\W+/g, '_')}_${randomUUID().slice(0, 8)}`;
  const client = sandboxClient(ctx.url, apiKey);
  emit({ type: 'scenario:start', file, name: scenario.name, apiKey });
  const scope: Scope = { [RECEIVER]: { url: ctx.receiverBase } };
  const steps: StepResult[] = [];
  let stopped = false;
  try {
    if (ctx.options.apiKey !== undefined) await client.reset();
  } catch (error) {
    stopped = true;
    const reset = result(-1, 'reset the account', 'reset', 'action', 'failed', [describe(error)], 0);
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
      failures = [describe(error)];
      stopped = kind === 'action';
    }
    const done = result(index, label, step.do, kind, failures.length ? 'failed' : 'passed', failures, performance.now() - stepStarted);
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

const result = (
  index: number,
  label: string,
  kind: StepResult['do'],
  type: StepResult['kind'],
  status: StepStatus,
  failures: string[],
  ms: number,
): StepResult => ({ index, label, do: kind, kind: type, status, failures, durationMs: Math.round(ms) });

function labelOf(step: ScenarioStep): string {
  const name = 'name' in step && step.name ? `${step.name}: ` : '';
  return `${name}${step.do} ${targetOf(step)}`.trimEnd();
}

/** What a step acts on or reads, as written. */
function targetOf(step: ScenarioStep): string {
  switch (step.do) {
    case 'advanceClock':
      return `${step.seconds}s`;
    case 'failReceiver':
      return `${step.times}x with ${step.status}${step.path ? ` on ${step.path}` : ''}`;
    case 'transfer':
      return `${String(step.body.total)} to ${String(step.body.to)}`;
    case 'expectEvents':
      return step.vaPaymentId ?? step.clientId ?? '';
    case 'expectCallbacks':
      return step.url;
    case 'apiFault':
      return apiFaultTarget(step);
    default:
      return 'id' in step ? String(step.id) : 'clientId' in step ? step.clientId : '';
  }
}

function describe(error: unknown): string {
  if (error instanceof SandboxApiError) return `${error.message}${error.details.length ? ` (${error.details.join('; ')})` : ''}`;
  if (error instanceof ScenarioReferenceError) return error.message;
  return (error as Error).message;
}

/** Runs one step; resolves with its failures (none: it passed), or throws when it could not run. */
async function runStep(step: ScenarioStep, client: SandboxClient, scope: Scope, ctx: Context): Promise<string[]> {
  if (isExpectation(step) || step.do === 'advanceClock' || step.do === 'failReceiver') {
    // What is due is sent before time moves, a receiver is armed or anything is read: so each retry counts from
    // the failure before it, and expectations see every callback the steps before them caused.
    await client.deliveries.settle({ timeoutMs: ctx.options.settleTimeoutMs });
  }
  // `expect` is resolved once the step has answered: it may read the step's own result.
  const s = 'expect' in step ? { ...interpolate({ ...step, expect: undefined }, scope), expect: step.expect } : interpolate(step, scope);
  switch (s.do) {
    case 'failReceiver':
      ctx.receiver.failNext(s.times, { status: s.status, path: ctx.prefix + (s.path ?? '') });
      return [];
    case 'apiFault':
      await client.apiFaults.add(s.apiFault);
      return [];
    case 'expectVaPayment':
      return mismatches(s.match, await client.vaPayments.get(s.id));
    case 'expectClient':
      return mismatches(s.match, await client.clients.get(s.id));
    case 'expectBalance':
      return mismatches(s.match, await client.clients.balance(s.clientId));
    case 'expectCallbacks':
      return expectCallbacks(s.url, s.callbacks, client, ctx);
    case 'expectEvents':
      return expectEvents(s, client);
    default:
      return act(s, client, scope);
  }
}

type Action = Exclude<ScenarioStep, { do: 'failReceiver' | 'apiFault' | `expect${string}` }>;

async function act(step: Action, client: SandboxClient, scope: Scope): Promise<string[]> {
  let data: unknown;
  try {
    data = await call(step, step.idempotencyKey === undefined ? client : withIdempotencyKey(client, step.idempotencyKey));
  } catch (error) {
    if (step.expectFault) return faultFailures(error);
    if (step.expectError !== undefined && error instanceof SandboxApiError) {
      return error.code === step.expectError ? [] : [`expected error ${step.expectError}, got ${describe(error)}`];
    }
    throw error;
  }
  if (step.expectError !== undefined) return [`expected error ${step.expectError}, but the step succeeded`];
  if (step.expectFault) return ['expected an API fault, but the step succeeded'];
  if (step.name !== undefined) scope[step.name] = data;
  // Callbacks the step caused are sent before the next step, so each URL sees them in the order the steps ran.
  await client.deliveries.settle();
  return step.expect === undefined ? [] : mismatches(interpolate(step.expect, scope), data);
}

/** The step's request. Bodies go as the file wrote them: the sandbox validates them, and a bad one fails the step. */
function call(step: Action, client: SandboxClient): Promise<unknown> {
  switch (step.do) {
    case 'createVaPayment':
      return client.vaPayments.create(step.body as CreateVaPaymentBody);
    case 'getVaPayment':
      return client.vaPayments.get(step.id);
    case 'cancelVaPayment':
      return client.vaPayments.cancel(step.id);
    case 'createClient':
      return client.clients.create(step.body as CreateClientBody);
    case 'getClient':
      return client.clients.get(step.id);
    case 'updateClient':
      return client.clients.update(step.id, step.body as UpdateClientBody);
    case 'setCvuStatus':
      return client.clients.setCvuStatus(step.clientId, { cvuStatus: step.cvuStatus });
    case 'createInvoice':
      return client.clients.createInvoice(step.clientId, step.body as CreateInvoiceBody);
    case 'updateInvoice':
      return client.clients.updateInvoice(step.clientId, step.id, step.body as UpdateInvoiceBody);
    case 'allocate':
      return client.clients.allocate(step.clientId, step.invoiceId, step.body as AllocationBody);
    case 'createDebit':
      return client.clients.createDebit(step.clientId, step.body as DebitBody);
    case 'ledgerEntry':
      return client.clients.createLedgerEntry(step.clientId, step.body as LedgerEntryBody);
    case 'transfer':
      return client.transfers.create(step.body as TransferBody);
    case 'advanceClock':
      return client.clock.advance(step.seconds);
    case 'getHub':
      return client.hubs.get(step.id);
    case 'updateHub':
      return client.hubs.update(step.id, step.body as HubPatchBody);
  }
}

type CallbackStep = Extract<ScenarioStep, { do: 'expectCallbacks' }>;

/** The callbacks one URL of the receiver got, one per event in order of first arrival, against the expected list. */
async function expectCallbacks(url: string, expected: CallbackStep['callbacks'], client: SandboxClient, ctx: Context): Promise<string[]> {
  const rest = url.slice(ctx.receiverBase.length);
  if (!url.startsWith(ctx.receiverBase) || !/^([/?]|$)/.test(rest)) {
    return [`expectCallbacks reads the runner's receiver: url must start with \${receiver.url}, got ${url}`];
  }
  const target = new URL(url);
  const path = target.pathname + target.search;
  const requests = ctx.receiver.received.filter((r) => r.path === path);
  const byEvent = new Map<string, typeof requests>();
  for (const request of requests) {
    const eventId = request.headers['x-service-event-id'] ?? String(request.body?.eventId);
    byEvent.set(eventId, [...(byEvent.get(eventId) ?? []), request]);
  }
  const needsLog = expected.some((c) => c.delivery !== undefined);
  const log = needsLog ? await client.deliveries.all() : [];
  const actual = [...byEvent].map(([eventId, attempts]) => ({
    eventType: attempts[0]!.body?.eventType,
    attempts: attempts.length,
    delivery: log.find((d) => d.eventId === eventId && d.url === url && d.redeliveryOf === null)?.status,
    body: attempts[0]!.body,
    headers: attempts[0]!.headers,
  }));
  const wanted = expected.map((c) =>
    c.headers ? { ...c, headers: Object.fromEntries(Object.entries(c.headers).map(([name, value]) => [name.toLowerCase(), value])) } : c,
  );
  const problems = mismatches(wanted, actual, 'callbacks');
  if (problems.length && expected.length !== actual.length) {
    problems.push(`received: ${actual.map((c) => `${c.eventType} (${c.attempts} attempt${c.attempts === 1 ? '' : 's'})`).join(', ') || 'nothing'}`);
  }
  return problems;
}

async function expectEvents(step: Extract<ScenarioStep, { do: 'expectEvents' }>, client: SandboxClient): Promise<string[]> {
  const events = (await client.events.all())
    .filter((e) => (step.vaPaymentId !== undefined ? e.vaPaymentId === step.vaPaymentId : e.clientId === step.clientId))
    .reverse()
    .map((e) => ({ eventType: e.eventType, url: e.url, delivery: e.deliveries[0]?.status, body: e.body }));
  const problems = mismatches(step.events, events, 'events');
  if (problems.length && step.events.length !== events.length) problems.push(`raised: ${events.map((e) => e.eventType).join(', ') || 'nothing'}`);
  return problems;
}
