/**
 * Simulated transfers (contract part 5) and their matching to a collection CVU, a pool CVU or a client CVU.
 */
export * from './transfers.js';
