/** The OpenAPI document's JSON Schemas: made from the zod schemas, the answers' named in `components.schemas` with their examples. */
import { z } from 'zod';
import { accountExportSchema } from '../../core/account-export/account-export.js';
import { apiFaultRuleViewSchema, apiFaultsClearedSchema } from '../../core/api-faults/api-faults.js';
import { faultsSchema } from '../../core/callbacks/delivery-settings.js';
import { triggerViewSchema } from '../../core/records/index.js';
import { journalItemSchema, requestsClearedSchema } from '../../core/records/request-journal.js';
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
  paginationSchema,
  releasedSchema,
  resetSchema,
  transactionsViewSchema,
  transferViewSchema,
  vaPaymentObjectSchema,
} from '../../core/records/views.js';
import { scenarioSchema } from '../../core/scenarios/scenario.js';
import { progressViewSchema } from '../runtime/progress.js';
import { EXAMPLES } from './openapi-examples.js';

/** JSON Schema 2020-12 (OpenAPI 3.1's dialect) of what a request may send (`input`) or an answer holds (`output`). */
export const schemaOf = (schema: z.ZodType, io: 'input' | 'output' = 'input'): Record<string, unknown> => {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<
    string,
    unknown
  >;
  return rest;
};

/** The answers' schemas by their name in `components.schemas`, which `openapi-typescript` and others name types by. */
export const NAMED = new Map<z.ZodType, string>([
  [vaPaymentObjectSchema, 'VaPayment'],
  [clientViewSchema, 'Client'],
  [transferViewSchema, 'Transfer'],
  [triggerViewSchema, 'Trigger'],
  [deliveryViewSchema, 'Delivery'],
  [deliveryDetailSchema, 'DeliveryDetail'],
  [eventViewSchema, 'Event'],
  [entryViewSchema, 'Entry'],
  [invoiceViewSchema, 'Invoice'],
  [balanceViewSchema, 'Balance'],
  [hubViewSchema, 'Hub'],
  [clockViewSchema, 'Clock'],
  [progressViewSchema, 'Progress'],
  [transactionsViewSchema, 'Transactions'],
  [forwardingViewSchema, 'Forwarding'],
  [faultsSchema, 'Faults'],
  [releasedSchema, 'Released'],
  [apiFaultRuleViewSchema, 'ApiFaultRule'],
  [apiFaultsClearedSchema, 'ApiFaultsCleared'],
  [journalItemSchema, 'JournalRequest'],
  [requestsClearedSchema, 'RequestsCleared'],
  [resetSchema, 'Reset'],
  [importResultSchema, 'ImportResult'],
  [accountExportSchema, 'AccountExport'],
  [scenarioSchema, 'Scenario'],
  [healthSchema, 'Health'],
  [paginationSchema, 'Pagination'],
]);

export const ref = (schema: z.ZodType) => ({ $ref: `#/components/schemas/${NAMED.get(schema)}` });
export const exampleOf = (schema: z.ZodType) => EXAMPLES[NAMED.get(schema)!];
