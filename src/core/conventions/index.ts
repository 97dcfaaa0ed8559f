/**
 * The conventions of every endpoint (contract part 0): error codes and statuses, money as integer cents, ids,
 * time as text and milliseconds, CVU check digits.
 */
export * from './cvu.js';
export * from './errors.js';
export * from './ids.js';
export * from './money.js';
export * from './time.js';
