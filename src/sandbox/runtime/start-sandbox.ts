import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sandboxClient } from '../../client/api-client.js';
import { startReceiver } from '../delivery/receiver.js';
import { startServer } from '../http/server.js';

export interface StartSandboxOptions {
  /** `memory` (default) keeps nothing on disk; `file` keeps the state in `data`, or in a temp file removed by stop(). */
  store?: 'memory' | 'file';
  data?: string;
  /** The account the `client` uses; default a fresh `sk_test_…` key, so suites never share an account. */
  apiKey?: string;
  /** Sandbox seconds before each callback retry (default 5, 25). */
  retryDelays?: number[];
  callbackTimeoutMs?: number;
  strictTaxId?: boolean;
  /** The payment hub ids accepted (others are 404); any positive id when absent. */
  hubIds?: number[];
  /** `/api/v1` requests per minute per key (default 6000; 0 turns the limit off). */
  rateLimit?: number;
}

/**
 * A whole sandbox for a test suite: the real server on a free loopback port, a typed client of one account, a
 * callback receiver, and the account's clock. `stop()` ends it all.
 */
export async function startSandbox(options: StartSandboxOptions = {}) {
  const file = options.store === 'file';
  const tmp = file && options.data === undefined ? mkdtempSync(join(tmpdir(), 'va-sandbox-')) : null;
  const server = await startServer({
    port: 0,
    host: '127.0.0.1',
    memory: !file,
    data: tmp ? join(tmp, 'state.db') : options.data,
    retryDelays: options.retryDelays,
    callbackTimeoutMs: options.callbackTimeoutMs,
    strictTaxId: options.strictTaxId,
    hubIds: options.hubIds,
    rateLimit: options.rateLimit,
  });
  const receiver = await startReceiver().catch(async (error: unknown) => {
    await server.close();
    throw error;
  });
  const apiKey = options.apiKey ?? `sk_test_${randomUUID()}`;
  const client = sandboxClient(server.url, apiKey);
  return {
    url: server.url,
    apiKey,
    client,
    receiver,
    /** The state database, or null in memory. */
    dataPath: server.dataPath,
    clock: {
      now: async (): Promise<string> => (await client.clock.get()).now,
      /** Waits for due callbacks to finish first, so each retry counts from the failure before it; then moves the clock. */
      advance: async (seconds: number) => {
        await client.deliveries.settle();
        return client.clock.advance(seconds);
      },
    },
    /** Resolves once no callback attempt is due (see `client.deliveries.settle`). */
    settle: () => client.deliveries.settle(),
    async stop(): Promise<void> {
      await receiver.close();
      await server.close();
      if (tmp) rmSync(tmp, { recursive: true, force: true });
    },
  };
}

export type StartedSandbox = Awaited<ReturnType<typeof startSandbox>>;
