import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { LiveEvent } from '../../core/index.js';
import type { Runtime } from '../runtime/runtime.js';
import type { Env } from './routes/kit.js';

/** Often enough that proxies and load balancers keep an idle stream open. */
const HEARTBEAT_MS = 15_000;
/** What one subscriber may have waiting to be sent; past it, it is told `lagged` and closed. */
const STREAM_BUFFER_BYTES = 512 * 1024;
/** How long a lagged subscriber has to read what it was sent before its connection is cut. */
const LAGGED_GRACE_MS = 5_000;

const lagged = (): string =>
  `event: lagged\ndata: ${JSON.stringify({
    type: 'lagged',
    message: `this subscriber fell ${STREAM_BUFFER_BYTES / 1024} KiB behind and is closed: reconnect and re-read what you show`,
  })}\n\n`;

/**
 * `GET /sandbox/v1/stream`: one server-sent message per live event of the caller's account, named by its
 * `type` (`event`, `transfer`, `delivery`) with the event minus `account` as JSON data, plus a comment
 * every 15 s. Ends when the client goes away or the server closes, or, for a client that stops reading, with a
 * `lagged` message once its buffer is full: nothing is kept for it beyond STREAM_BUFFER_BYTES.
 */
export function liveStream(runtime: Runtime) {
  // Every subscriber of an account sends the same text for an event: it is made once.
  let last: { event: LiveEvent; text: string } | null = null;
  const message = (event: LiveEvent): string => {
    if (last?.event !== event) {
      const { account: _, ...live } = event;
      last = { event, text: `event: ${live.type}\ndata: ${JSON.stringify(live)}\n\n` };
    }
    return last.text;
  };

  return (c: Context<Env>) => {
    const key = c.get('account').key;
    return streamSSE(c, async (stream) => {
      const socket = c.env?.incoming?.socket;
      let end = () => {};
      // One write in flight at a time; the rest wait here, counted, so a client that stops reading is seen.
      let queue: string[] = [];
      let queued = 0;
      let writing: Promise<void> | null = null;
      const flush = async () => {
        for (let text = queue.shift(); text !== undefined; text = queue.shift()) {
          queued -= text.length;
          await stream.write(text); // to a gone client it fails quietly
        }
        writing = null;
      };
      const send = (text: string) => {
        queued += text.length;
        queue.push(text);
        if (queued > STREAM_BUFFER_BYTES) return fallBehind();
        writing ??= flush();
      };
      const fallBehind = () => {
        stop();
        queue = [lagged()];
        queued = 0;
        // What was written is still read first; then the stream ends. A client that has not read it all by then is cut off.
        const cut = setTimeout(() => socket?.destroy(), LAGGED_GRACE_MS);
        cut.unref();
        const spare = () => clearTimeout(cut);
        c.env?.outgoing?.once('finish', spare).once('close', spare);
        void (writing ??= flush()).then(() => end());
      };

      const unsubscribe = runtime.sandbox.on((event: LiveEvent) => {
        if (event.account === key) send(message(event));
      });
      const heartbeat = setInterval(() => send(': heartbeat\n\n'), HEARTBEAT_MS);
      heartbeat.unref();
      const stop = () => {
        clearInterval(heartbeat);
        unsubscribe();
      };
      // A first comment sends the headers at once, so a client knows it is subscribed.
      send(': connected\n\n');
      // The server's close() destroys every connection, which aborts the stream too. A client that goes away
      // closes its side: the Node server keeps half-closed connections open for their answer, so that ends it here.
      await new Promise<void>((resolve) => {
        end = resolve;
        stream.onAbort(resolve);
        socket?.once('end', resolve);
      });
      socket?.off('end', end);
      stop();
    });
  };
}
