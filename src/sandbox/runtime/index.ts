/** The runtime that joins the store, the HTTP face and delivery: timers, clock walks, progress, defaults. */
export type { ProgressView } from './progress.js';
export { createRuntime, type Runtime } from './runtime.js';
