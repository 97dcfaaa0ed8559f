import type { Client } from './client.js';
import type { Output } from './render.js';
import { followStream, type LiveMessage } from './ui/live.js';

export interface FollowHandlers {
  /**
   * Runs once subscribed, and again after each reconnection, before the messages that came meanwhile are handed on
   * (a list printed first, so nothing is skipped silently); a throw the first time ends the follow.
   */
  ready?: () => Promise<void>;
  onMessage: (message: LiveMessage) => void;
  /** Runs after each reconnection (the server restarted, or this reader fell behind), before `ready`. */
  reconnected?: () => Promise<void>;
  /** Ends the follow, as Ctrl-C does, once aborted (a command that knows when it has seen enough). */
  signal?: AbortSignal;
}

/**
 * Follows the account's live stream until Ctrl-C (SIGINT or SIGTERM), then resolves. When the sandbox goes away (a
 * restart) it says so on stderr and connects again, as the dashboard does, instead of ending; so too, at once, when
 * the server ended the stream because this reader fell behind.
 */
export async function followUntilInterrupted(client: Client, out: Output, handlers: FollowHandlers): Promise<void> {
  // A sandbox that is not there at all (or refuses the key) is an error now, not a reconnection loop.
  await client.call('GET', '/sandbox/v1/clock');
  return new Promise<void>((resolve, reject) => {
    // The stream's reconnection timer does not hold the process open (the dashboard's quit must not wait for it): this does.
    const alive = setInterval(() => {}, 2 ** 30);
    /** Messages that came while `ready` runs; null while they are handed on as they come. */
    let held: LiveMessage[] | null = [];
    let connected = false;
    let lagged = false;
    let down = false;
    const finish = (error?: Error) => {
      stop();
      clearInterval(alive);
      process.off('SIGINT', interrupted);
      process.off('SIGTERM', interrupted);
      handlers.signal?.removeEventListener('abort', interrupted);
      if (error) reject(error);
      else resolve();
    };
    const interrupted = () => finish();
    const catchUp = async (first: boolean) => {
      held ??= [];
      try {
        if (!first) await handlers.reconnected?.();
        await handlers.ready?.();
      } catch (error) {
        if (first) return finish(error as Error);
        out.note(`va-sandbox: ${(error as Error).message}`);
      }
      const messages = held;
      held = null;
      for (const message of messages) handlers.onMessage(message);
    };
    const stop = followStream(
      client,
      (message) => (held ? held.push(message) : handlers.onMessage(message)),
      (state) => {
        if (state === 'reconnecting' && !lagged && !down) {
          down = true;
          out.note(`the sandbox at ${client.url} went away; reconnecting (Ctrl-C to stop)`);
        }
        if (state !== 'live') return;
        if (connected && !lagged) out.note(`reconnected to the sandbox at ${client.url}`);
        void catchUp(!connected);
        connected = true;
        lagged = false;
        down = false;
      },
      () => {
        lagged = true;
        out.note('fell behind the live stream: following again');
      },
    );
    process.once('SIGINT', interrupted);
    process.once('SIGTERM', interrupted);
    handlers.signal?.addEventListener('abort', interrupted, { once: true });
  });
}
