/**
 * The sandbox clock (contract part 5): the injected wall clock, clock moves and the work that falls due,
 * retention.
 */
export * from './clock.js';
export * from './due-work.js';
export * from './retention.js';
