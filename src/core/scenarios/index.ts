/**
 * Scenario files: their schema and steps, their references, how an answer mismatches its expectation, and an account
 * recorded as one.
 */

export * from './mismatches.js';
export * from './references.js';
export * from './scenario.js';
export * from './scenario-record.js';
