import { serverSentEvents } from '../client/sse.js';
import type { LiveEvent } from '../core/account/account.js';
import type { Api } from './api.js';

/** One message of `GET /sandbox/v1/stream` (the account's live events, without the account). */
type LiveMessage = DistributiveOmit<LiveEvent, 'account'>;
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

export type LiveState = 'connecting' | 'connected' | 'reconnecting';

/** A message, or `resync` after a reconnection: whatever was missed meanwhile must be read again. */
export type LiveListener = (message: LiveMessage | { type: 'resync' }) => void;

const MAX_BACKOFF_MS = 10_000;

/**
 * The live stream, read with fetch because it needs the Authorization header (EventSource cannot send one).
 * Reconnects with a growing pause while the page is open; `stop()` ends it.
 */
export function connectLive(api: Api, onState: (state: LiveState) => void) {
  const listeners = new Set<LiveListener>();
  const stopped = new AbortController();
  const emit = (message: Parameters<LiveListener>[0]) => {
    for (const listener of listeners) listener(message);
  };

  void (async () => {
    let backoff = 500;
    let everConnected = false;
    while (!stopped.signal.aborted) {
      onState(everConnected ? 'reconnecting' : 'connecting');
      try {
        const response = await api.send('GET', '/sandbox/v1/stream', { signal: stopped.signal });
        if (!response.ok || !response.body) throw new Error(`stream answered ${response.status}`);
        onState('connected');
        if (everConnected) emit({ type: 'resync' });
        everConnected = true;
        backoff = 500;
        for await (const { data } of serverSentEvents(chunks(response.body))) emit(JSON.parse(data) as LiveMessage);
      } catch {
        // Closed, refused or aborted: try again below unless stopped.
      }
      if (stopped.signal.aborted) break;
      onState('reconnecting');
      await new Promise((resolve) => setTimeout(resolve, backoff));
      backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
    }
  })();

  return {
    subscribe(listener: LiveListener): () => void {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    stop: () => stopped.abort(),
  };
}

export type Live = ReturnType<typeof connectLive>;

async function* chunks(body: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    reader.releaseLock();
  }
}
