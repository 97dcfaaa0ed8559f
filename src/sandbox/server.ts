import type { AddressInfo } from 'node:net';
import { createAdaptorServer } from '@hono/node-server';
import type { IdSource, WallClock } from '../core/index.js';
import { defaultDeliveryPolicy } from '../core/index.js';
import { createApp, type AppOptions } from './app.js';
import { DEFAULT_DATA, DEFAULT_HOST, DEFAULT_PORT } from './defaults.js';
import { fileStore, memoryStore } from './persistence.js';
import { createRuntime } from './runtime.js';

export interface ServerOptions extends AppOptions {
  port?: number;
  host?: string;
  /** The data file; ignored with `memory`. */
  data?: string;
  memory?: boolean;
  /** Sandbox seconds before each retry. */
  retryDelays?: number[];
  callbackTimeoutMs?: number;
  /** Client taxIds must pass the CUIT check digit. */
  strictTaxId?: boolean;
  clock?: WallClock;
  ids?: IdSource;
  log?: (line: string) => void;
  version?: string;
}

/** Starts the sandbox HTTP server; resolves once it listens. `close()` stops it and flushes the state. */
export async function startServer(options: ServerOptions = {}) {
  const store = options.memory ? memoryStore() : fileStore(options.data ?? DEFAULT_DATA);
  const runtime = await createRuntime({
    store,
    clock: options.clock,
    ids: options.ids,
    policy: { ...defaultDeliveryPolicy, retryDelays: options.retryDelays ?? defaultDeliveryPolicy.retryDelays },
    callbackTimeoutMs: options.callbackTimeoutMs,
    strictTaxId: options.strictTaxId,
    log: options.log,
    version: options.version,
  });
  const app = createApp(runtime, options);
  const server = createAdaptorServer({ fetch: app.fetch, overrideGlobalObjects: false });
  const host = options.host ?? DEFAULT_HOST;
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? DEFAULT_PORT, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    await runtime.close();
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') throw new Error(`port ${options.port ?? DEFAULT_PORT} on ${host} is already in use; pick another with --port`);
    throw error;
  }
  const { port } = server.address() as AddressInfo;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  return {
    url,
    port,
    runtime,
    app,
    dataPath: store.path,
    async close(): Promise<void> {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        if ('closeAllConnections' in server) server.closeAllConnections();
      });
      await runtime.close();
    },
  };
}

export type RunningServer = Awaited<ReturnType<typeof startServer>>;
