import type { Account } from '../account/index.js';
import { fromCents, ms } from '../conventions/index.js';
import type { Transfer } from '../records/index.js';
import { clientBody, invoiceBody, paymentBody } from './recorded-requests.js';
import { type Story, storyOf } from './recorded-story.js';
import { RECEIVER, SCENARIO_VERSION } from './scenario.js';

/**
 * An account's story as a scenario file (`GET /sandbox/v1/scenario`, `va-sandbox scenario record`): its hubs, then
 * every create, transfer, cancellation, client, invoice and ledger movement in the order they happened, the clock moved between them as
 * the account lived it, the answers its receivers gave before each event's callback got through (so retries happen
 * again), and expectations of the outcome. Run on a fresh account it plays the same story with new ids and CVUs,
 * named (`payment_1`, `client_1`, `hub_1`) and referred to. Callbacks go to the runner's receiver, never to the URLs
 * the account had (a path each: `/payment_1/callback`, `/payment_1/success`, `/client_1/cashin`). What it cannot replay: a client's
 * earlier values (a client is created as it is now), a hub changed midway (set as it is now, first), a receiver that
 * timed out or refused (it answers 500 instead), a redelivery, forwarding and faults.
 */
export function recordScenario(account: Account, name: string): Record<string, unknown> {
  const story = storyOf(account);
  clientSteps(story);
  invoiceSteps(story);
  paymentSteps(story);
  ledgerSteps(story, transferSteps(story));
  return {
    version: SCENARIO_VERSION,
    name,
    description: `Recorded from an account at ${account.now()}: its story replayed on a fresh account, and what came of it.`,
    steps: [...hubSteps(story), ...clocked(story.timeline, account.nowMs()), ...expectations(account, story)],
  };
}

const ref = (step: string | undefined, field: string) => (step === undefined ? undefined : `\${${step}.${field}}`);
const receiver = (path: string) => `\${${RECEIVER}.url}/${path}`;

function clientSteps(story: Story): void {
  for (const client of story.clients) {
    const own = story.clientName.get(client.id)!;
    story.at(client.createdAt, ...story.failing(client.id, client.createdAt), {
      name: own,
      do: 'createClient',
      body: clientBody(client, receiver(`${own}/cashin`)),
    });
    // A client keeps only its last CVU status; the transfers to it tell when it was disabled (each returned one says
    // so) and active again (a credited one after those): the switches are made just before them.
    let disabled = false;
    const cvuStatus = (time: string, next: boolean) => {
      if (next !== disabled)
        story.at(time, { do: 'setCvuStatus', clientId: ref(own, 'id'), cvuStatus: next ? 'disabled' : 'active' });
      disabled = next;
    };
    for (const transfer of client.cvu === null ? [] : (story.transfersTo.get(client.cvu) ?? [])) {
      if (transfer.outcome === 'credited') cvuStatus(transfer.createdAt, false);
      else if (transfer.reason?.endsWith(' is disabled')) cvuStatus(transfer.createdAt, true);
    }
    if (client.cvuStatus === 'disabled' || client.cvuStatus === 'active')
      cvuStatus(client.updatedAt, client.cvuStatus === 'disabled');
  }
}

function invoiceSteps(story: Story): void {
  for (const invoice of story.invoices) {
    const clientId = ref(story.clientName.get(invoice.clientId), 'id');
    story.at(invoice.createdAt, {
      name: story.invoiceName.get(invoice.id),
      do: 'createInvoice',
      clientId,
      body: invoiceBody(invoice),
    });
    if (invoice.paymentStatus === 'cancelled') {
      story.at(invoice.updatedAt, {
        do: 'updateInvoice',
        clientId,
        id: ref(story.invoiceName.get(invoice.id), 'id'),
        body: { paymentStatus: 'cancelled' },
      });
    }
  }
}

function paymentSteps(story: Story): void {
  for (const payment of story.payments) {
    const own = story.paymentName.get(payment.id)!;
    const body = paymentBody(payment, receiver(own), ref(story.clientName.get(payment.clientId ?? ''), 'id'));
    story.at(payment.createdAt, ...story.failing(payment.id, payment.createdAt), {
      name: own,
      do: 'createVaPayment',
      body,
    });
    if (payment.cancelledAt !== null)
      story.at(payment.cancelledAt, ...story.failing(payment.id, payment.cancelledAt), {
        do: 'cancelVaPayment',
        id: ref(own, 'id'),
      });
    // An event no request raised (an expiry): its receiver's answers are set a second before its instant.
    const raisedBy = [
      payment.createdAt,
      payment.cancelledAt,
      ...(story.creditedTimes.get(payment.id) ?? []).map((t) => t.createdAt),
    ];
    for (const event of (story.eventsOf.get(payment.id) ?? []).filter((e) => story.failures.has(e.id))) {
      if (!raisedBy.includes(event.createdAt))
        story.timeline.push({ at: ms(event.createdAt) - 1000, steps: [story.failures.get(event.id)!] });
    }
  }
}

