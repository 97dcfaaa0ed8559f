import { emptyAccountState } from '../../core/account/account.js';
import { type AccountExport, EXPORT_FORMAT, EXPORT_VERSION } from '../../core/account-export/account-export.js';
import type { ApiFaultRuleView } from '../../core/api-faults/api-faults.js';
import { CALLBACK_EXAMPLES, examplePayment } from '../../core/callbacks/callbacks.js';
import type { TriggerView } from '../../core/records/index.js';
import type { JournalItem } from '../../core/records/request-journal.js';
import type {
  BalanceView,
  ClientView,
  ClockView,
  DeliveryDetail,
  DeliveryView,
  EntryView,
  EventView,
  HubView,
  InvoiceView,
  TransferView,
} from '../../core/records/views.js';
import { SCENARIO_VERSION, type Scenario } from '../../core/scenarios/scenario.js';

/**
 * One example of each answer in the OpenAPI document, typed by its view (so it cannot drift from the schema) and
 * checked against the document by the tests. They tell one story: a payment of hub 123 paid by a transfer.
 */

const AT = '2026-03-02T14:05:09.120Z';
const PAID_AT = '2026-03-02T14:07:41.503Z';
const CLIENT_ID = '1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d';
const TRANSFER_ID = '7a8b9c0d-1e2f-4a3b-8c4d-5e6f7a8b9c0d';
const DELIVERY_ID = '8b9c0d1e-2f3a-4b4c-9d5e-6f7a8b9c0d1e';
const INVOICE_ID = '9c0d1e2f-3a4b-4c5d-8e6f-7a8b9c0d1e2f';
const created = CALLBACK_EXAMPLES.created as { eventId: string };

const hub: HubView = {
  id: 123,
  name: 'Sandbox Hub 123',
  brand: 'Sandbox',
  dedicated_client_cvus_enabled: true,
  cvuProvisioning: 'inline',
  collectionCvu: '0000999900000000000123',
  collectionAlias: 'SANDBOX.HUB.123',
};

const client: ClientView = {
  id: CLIENT_ID,
  paymentHubId: 123,
  hubName: 'Sandbox Hub 123',
  name: 'Ana Pérez',
  taxId: '20-12345678-6',
  cashinCallbackUrl: 'https://merchant.example/webhooks/cashin',
  emails: ['ana@example.com'],
  phones: [],
  aliasPrefixHint: null,
  aliasSuffixHint: null,
  externalReference: 'customer-77',
  metadata: {},
  cvu: '0000999900000087654321',
  alias: 'ANA.PEREZ.SANDBOX',
  cvuStatus: 'active',
  createdAt: AT,
  updatedAt: AT,
};

const transfer: TransferView = {
  id: TRANSFER_ID,
  operationId: 'op_7c1e5a90b2d34f6e8a1b2c3d',
  to: examplePayment.cvu,
  cvu: examplePayment.cvu,
  total: 5000,
  taxes: 30,
  netAmount: 4970,
  from: { name: 'Juan Gómez', taxId: '20-98765432-1' },
  outcome: 'credited',
  reason: null,
  target: { type: 'va_payment', id: examplePayment.id },
  eventIds: ['1c9f5a3d-2b4e-4f60-8b7c-8d9e0f1a2b3c', '2da06b4e-3c5f-4a71-9c8d-9e0f1a2b3c4d'],
  createdAt: PAID_AT,
};

const delivery: DeliveryView = {
  id: DELIVERY_ID,
  eventId: created.eventId,
  eventType: 'created',
  vaPaymentId: examplePayment.id,
  clientId: null,
  url: examplePayment.callbackUrl,
  forwardedTo: null,
  status: 'delivered',
  reason: null,
  attempts: 1,
  lastResponseStatus: 200,
  lastError: null,
  nextAttemptAt: null,
  redeliveryOf: null,
  createdAt: AT,
  updatedAt: AT,
};

const request = {
  method: 'POST' as const,
  url: examplePayment.callbackUrl,
  headers: {
    'Content-Type': 'application/json',
    'User-Agent': 'Service-VA-Callback/1.0',
    'X-Service-Event-Id': created.eventId,
    'X-Service-Event-Type': 'created',
  },
  body: CALLBACK_EXAMPLES.created as Record<string, unknown>,
};

const deliveryDetail: DeliveryDetail = {
  ...delivery,
  event: { id: created.eventId, eventType: 'created', vaPaymentId: examplePayment.id, clientId: null },
  request,
  attempts: [
    {
      n: 1,
      startedAt: AT,
      durationMs: 12,
      responseStatus: 200,
      responseBody: 'ok',
      error: null,
      errorMessage: null,
      forwardedTo: null,
      fault: null,
      request,
    },
  ],
};

const event: EventView = {
  id: created.eventId,
  eventType: 'created',
  vaPaymentId: examplePayment.id,
  clientId: null,
  url: examplePayment.callbackUrl,
  droppedReason: null,
  body: CALLBACK_EXAMPLES.created as Record<string, unknown>,
  createdAt: AT,
  deliveries: [delivery],
};

