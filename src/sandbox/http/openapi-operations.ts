import type { z } from 'zod';
import { accountExportSchema, importQuery } from '../../core/account-export/account-export.js';
import {
  apiFaultRuleSchema,
  apiFaultRuleViewSchema,
  apiFaultsClearedSchema,
} from '../../core/api-faults/api-faults.js';
import { faultsSchema, forwardingSchema, redeliverSchema } from '../../core/callbacks/delivery-settings.js';
import { triggerSchema, triggerViewSchema } from '../../core/records/index.js';
import {
  listClientsQuery,
  listDeliveriesQuery,
  listQuery,
  listTransactionsQuery,
  listVaPaymentsQuery,
} from '../../core/records/list-queries.js';
import { journalItemSchema, listRequestsQuery, requestsClearedSchema } from '../../core/records/request-journal.js';
import {
  allocationSchema,
  clientCvuSchema,
  clockAdvanceSchema,
  clockSetSchema,
  createClientSchema,
  createInvoiceSchema,
  createVaPaymentSchema,
  debitSchema,
  hubPatchSchema,
  ledgerEntrySchema,
  transferSchema,
  updateClientSchema,
  updateInvoiceSchema,
} from '../../core/records/schemas.js';
import {
  balanceViewSchema,
  clientViewSchema,
  clockViewSchema,
  deliveryDetailSchema,
  deliveryViewSchema,
  entryViewSchema,
  eventViewSchema,
  forwardingViewSchema,
  healthSchema,
  hubViewSchema,
  importResultSchema,
  invoiceViewSchema,
  releasedSchema,
  resetSchema,
  transactionsViewSchema,
  transferViewSchema,
  vaPaymentObjectSchema,
} from '../../core/records/views.js';
import { apiFaultKinds } from '../../core/records/words.js';
import { scenarioSchema } from '../../core/scenarios/scenario.js';
import { progressViewSchema } from '../runtime/progress.js';

/** Every endpoint of the API and the sandbox (`openapi.ts` makes the document of them): its schemas, answers and errors. */
export interface Operation {
  method: 'get' | 'post' | 'patch' | 'put' | 'delete';
  /** OpenAPI style: `{id}` for path parameters. */
  path: string;
  id: string;
  summary: string;
  tag: string;
  body?: z.ZodType;
  /** The body may be left out. */
  optionalBody?: true;
  query?: z.ZodObject;
  /** What the success answer's `data` holds (a list's item); the whole body for `raw-json`. */
  data?: z.ZodType;
  /** The envelope adds `message` beside `data` (cancel). */
  message?: true;
  /** The envelope may add `unreadable` beside `data`: the records of a damaged database an export left out. */
  unreadable?: true;
  status?: 200 | 201;
  /** Statuses beyond those every operation of its kind can answer. */
  errors?: number[];
  /** The success answer is not the JSON envelope. */
  produces?: 'text/event-stream' | 'raw-json';
  /** A list: `data` is the page's items and `pagination` sits beside it. */
  list?: true;
  public?: true;
}

const PAYMENTS = 'VA payments';
const CLIENTS = 'Clients';
const SANDBOX = 'Sandbox';
const DELIVERIES = 'Callback deliveries';
const SERVICE = 'Service';
/** The document's tags, in its order. */
export const TAGS = [PAYMENTS, CLIENTS, SANDBOX, DELIVERIES, SERVICE];

