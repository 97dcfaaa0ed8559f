import { randomInt } from 'node:crypto';
import {
  type Account,
  type ClientView,
  clients,
  formatCents,
  fromCents,
  MAX_CENTS,
  parse,
  SandboxError,
  type VaPaymentView,
} from '../../core/index.js';
import { type TriggerEvent, type TriggerInput, type TriggerView, triggerSchema } from '../../core/records/index.js';
import type { Runtime } from './runtime.js';

/**
 * Triggers (contract part 9, after `stripe trigger`'s fixtures): each event is a named list of steps, each step an
 * operation a user could call, run through the same code as its route, so the callbacks, the delivery log and the
 * ledger are those of the real path.
 */
type Step =
  /** `POST /api/v1/va-payments`, lock `time`: a CVU of its own, where any total is credited. */
  | { do: 'create'; ttlSeconds?: number }
  /** `POST /api/v1/clients` with `cashinCallbackUrl`. */
  | { do: 'createClient' }
  /** `POST /sandbox/v1/transfers` to the CVU of what the trigger made, of `share` times the amount. */
  | { do: 'pay'; share: number }
  | { do: 'cancel' }
  /** `POST /sandbox/v1/clock/advance` by the payment's `ttlSeconds`, no further: it expires. */
  | { do: 'expire' };

const create: Step = { do: 'create' };

/** Only a `time` lock credits a total other than the amount: so underpaid and overpaid pay half and one and a half. */
const TRIGGERS: Record<TriggerEvent, readonly Step[]> = {
  created: [create],
  cash_in_received: [create, { do: 'pay', share: 1 }],
  succeeded: [create, { do: 'pay', share: 1 }],
  underpaid: [create, { do: 'pay', share: 0.5 }],
  overpaid: [create, { do: 'pay', share: 1.5 }],
  failed: [{ do: 'create', ttlSeconds: 1 }, { do: 'expire' }],
  cancelled: [create, { do: 'cancel' }],
  'client.cashin': [{ do: 'createClient' }, { do: 'pay', share: 1 }],
};

/** What the steps made so far: the payment or client the events are about, and what was done. */
interface Made {
  payment?: VaPaymentView;
  client?: ClientView;
  steps: string[];
}

/** Runs the trigger a request asks for, one step after the other, each committed before the next. */
export async function runTrigger(runtime: Runtime, account: Account, body: unknown): Promise<TriggerView> {
  const input = parse(triggerSchema, body);
  const plan = TRIGGERS[input.event];
  for (const step of plan) if (step.do === 'pay') transferTotal(input, step.share);
  const made: Made = { steps: [] };
  for (const step of plan) {
    await runStep(runtime, account, input, step, made);
    await runtime.commit();
  }
  const source = made.payment?.id ?? made.client!.id;
  const event = account.events.of(source).findLast((raised) => raised.eventType === input.event);
  if (!event) throw new SandboxError('INTERNAL_ERROR', `Trigger ${input.event} raised no ${input.event} event`);
  return {
    event: input.event,
    eventId: event.id,
    ...(made.payment ? { vaPaymentId: made.payment.id } : {}),
    ...(made.client ? { clientId: made.client.id } : {}),
    steps: made.steps,
  };
}

async function runStep(runtime: Runtime, account: Account, input: TriggerInput, step: Step, made: Made): Promise<void> {
  switch (step.do) {
    case 'create':
      return createPayment(account, input, step.ttlSeconds, made);
    case 'createClient':
      return createClient(account, input, made);
    case 'pay':
      return pay(account, transferTotal(input, step.share), made);
    case 'cancel': {
      const payment = account.write(() => account.vaPayments.cancelVaPayment(made.payment!.id));
      made.steps.push(`POST /api/v1/va-payments/${payment.id}/cancel: VA payment ${payment.id} is ${payment.status}`);
      return;
    }
    case 'expire': {
      const seconds = made.payment!.ttlSeconds;
      await runtime.moveClock(account, 'advance', { seconds });
      const payment = account.vaPayments.getVaPayment(made.payment!.id);
      const moved = `POST /sandbox/v1/clock/advance ${seconds} s (the payment's ttlSeconds)`;
      made.steps.push(`${moved}: VA payment ${payment.id} is ${payment.status}`);
      return;
    }
  }
}

