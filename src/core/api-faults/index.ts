/**
 * API faults (contract part 7): rules that make /api/v1 answers misbehave, their seeded draws, and the rules in
 * words.
 */
export * from './api-faults.js';
