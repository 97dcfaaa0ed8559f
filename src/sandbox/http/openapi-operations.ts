/** Every endpoint of the API and the sandbox, in the document's order, gathered from the contract's parts. */
import type { Operation } from './openapi-operation.js';
import { CLIENT_OPERATIONS, SERVICE_OPERATIONS, VA_PAYMENT_OPERATIONS } from './openapi-operations-api.js';
import { DELIVERY_OPERATIONS, STREAM_OPERATION } from './openapi-operations-deliveries.js';
import { API_FAULT_OPERATIONS, JOURNAL_OPERATIONS } from './openapi-operations-faults-journal.js';
import { SANDBOX_OPERATIONS } from './openapi-operations-sandbox.js';

export const OPERATIONS: Operation[] = [
  ...SERVICE_OPERATIONS,
  ...VA_PAYMENT_OPERATIONS,
  ...CLIENT_OPERATIONS,
  ...SANDBOX_OPERATIONS,
  ...DELIVERY_OPERATIONS,
  ...API_FAULT_OPERATIONS,
  ...JOURNAL_OPERATIONS,
  STREAM_OPERATION,
];
