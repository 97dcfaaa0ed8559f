/**
 * VA payments (contract part 2): the lifecycle as pure transitions, lock modes, the records and their lists.
 */
export * from './va-payment.js';
export * from './va-payments.js';
