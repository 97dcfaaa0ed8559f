/**
 * Events and deliveries (contract part 4): callback bodies, events and their routing, the delivery log, retries,
 * forwarding.
 */
export * from './callbacks.js';
export * from './deliveries.js';
export * from './delivery-log.js';
export * from './delivery-queue.js';
export * from './delivery-settings.js';
export * from './event-body.js';
export * from './events.js';
