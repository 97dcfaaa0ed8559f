import type { Client } from './client.js';
import type { Output } from './render.js';
import { followStream, type LiveMessage } from './ui/live.js';

export interface FollowHandlers {
  /** Runs once subscribed, before any message is handed on (a list printed first); a throw ends the follow. */
  ready?: () => Promise<void>;
  onMessage: (message: LiveMessage) => void;
  /** Runs after each reconnection (the server restarted). */
  reconnected?: () => Promise<void>;
}

/**
 * Follows the account's live stream until Ctrl-C (SIGINT or SIGTERM), then resolves. When the sandbox goes away (a
 * restart) it says so on stderr and connects again, as the dashboard does, instead of ending.
 */
export async function followUntilInterrupted(client: Client, out: Output, handlers: FollowHandlers): Promise<void> {
  // A sandbox that is not there at all (or refuses the key) is an error now, not a reconnection loop.
  await client.call('GET', '/sandbox/v1/clock');
  return new Promise<void>((resolve, reject) => {
    // The stream's reconnection timer does not hold the process open (the dashboard's quit must not wait for it): this does.
    const alive = setInterval(() => {}, 2 ** 30);
    let held: LiveMessage[] | null = [];
    let connected = false;
    let down = false;
    const finish = (error?: Error) => {
      stop();
      clearInterval(alive);
      process.off('SIGINT', interrupted);
      process.off('SIGTERM', interrupted);
      if (error) reject(error);
      else resolve();
    };
    const interrupted = () => finish();
    const stop = followStream(
      client,
      (message) => (held ? held.push(message) : handlers.onMessage(message)),
      (state) => {
        if (state === 'reconnecting' && !down) {
          down = true;
          out.note(`the sandbox at ${client.url} went away; reconnecting (Ctrl-C to stop)`);
        }
        if (state !== 'live') return;
        if (!connected) {
          connected = true;
          (handlers.ready?.() ?? Promise.resolve()).then(() => {
            for (const message of held!) handlers.onMessage(message);
            held = null;
          }, finish);
          return;
        }
        down = false;
        out.note(`reconnected to the sandbox at ${client.url}`);
        handlers.reconnected?.().catch((error: Error) => out.note(`va-sandbox: ${error.message}`));
      },
    );
    process.once('SIGINT', interrupted);
    process.once('SIGTERM', interrupted);
  });
}
