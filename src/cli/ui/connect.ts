import { isAbsolute, relative } from 'node:path';
import { DEFAULT_DATA, DEFAULT_HOST } from '../../sandbox/runtime/defaults.js';
import { type Client, createClient } from '../client.js';

/** What the dashboard talks to. */
export interface Connection {
  client: Client;
  url: string;
  apiKey: string;
  /** The sandbox this process started because none answered at `url`; null when one was running. */
  embedded: { dataPath: string | null; close(): Promise<void> } | null;
}

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/;

/**
 * Connects to the sandbox at `url`, or starts one in this process on that port (state in the default database)
 * when nothing listens there. Only on a loopback http URL: a remote sandbox that is down is an error to report.
 */
export async function connect(
  url: string,
  apiKey: string,
  options: { version: string; log: (line: string) => void },
): Promise<Connection> {
  const client = createClient(url, apiKey);
  try {
    // Also checks the key: a server started with --api-key refuses others.
    await client.call('GET', '/sandbox/v1/clock');
    return { client, url, apiKey, embedded: null };
  } catch (error) {
    if ((error as { code?: string }).code !== 'ECONNREFUSED') throw error;
  }
  const target = new URL(url);
  if (target.protocol !== 'http:' || !LOOPBACK.test(target.hostname) || target.pathname !== '/')
    throw new Error(`no sandbox at ${url} — start one with \`va-sandbox start\``);
  // Loaded only now, so connecting to a running sandbox never pays for the server's modules.
  const [{ startServer }, { StoreLockedError }] = await Promise.all([
    import('../../sandbox/http/server.js'),
    import('../../sandbox/store/database.js'),
  ]);
  try {
    const server = await startServer({
      host: target.hostname === 'localhost' ? DEFAULT_HOST : target.hostname.replace(/^\[|\]$/g, ''),
      port: Number(target.port || 80),
      data: DEFAULT_DATA,
      version: options.version,
      log: options.log,
    });
    return { client, url, apiKey, embedded: server };
  } catch (error) {
    // ui has no --data or --memory: the way out is the running server's address, or stopping it.
    if (error instanceof StoreLockedError) {
      throw new Error(
        `no sandbox at ${url}, and ${DEFAULT_DATA} is held by another va-sandbox server: give ui its address with --url, or stop it`,
      );
    }
    throw error;
  }
}

/** Where the embedded sandbox keeps its state, as short as it can be said from here. */
export function dataPathOf(embedded: NonNullable<Connection['embedded']>): string {
  if (embedded.dataPath === null) return 'in memory';
  const near = relative(process.cwd(), embedded.dataPath);
  return near.startsWith('..') || isAbsolute(near) ? embedded.dataPath : near;
}