export const OPERATIONS: Operation[] = [
  {
    method: 'get',
    path: '/health',
    id: 'health',
    summary: 'Liveness: `{status, version, keepDays}`',
    tag: SERVICE,
    produces: 'raw-json',
    public: true,
    data: healthSchema,
  },
  {
    method: 'get',
    path: '/openapi.json',
    id: 'openapi',
    summary: 'This document',
    tag: SERVICE,
    produces: 'raw-json',
    public: true,
  },
  {
    method: 'get',
    path: '/scenario.schema.json',
    id: 'scenarioSchema',
    summary: 'The scenario file format as a JSON Schema (draft 2020-12)',
    tag: SERVICE,
    produces: 'raw-json',
    public: true,
  },

  {
    method: 'post',
    path: '/api/v1/va-payments',
    id: 'createVaPayment',
    summary: 'Create a VA payment',
    tag: PAYMENTS,
    body: createVaPaymentSchema,
    status: 201,
    errors: [404, 409, 422],
    data: vaPaymentObjectSchema,
  },
  {
    method: 'get',
    path: '/api/v1/va-payments',
    id: 'listVaPayments',
    summary: 'List VA payments, newest first',
    tag: PAYMENTS,
    query: listVaPaymentsQuery,
    list: true,
    data: vaPaymentObjectSchema,
  },
  {
    method: 'get',
    path: '/api/v1/va-payments/{id}',
    id: 'getVaPayment',
    summary: 'One VA payment, with its instructions, callback delivery summary and cash-ins',
    tag: PAYMENTS,
    data: vaPaymentObjectSchema,
  },
  {
    method: 'post',
    path: '/api/v1/va-payments/{id}/cancel',
    id: 'cancelVaPayment',
    summary: 'Cancel a `waiting` or `underpaid` VA payment (the answer adds `message`)',
    tag: PAYMENTS,
    errors: [409],
    data: vaPaymentObjectSchema,
    message: true,
  },

  {
    method: 'post',
    path: '/api/v1/clients',
    id: 'createClient',
    summary: 'Create a client with its dedicated CVU and alias',
    tag: CLIENTS,
    body: createClientSchema,
    status: 201,
    errors: [404, 409, 422],
    data: clientViewSchema,
  },
  {
    method: 'get',
    path: '/api/v1/clients',
    id: 'listClients',
    summary: 'List clients, newest first',
    tag: CLIENTS,
    query: listClientsQuery,
    list: true,
    data: clientViewSchema,
  },
  {
    method: 'get',
    path: '/api/v1/clients/{id}',
    id: 'getClient',
    summary: 'One client',
    tag: CLIENTS,
    data: clientViewSchema,
  },
  {
    method: 'patch',
    path: '/api/v1/clients/{id}',
    id: 'updateClient',
    summary: 'Change a client (`cashinCallbackUrl: null` removes the callback)',
    tag: CLIENTS,
    body: updateClientSchema,
    errors: [409],
    data: clientViewSchema,
  },
  {
    method: 'get',
    path: '/api/v1/clients/{id}/balance',
    id: 'getClientBalance',
    summary: 'The balance summary: totalCashIn - totalCashOut - totalInvoiced',
    tag: CLIENTS,
    data: balanceViewSchema,
  },
  {
    method: 'get',
    path: '/api/v1/clients/{id}/transactions',
    id: 'listClientTransactions',
    summary: "The client's ledger: unlike the other lists, `data.transactions` and `data.pagination` (the real shape)",
    tag: CLIENTS,
    query: listTransactionsQuery,
    data: transactionsViewSchema,
  },
  {
    method: 'post',
    path: '/api/v1/clients/{id}/invoices',
    id: 'createInvoice',
    summary:
      'Create an invoice of the client: `pending`, buyer fields from the client; the amount as `totalAmount` or `total_amount`',
    tag: CLIENTS,
    body: createInvoiceSchema,
    status: 201,
    errors: [422],
    data: invoiceViewSchema,
  },
  {
    method: 'get',
    path: '/api/v1/clients/{id}/invoices',
    id: 'listInvoices',
    summary: "The client's invoices, newest first",
    tag: CLIENTS,
    query: listQuery,
    list: true,
    data: invoiceViewSchema,
  },
  {
    method: 'get',
    path: '/api/v1/clients/{id}/invoices/{invoiceId}',
    id: 'getInvoice',
    summary: 'One invoice of the client',
    tag: CLIENTS,
    data: invoiceViewSchema,
  },
  {
    method: 'patch',
    path: '/api/v1/clients/{id}/invoices/{invoiceId}',
    id: 'updateInvoice',
    summary: 'Change an invoice; `paymentStatus: "cancelled"` cancels it (409 once cancelled)',
    tag: CLIENTS,
    body: updateInvoiceSchema,
    errors: [409, 422],
    data: invoiceViewSchema,
  },

  {
    method: 'post',
    path: '/sandbox/v1/transfers',
    id: 'createTransfer',
    summary: 'Simulate a bank transfer to a CVU or alias',
    tag: SANDBOX,
    body: transferSchema,
    status: 201,
    errors: [404],
    data: transferViewSchema,
  },
  {
    method: 'post',
    path: '/sandbox/v1/triggers',
    id: 'trigger',
    summary:
      "Make one event (`created`, `cash_in_received`, `succeeded`, `underpaid`, `overpaid`, `failed`, `cancelled`, `client.cashin`) through the operations a user would call: a payment or client, a transfer, a cancel or the payment's expiry; `steps` says what was done",
    tag: SANDBOX,
    body: triggerSchema,
    status: 201,
    errors: [404, 409],
    data: triggerViewSchema,
  },
  {
    method: 'get',
    path: '/sandbox/v1/transfers',
    id: 'listTransfers',
    summary: 'Transfers, newest first',
    tag: SANDBOX,
    query: listQuery,
    list: true,
    data: transferViewSchema,
  },
  {
    method: 'get',
    path: '/sandbox/v1/events',
    id: 'listEvents',
    summary: 'Every event raised, with its routing and deliveries, newest first',
    tag: SANDBOX,
    query: listQuery,
    list: true,
    data: eventViewSchema,
  },
  {
    method: 'get',
    path: '/sandbox/v1/clock',
    id: 'getClock',
    summary: "The account's sandbox clock",
    tag: SANDBOX,
    data: clockViewSchema,
  },
  {
    method: 'post',
    path: '/sandbox/v1/clock/advance',
    id: 'advanceClock',
    summary: 'Move the clock; what falls due runs in time order before the answer',
    tag: SANDBOX,
    body: clockAdvanceSchema,
    data: clockViewSchema,
  },
  {
    method: 'post',
    path: '/sandbox/v1/clock/set',
    id: 'setClock',
    summary:
      'Set the clock to a later time (409 for an earlier one); what falls due runs in time order before the answer',
    tag: SANDBOX,
    body: clockSetSchema,
    errors: [409],
    data: clockViewSchema,
  },
  {
    method: 'get',
    path: '/sandbox/v1/progress',
    id: 'getProgress',
    summary:
      'The long work under way in the account (a clock move, an import): what, how far, for how long; null when none',
    tag: SANDBOX,
    data: progressViewSchema,
  },
  {
    method: 'get',
    path: '/sandbox/v1/hubs',
    id: 'listHubs',
    summary: 'The payment hubs of the account, by id (each is made on first use; those of --hubs by the list too)',
    tag: SANDBOX,
    query: listQuery,
    list: true,
    data: hubViewSchema,
  },
  {
    method: 'get',
    path: '/sandbox/v1/hubs/{id}',
    id: 'getHub',
    summary: 'A payment hub (made if new and allowed by `--hubs`)',
    tag: SANDBOX,
    data: hubViewSchema,
  },
  {
    method: 'patch',
    path: '/sandbox/v1/hubs/{id}',
    id: 'updateHub',
    summary: "Change a hub's settings (made if new and allowed by `--hubs`)",
    tag: SANDBOX,
    body: hubPatchSchema,
    data: hubViewSchema,
  },
  {
    method: 'post',
    path: '/sandbox/v1/clients/{id}/cvu',
    id: 'setClientCvuStatus',
    summary: "Move a client's CVU: `provisioning` or `active` for one not provisioned yet, `active` or `disabled`",
    tag: SANDBOX,
    body: clientCvuSchema,
    errors: [409],
    data: clientViewSchema,
  },
  {
    method: 'post',
    path: '/sandbox/v1/clients/{id}/debits',
    id: 'createDebit',
    summary: 'A debit entry of -amount',
    tag: SANDBOX,
    body: debitSchema,
    status: 201,
    data: entryViewSchema,
  },
  {
    method: 'post',
    path: '/sandbox/v1/clients/{id}/ledger',
    id: 'createLedgerEntry',
    summary:
      'A ledger movement: a credit, a debit, a signed adjustment, or the reversal of a credited operation (409 if reversed already)',
    tag: SANDBOX,
    body: ledgerEntrySchema,
    status: 201,
    errors: [409],
    data: entryViewSchema,
  },
  {
    method: 'post',
    path: '/sandbox/v1/clients/{id}/invoices/{invoiceId}/allocations',
    id: 'allocateToInvoice',
    summary:
      "Apply the client's cash to an invoice: an `invoice_allocation` entry; the invoice turns `partial` or `paid` (409 past what it owes or the cash not yet allocated)",
    tag: SANDBOX,
    body: allocationSchema,
    status: 201,
    errors: [409],
    data: entryViewSchema,
  },
  {
    method: 'post',
    path: '/sandbox/v1/reset',
    id: 'resetAccount',
    summary: 'Clear the account',
    tag: SANDBOX,
    data: resetSchema,
  },
  {
    method: 'get',
    path: '/sandbox/v1/export',
    id: 'exportAccount',
    summary: "The account's whole state as one document (money in cents, as stored)",
    tag: SANDBOX,
    data: accountExportSchema,
    unreadable: true,
  },
  {
    method: 'post',
    path: '/sandbox/v1/import',
    id: 'importAccount',
    summary:
      "Replace the account's whole state with an export, held to every rule of the API; the account is then held: its open deliveries, and the callbacks it raises until released (unless forwarded), are `held`, never sent until released (`?dryRun=1`: only check it and count what it holds)",
    tag: SANDBOX,
    body: accountExportSchema,
    query: importQuery,
    data: importResultSchema,
  },
  {
    method: 'get',
    path: '/sandbox/v1/scenario',
    id: 'recordScenario',
    summary: "The account's story as a scenario file (`?name=`), which `va-sandbox run` replays on a fresh account",
    tag: SANDBOX,
    data: scenarioSchema,
  },

  {
    method: 'get',
    path: '/sandbox/v1/deliveries',
    id: 'listDeliveries',
    summary: 'The delivery log, newest first',
    tag: DELIVERIES,
    query: listDeliveriesQuery,
    list: true,
    data: deliveryViewSchema,
  },
  {
    method: 'get',
    path: '/sandbox/v1/deliveries/{id}',
    id: 'getDelivery',
    summary: 'One delivery with every attempt',
    tag: DELIVERIES,
    data: deliveryDetailSchema,
  },
  {
    method: 'post',
    path: '/sandbox/v1/deliveries/{id}/redeliver',
    id: 'redeliver',
    summary: 'A new delivery of the same event (same eventId); `{"url"}` sends this one delivery there instead',
    tag: DELIVERIES,
    body: redeliverSchema,
    optionalBody: true,
    status: 201,
    errors: [409],
    data: deliveryDetailSchema,
  },
  {
    method: 'post',
    path: '/sandbox/v1/deliveries/release',
    id: 'releaseDeliveries',
    summary:
      "Send every `held` delivery (an imported account's) as first attempts, to the forwarding URL if one is set, and end the account's hold: `{released}` counts them",
    tag: DELIVERIES,
    data: releasedSchema,
  },
  {
    method: 'post',
    path: '/sandbox/v1/deliveries/{id}/release',
    id: 'releaseDelivery',
    summary:
      'Send one `held` delivery as a first attempt; `{"url"}` sends it there instead (else the forwarding URL, else its own)',
    tag: DELIVERIES,
    body: redeliverSchema,
    optionalBody: true,
    errors: [409],
    data: deliveryDetailSchema,
  },
  {
    method: 'get',
    path: '/sandbox/v1/forwarding',
    id: 'getForwarding',
    summary: "The account's forwarding URL (`url` null: off)",
    tag: DELIVERIES,
    data: forwardingViewSchema,
  },
  {
    method: 'put',
    path: '/sandbox/v1/forwarding',
    id: 'setForwarding',
    summary:
      'Send every callback attempt of the account (with `events`, of those event types only) to `url` instead of its configured URL',
    tag: DELIVERIES,
    body: forwardingSchema,
    data: forwardingViewSchema,
  },
  {
    method: 'delete',
    path: '/sandbox/v1/forwarding',
    id: 'deleteForwarding',
    summary: 'Stop forwarding: callbacks go to their configured URLs again',
    tag: DELIVERIES,
    data: forwardingViewSchema,
  },
  {
    method: 'get',
    path: '/sandbox/v1/faults',
    id: 'getFaults',
    summary: "The account's delivery faults",
    tag: DELIVERIES,
    data: faultsSchema,
  },
  {
    method: 'put',
    path: '/sandbox/v1/faults',
    id: 'setFaults',
    summary:
      'Delivery faults: `duplicate` (each 2xx attempt sent once more), `delayMs` (each attempt waits first), `shuffle` (payments and clients not held to raise order); a field left out is off',
    tag: DELIVERIES,
    body: faultsSchema,
    data: faultsSchema,
  },
  {
    method: 'post',
    path: '/sandbox/v1/api-faults',
    id: 'addApiFault',
    summary: `Add an API fault rule: the account's matching \`/api/v1\` requests get ${apiFaultKinds('named')}, the next \`times\` or with a seeded \`probability\`; the first rule that matches applies`,
    tag: SANDBOX,
    body: apiFaultRuleSchema,
    status: 201,
    errors: [409],
    data: apiFaultRuleViewSchema,
  },
  {
    method: 'get',
    path: '/sandbox/v1/api-faults',
    id: 'listApiFaults',
    summary: "The account's API fault rules, in the order they apply (the order added), with their hits",
    tag: SANDBOX,
    query: listQuery,
    list: true,
    data: apiFaultRuleViewSchema,
  },
  {
    method: 'delete',
    path: '/sandbox/v1/api-faults',
    id: 'clearApiFaults',
    summary: 'Remove every API fault rule of the account',
    tag: SANDBOX,
    data: apiFaultsClearedSchema,
  },
  {
    method: 'delete',
    path: '/sandbox/v1/api-faults/{id}',
    id: 'deleteApiFault',
    summary: 'Remove one API fault rule (the answer is the rule as it was)',
    tag: SANDBOX,
    data: apiFaultRuleViewSchema,
  },
  {
    method: 'get',
    path: '/sandbox/v1/requests',
    id: 'listRequests',
    summary:
      "The request journal: the account's `/api/v1` requests as sent and answered, newest first (`path`: `{id}` or `*` stands for one segment)",
    tag: SANDBOX,
    query: listRequestsQuery,
    list: true,
    data: journalItemSchema,
  },
  {
    method: 'get',
    path: '/sandbox/v1/requests/{id}',
    id: 'getRequest',
    summary: 'One request of the journal',
    tag: SANDBOX,
    data: journalItemSchema,
  },
  {
    method: 'delete',
    path: '/sandbox/v1/requests',
    id: 'clearRequests',
    summary: "Remove every request of the account's journal",
    tag: SANDBOX,
    data: requestsClearedSchema,
  },
  {
    method: 'get',
    path: '/sandbox/v1/stream',
    id: 'stream',
    summary:
      'Server-sent events: `event`, `transfer` and `delivery` messages of the account, live (and `forwarding` and `apiFaults` when those change)',
    tag: DELIVERIES,
    produces: 'text/event-stream',
  },
];
