/**
 * Scenario files: their schema and steps, and an account recorded as one.
 */
export * from './scenario-record.js';
export * from './scenario.js';