/** The transfers' steps; returns the replay's operation id of each (`${transfer_n.operationId}`), by the original one. */
function transferSteps(story: Story): Map<string, string> {
  const operation = new Map<string, string>();
  for (const [i, transfer] of story.transfers.entries()) {
    const to = transferTarget(story, transfer);
    if (to === undefined) continue;
    const own = `transfer_${i + 1}`;
    operation.set(transfer.operationId, ref(own, 'operationId')!);
    const body = {
      to,
      total: fromCents(transfer.total),
      ...(transfer.taxes ? { taxes: fromCents(transfer.taxes) } : {}),
      ...(transfer.from ? { from: transfer.from } : {}),
    };
    story.at(transfer.createdAt, ...(transfer.target ? story.failing(transfer.target.id, transfer.createdAt) : []), {
      name: own,
      do: 'transfer',
      body,
    });
  }
  return operation;
}

/** What a transfer was sent to, in the replay's words: the CVU of the hub, payment or client that held it then. */
function transferTarget(story: Story, transfer: Transfer): string | undefined {
  const hub = Object.values(story.state.hubs).find((h) => h.collectionCvu === transfer.cvu);
  if (hub) return ref(`hub_${hub.id}`, 'collectionCvu');
  const client = story.clients.find((c) => c.cvu === transfer.cvu);
  if (client) return ref(story.clientName.get(client.id), 'cvu');
  const holder = (story.paymentsAt.get(transfer.cvu) ?? []).filter((p) => p.createdAt <= transfer.createdAt).at(-1);
  return holder && ref(story.paymentName.get(holder.id), 'cvu');
}

/** The ledger's movements the sandbox makes (a cash-in comes of its transfer): a reversal names the replay's operation. */
function ledgerSteps(story: Story, operation: Map<string, string>): void {
  for (const entry of Object.values(story.state.entries)) {
    const clientId = ref(story.clientName.get(entry.clientId), 'id');
    const description = entry.description ? { description: entry.description } : {};
    if (entry.entryType === 'debit')
      story.at(entry.createdAt, {
        do: 'createDebit',
        clientId,
        body: { amount: fromCents(-entry.amount), ...description },
      });
    else if (entry.entryType === 'invoice_allocation') {
      story.at(entry.createdAt, {
        do: 'allocate',
        clientId,
        invoiceId: ref(story.invoiceName.get(entry.invoiceId ?? ''), 'id'),
        body: { amount: fromCents(-entry.amount) },
      });
    } else if (entry.entryType !== 'cash_in') {
      const operationId =
        entry.operationId === null ? {} : { operationId: operation.get(entry.operationId) ?? entry.operationId };
      const amount = entry.entryType === 'reversal' ? {} : { amount: fromCents(entry.amount) };
      story.at(entry.createdAt, {
        do: 'ledgerEntry',
        clientId,
        body: { entryType: entry.entryType, ...amount, ...description, ...operationId },
      });
    }
  }
}

const hubSteps = (story: Story) =>
  Object.values(story.state.hubs).map((hub) => ({
    name: `hub_${hub.id}`,
    do: 'updateHub',
    id: hub.id,
    body: {
      brand: hub.brand,
      dedicated_client_cvus_enabled: hub.dedicated_client_cvus_enabled,
      cvuProvisioning: hub.cvuProvisioning,
    },
  }));

/** The timeline's steps in order, the clock moved between them in whole seconds since the first, and on to `now`. */
function clocked(timeline: Story['timeline'], now: number): Record<string, unknown>[] {
  timeline.sort((a, b) => a.at - b.at); // stable: what happened at one instant keeps its order
  const start = timeline[0]?.at ?? now;
  let moved = 0;
  const advanceTo = (time: number): Record<string, unknown>[] => {
    const seconds = Math.floor((time - start) / 1000) - moved;
    if (seconds <= 0) return [];
    moved += seconds;
    return [{ do: 'advanceClock', seconds }];
  };
  const story = timeline.flatMap(({ at: time, steps }) => [...advanceTo(time), ...steps]);
  return [...story, ...advanceTo(now)];
}

function expectations(account: Account, story: Story): Record<string, unknown>[] {
  const { payments, clients, paymentName, clientName } = story;
  return [
    ...payments.map((payment) => {
      const view = account.vaPayments.getVaPayment(payment.id);
      return {
        do: 'expectVaPayment',
        id: ref(paymentName.get(payment.id), 'id'),
        match: {
          status: view.status,
          amount: view.amount,
          totalReceived: view.totalReceived,
          receivedAmount: view.receivedAmount,
          remainingAmount: view.remainingAmount,
        },
      };
    }),
    ...clients.map((client) => {
      const { totalCashIn, totalCashOut, totalInvoiced, balance } = account.clients.clientBalance(client.id);
      return {
        do: 'expectBalance',
        clientId: ref(clientName.get(client.id), 'id'),
        match: { totalCashIn, totalCashOut, totalInvoiced, balance },
      };
    }),
    ...[
      ...payments.map((p) => ['vaPaymentId', p.id, paymentName] as const),
      ...clients.map((c) => ['clientId', c.id, clientName] as const),
    ].flatMap(([field, id, names]) => {
      const own = story.eventsOf.get(id) ?? [];
      if (own.length === 0) return [];
      return [
        { do: 'expectEvents', [field]: ref(names.get(id), 'id'), events: own.map((e) => ({ eventType: e.eventType })) },
      ];
    }),
  ];
}
