/**
 * Scenario files: their schema and steps, and an account recorded as one.
 */

export * from './scenario.js';
export * from './scenario-record.js';
