/**
 * The storage port: what the core asks of a store (get, put, drop; find, each, count by the columns of each
 * table).
 */
export * from './account-context.js';
export * from './idempotency.js';
export * from './pagination.js';
export * from './repository.js';
