/**
 * Clients (contract part 3): dedicated CVUs and their provisioning, the ledger, invoices and allocations, the
 * balance.
 */
export * from './client-ledger.js';
export * from './clients.js';
export * from './invoices.js';
export * from './ledger.js';