const entry: EntryView = {
  id: '0d1e2f3a-4b5c-4d6e-9f7a-8b9c0d1e2f3a',
  clientId: CLIENT_ID,
  entryType: 'cash_in',
  amount: 11970,
  currency: 'ARS',
  description: 'Transfer to the client CVU',
  operationId: 'op_2f4a6c8e0b1d3f5a7c9e1b3d',
  paymentId: null,
  invoiceId: null,
  tempLinkId: null,
  sourceType: 'manual_deposit',
  createdAt: PAID_AT,
};

const invoice: InvoiceView = {
  id: INVOICE_ID,
  clientId: CLIENT_ID,
  invoiceNumber: '0001-00000001',
  invoiceType: 'B',
  sellerTaxId: null,
  sellerName: null,
  buyerTaxId: client.taxId,
  buyerName: client.name,
  subtotalNet: null,
  vatAmount: null,
  otherTaxes: null,
  totalAmount: 12000,
  total_amount: 12000,
  currency: 'ARS',
  issuedAt: AT,
  dueAt: null,
  paymentStatus: 'pending',
  paymentTerms: null,
  observations: null,
  createdAt: AT,
  updatedAt: AT,
};

const balance: BalanceView = {
  clientId: CLIENT_ID,
  currency: 'ARS',
  totalCashIn: 11970,
  totalCashOut: 0,
  totalInvoiced: 12000,
  balance: -30,
};
const clock: ClockView = { now: PAID_AT, offsetSeconds: 3600 };

const { clockOffsetMs: _offset, ...emptyRecords } = emptyAccountState();
const accountExport: AccountExport = {
  format: EXPORT_FORMAT,
  version: EXPORT_VERSION,
  exportedAt: AT,
  account: { ...emptyRecords, events: {}, hubs: { '123': hub } },
};

const scenario: Scenario = {
  version: SCENARIO_VERSION,
  name: 'Recorded from account …1234',
  steps: [
    {
      name: 'payment_1',
      do: 'createVaPayment',
      body: { paymentHubId: 123, currency: 'ARS', lockMode: 'amount', amount: 5000 },
    },
    { do: 'transfer', body: { to: '${payment_1.cvu}', total: 5000, taxes: 30 } },
  ],
};

/** By the name of the schema in `components.schemas`. */
export const EXAMPLES: Record<string, unknown> = {
  VaPayment: examplePayment,
  Client: client,
  Transfer: transfer,
  Trigger: {
    event: 'succeeded',
    eventId: '2c3d4e5f-6a7b-4c8d-9e0f-1a2b3c4d5e6f',
    vaPaymentId: examplePayment.id,
    steps: [
      `POST /api/v1/va-payments: VA payment ${examplePayment.id} (lockMode time, amount 1500.00, ttlSeconds 1800, ` +
        'callbackUrl http://127.0.0.1:3000/webhooks) is waiting, CVU 0000999900000000000456',
      `POST /sandbox/v1/transfers: 1500.00 to CVU 0000999900000000000456, credited: VA payment ${examplePayment.id} is completed`,
    ],
  } satisfies TriggerView,
  Delivery: delivery,
  DeliveryDetail: deliveryDetail,
  Event: event,
  Entry: entry,
  Invoice: invoice,
  Balance: balance,
  Hub: hub,
  Clock: clock,
  Progress: { what: 'clock advance', done: 1800, total: 3600, unit: 'sandbox seconds', elapsedMs: 2400 },
  Transactions: { transactions: [entry], pagination: { page: 1, limit: 20, total: 1, totalPages: 1 } },
  Forwarding: { url: 'http://localhost:3000/webhooks', events: null, since: AT },
  Faults: { duplicate: true, delayMs: 0, shuffle: false },
  Released: { released: 2 },
  ApiFaultRule: {
    id: '3d4e5f60-7a8b-4c9d-8e0f-1a2b3c4d5e6f',
    method: 'POST',
    path: '/api/v1/va-payments',
    fault: { type: 'lost_answer' },
    times: 1,
    probability: null,
    seed: null,
    hits: 0,
    spent: false,
    createdAt: AT,
  } satisfies ApiFaultRuleView,
  ApiFaultsCleared: { deleted: 1 },
  JournalRequest: {
    id: '5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d',
    at: AT,
    method: 'POST',
    path: '/api/v1/va-payments',
    query: {},
    requestHeaders: { 'Content-Type': 'application/json', 'Idempotency-Key': 'order-1042' },
    requestBody: {
      paymentHubId: 123,
      currency: 'ARS',
      lockMode: 'amount',
      amount: 5000,
      externalReference: 'order-1042',
    },
    status: 201,
    responseBody: { success: true, data: examplePayment, timestamp: AT },
    durationMs: 3.2,
    idempotencyKey: 'order-1042',
    replayed: false,
    apiFault: null,
  } satisfies JournalItem,
  RequestsCleared: { deleted: 12 },
  Reset: { reset: true },
  ImportResult: {
    imported: true,
    clock,
    counts: { vaPayments: 1, clients: 1, transfers: 1, events: 3, deliveries: 3, entries: 1, invoices: 1 },
  },
  Health: { status: 'ok', version: '0.1.0', keepDays: null },
  AccountExport: accountExport,
  Scenario: scenario,
};
