/**
 * The conventions of every endpoint (contract part 0): error codes and statuses, money as integer cents, ids,
 * lists and their pages, Idempotency-Keys.
 */
export * from './errors.js';
export * from './idempotency.js';
export * from './ids.js';
export * from './money.js';
export * from './pagination.js';
