import { serverSentEvents } from '../../client/sse.js';
import type { LiveEvent } from '../../core/account/account.js';
import type { Client } from '../client.js';

/** One message of `GET /sandbox/v1/stream`: an event, a transfer or a delivery attempt of the account. */
export type LiveMessage = WithoutAccount<LiveEvent>;
type WithoutAccount<E> = E extends unknown ? Omit<E, 'account'> : never;

export type StreamState = 'connecting' | 'live' | 'reconnecting';

const RECONNECT_MS = 2000;

/**
 * Follows the account's live stream until `stop()`: each message to `onMessage`, each (re)connection to `onState`.
 * A stream that ends (the server restarted) is opened again after a pause, or at once after `lagged` (the server
 * closed it because this reader fell behind); only then, never on a timer, is anything asked again.
 */
export function followStream(
  client: Client,
  onMessage: (message: LiveMessage) => void,
  onState: (state: StreamState) => void,
  /** Told when the server ended the stream because this reader fell behind (`reconnecting` follows, at once). */
  onLagged: () => void = () => {},
): () => void {
  const stopped = new AbortController();
  (async () => {
    onState('connecting');
    while (!stopped.signal.aborted) {
      let lagged = false;
      try {
        const response = await client.send('GET', '/sandbox/v1/stream', { signal: stopped.signal });
        onState('live');
        for await (const message of serverSentEvents(response.body)) {
          // Fell behind: the server ends this stream. A new one at once, and 'live' has the views read again.
          if (message.event === 'lagged') {
            lagged = true;
            onLagged();
            break;
          }
          onMessage(JSON.parse(message.data) as LiveMessage);
        }
      } catch {
        // Down or gone: tried again below, unless stopped.
      }
      if (stopped.signal.aborted) return;
      onState('reconnecting');
      if (!lagged) await new Promise((resolve) => setTimeout(resolve, RECONNECT_MS).unref());
    }
  })();
  return () => stopped.abort();
}
