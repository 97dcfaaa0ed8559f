/** Where a sandbox listens and keeps its state unless told otherwise. Import-free, so the CLI can read it cheaply. */
export const DEFAULT_PORT = 4580;
export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_DATA = '.va-sandbox/state.db';
