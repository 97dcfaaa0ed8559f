/**
 * The records of the contract: each one's shape (state), its request schemas (schemas), its API view (views), and
 * the columns it is looked up and listed by (columns).
 */
export * from './api-fault-rule.js';
export * from './client.js';
export * from './client-view.js';
export * from './columns.js';
export * from './event.js';
export * from './fields.js';
export * from './filters.js';
export * from './hub.js';
export * from './idempotency.js';
export * from './invoice.js';
export * from './list-queries.js';
export * from './request-journal.js';
export * from './schemas.js';
export * from './state.js';
export * from './transfer.js';
export * from './trigger.js';
export * from './va-payment.js';
export * from './view-fields.js';
export * from './views.js';
export * from './words.js';
