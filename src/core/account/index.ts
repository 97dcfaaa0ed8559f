/**
 * An account of the sandbox (one per API key), what its parts share, and createSandbox over all accounts.
 */
export * from './account.js';
export * from './sandbox.js';
