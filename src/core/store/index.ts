/**
 * The storage port: what the core asks of a store (get, put, drop; find, each, count by the columns of each
 * table), and what every part shares over it: an account's context (its records, its time, what it was given),
 * lists and their pages, the Idempotency-Keys' answers.
 */
export * from './account-context.js';
export * from './idempotency.js';
export * from './pagination.js';
export * from './repository.js';
