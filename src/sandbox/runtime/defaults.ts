/** Where a sandbox listens and keeps its state unless told otherwise. Import-free, so the CLI can read it cheaply. */
export const DEFAULT_PORT = 4580;
export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_DATA = '.va-sandbox/state.db';
/** `start --buffer-budget`: bytes the server may hold for its clients, all connections together (256 MiB). */
export const DEFAULT_BUFFER_BUDGET = 256 * 1024 * 1024;
/** `start --journal`: the newest requests kept per account. */
export const DEFAULT_JOURNAL = 10_000;