/** The transfer a `pay` step makes, in cents: a share below 1 pays less than the amount, above 1 more. */
function transferTotal(input: TriggerInput, share: number): number {
  const total = share < 1 ? Math.floor(input.amount * share) : Math.ceil(input.amount * share);
  if (total < 1 || total > MAX_CENTS) {
    const bound = total < 1 ? 'at least 0.02' : `at most ${formatCents(Math.floor(MAX_CENTS / share))}`;
    const problem = `must be ${bound} to trigger ${input.event}`;
    throw new SandboxError('VALIDATION_ERROR', `Invalid request body: amount ${problem}`, [
      `amount: ${problem} (its transfer pays ${share} times the amount)`,
    ]);
  }
  return total;
}

/**
 * Where the callbacks go: the request's `callbackUrl`; else, while `listen` forwards the account's callbacks, the
 * forwarding URL (an event with no URL is dropped, which forwarding never sends); else none.
 */
function callbackUrlOf(account: Account, input: TriggerInput): string | null {
  return input.callbackUrl ?? account.deliveries.forwarding().url ?? null;
}

function createPayment(account: Account, input: TriggerInput, ttlSeconds: number | undefined, made: Made): void {
  const callbackUrl = callbackUrlOf(account, input);
  const body = {
    paymentHubId: input.paymentHubId,
    currency: 'ARS',
    lockMode: 'time',
    amount: fromCents(input.amount),
    ...(ttlSeconds === undefined ? {} : { ttlSeconds }),
    callbackUrl,
    externalReference: `trigger ${input.event}`,
  };
  made.payment = account.write(() => account.vaPayments.createVaPayment(body));
  const where = callbackUrl ? `callbackUrl ${callbackUrl}` : 'no callbackUrl';
  made.steps.push(
    `POST /api/v1/va-payments: VA payment ${made.payment.id} (lockMode time, amount ${formatCents(input.amount)}, ` +
      `ttlSeconds ${made.payment.ttlSeconds}, ${where}) is ${made.payment.status}, CVU ${made.payment.cvu}`,
  );
}

function createClient(account: Account, input: TriggerInput, made: Made): void {
  const callbackUrl = callbackUrlOf(account, input);
  const hub = account.write(() => account.hubs.hub(String(input.paymentHubId)));
  if (hub.cvuProvisioning !== 'inline') {
    const how = `provisions client CVUs "${hub.cvuProvisioning}"`;
    const why = `Payment hub ${hub.id} ${how}: client.cashin needs one active at once`;
    throw new SandboxError('INVALID_STATE', why, [
      `paymentHubId: set the hub's cvuProvisioning to "inline" (PATCH /sandbox/v1/hubs/${hub.id}) or name another hub`,
    ]);
  }
  const body = {
    paymentHubId: input.paymentHubId,
    name: 'Trigger client',
    taxId: freeCuit(account),
    cashinCallbackUrl: callbackUrl,
  };
  made.client = account.write(() => account.clients.createClient(body));
  const where = callbackUrl ? `cashinCallbackUrl ${callbackUrl}` : 'no cashinCallbackUrl';
  const { id, taxId, cvu } = made.client;
  made.steps.push(`POST /api/v1/clients: client ${id} (taxId ${taxId}, ${where}), CVU ${cvu}`);
}

function pay(account: Account, total: number, made: Made): void {
  const to = made.payment?.cvu ?? made.client!.cvu!;
  const transfer = account.write(() => account.transfers.createTransfer({ to, total: fromCents(total) }));
  const whose = made.payment
    ? `VA payment ${made.payment.id} is ${account.vaPayments.getVaPayment(made.payment.id).status}`
    : `client ${made.client!.id}`;
  made.steps.push(`POST /sandbox/v1/transfers: ${formatCents(total)} to CVU ${to}, ${transfer.outcome}: ${whose}`);
}

/** A CUIT (with its check digit) that no client of the account has, as `--strict-tax-id` wants it. */
function freeCuit(account: Account): string {
  for (;;) {
    const body = `20${String(randomInt(10 ** 8)).padStart(8, '0')}`;
    const cuit = [...'0123456789'].map((digit) => body + digit).find((candidate) => clients.isValidCuit(candidate));
    if (cuit && account.clients.listClients({ taxId: cuit, limit: '1' }).data.length === 0) return cuit;
  }
}
