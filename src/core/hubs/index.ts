/**
 * Payment hubs (contract part 1): hubs made on first use, their collection CVUs and the pool of CVUs, BCRA check
 * digits.
 */
export * from './cvu.js';
export * from './hubs.js';
