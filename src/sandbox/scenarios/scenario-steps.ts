import {
  type AllocationBody,
  type CreateClientBody,
  type CreateInvoiceBody,
  type CreateVaPaymentBody,
  type DebitBody,
  type HubPatchBody,
  type LedgerEntryBody,
  SandboxApiError,
  type SandboxClient,
  type TransferBody,
  type TriggerBody,
  type UpdateClientBody,
  type UpdateInvoiceBody,
} from '../../client/api-client.js';
import { mismatches } from '../../core/scenarios/mismatches.js';
import { interpolate, ScenarioReferenceError, type Scope } from '../../core/scenarios/references.js';
import { isExpectation, type ScenarioStep } from '../../core/scenarios/scenario.js';
import type { Receiver } from '../delivery/receiver.js';
import { apiFaultTarget, faultFailures, withIdempotencyKey } from './scenario-faults.js';
import { expectRequest, requestTarget } from './scenario-requests.js';

/** The steps of a scenario file, each run over the sandbox's HTTP API: its label, its request, its expectations. */

/** What a step needs of its scenario's run: the built-in receiver and where this scenario's callbacks arrive. */
export interface StepContext {
  receiver: Receiver;
  /** `${receiver.url}` of this scenario. */
  receiverBase: string;
  /** The path of `receiverBase`: this scenario's callbacks arrive under it. */
  prefix: string;
  /** How long to wait for due callbacks to finish before a clock move or an expectation. */
  settleTimeoutMs: number | undefined;
}

export function labelOf(step: ScenarioStep): string {
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
    case 'trigger':
      return String(step.trigger.event);
    case 'expectRequest':
      return requestTarget(step);
    default:
      return 'id' in step ? String(step.id) : 'clientId' in step ? step.clientId : '';
  }
}

export function describeError(error: unknown): string {
  if (error instanceof SandboxApiError)
    return `${error.message}${error.details.length ? ` (${error.details.join('; ')})` : ''}`;
  if (error instanceof ScenarioReferenceError) return error.message;
  return (error as Error).message;
}

/** Runs one step; resolves with its failures (none: it passed), or throws when it could not run. */
export async function runStep(
  step: ScenarioStep,
  client: SandboxClient,
  scope: Scope,
  ctx: StepContext,
): Promise<string[]> {
  if (isExpectation(step) || step.do === 'advanceClock' || step.do === 'failReceiver') {
    // What is due is sent before time moves, a receiver is armed or anything is read: so each retry counts from
    // the failure before it, and expectations see every callback the steps before them caused.
    await client.deliveries.settle({ timeoutMs: ctx.settleTimeoutMs });
  }
  // `expect` is resolved once the step has answered: it may read the step's own result.
  const s =
    'expect' in step
      ? { ...interpolate({ ...step, expect: undefined }, scope), expect: step.expect }
      : interpolate(step, scope);
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
    case 'expectRequest':
      return expectRequest(s.expectRequest, client);
    default:
      return act(s, client, scope);
  }
}

type Action = Exclude<ScenarioStep, { do: 'failReceiver' | 'apiFault' | `expect${string}` }>;

async function act(step: Action, client: SandboxClient, scope: Scope): Promise<string[]> {
  let data: unknown;
  try {
    data = await call(
      step,
      step.idempotencyKey === undefined ? client : withIdempotencyKey(client, step.idempotencyKey),
    );
  } catch (error) {
    if (step.expectFault) return faultFailures(error);
    if (step.expectError !== undefined && error instanceof SandboxApiError) {
      return error.code === step.expectError ? [] : [`expected error ${step.expectError}, got ${describeError(error)}`];
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
    case 'trigger':
      return client.trigger(step.trigger as TriggerBody);
  }
}

type CallbackStep = Extract<ScenarioStep, { do: 'expectCallbacks' }>;

/** The callbacks one URL of the receiver got, one per event in order of first arrival, against the expected list. */
async function expectCallbacks(
  url: string,
  expected: CallbackStep['callbacks'],
  client: SandboxClient,
  ctx: StepContext,
): Promise<string[]> {
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
    c.headers
      ? {
          ...c,
          headers: Object.fromEntries(Object.entries(c.headers).map(([name, value]) => [name.toLowerCase(), value])),
        }
      : c,
  );
  const problems = mismatches(wanted, actual, 'callbacks');
  if (problems.length && expected.length !== actual.length) {
    problems.push(
      `received: ${actual.map((c) => `${c.eventType} (${c.attempts} attempt${c.attempts === 1 ? '' : 's'})`).join(', ') || 'nothing'}`,
    );
  }
  return problems;
}

async function expectEvents(
  step: Extract<ScenarioStep, { do: 'expectEvents' }>,
  client: SandboxClient,
): Promise<string[]> {
  const events = (await client.events.all())
    .filter((e) => (step.vaPaymentId !== undefined ? e.vaPaymentId === step.vaPaymentId : e.clientId === step.clientId))
    .reverse()
    .map((e) => ({ eventType: e.eventType, url: e.url, delivery: e.deliveries[0]?.status, body: e.body }));
  const problems = mismatches(step.events, events, 'events');
  if (problems.length && step.events.length !== events.length)
    problems.push(`raised: ${events.map((e) => e.eventType).join(', ') || 'nothing'}`);
  return problems;
}
