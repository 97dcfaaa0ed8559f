import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { LiveEvent } from '../core/index.js';
import type { Env } from './routes/kit.js';
import type { Runtime } from './runtime.js';

/** Often enough that proxies and load balancers keep an idle stream open. */
const HEARTBEAT_MS = 15_000;

/**
 * `GET /sandbox/v1/stream`: one server-sent message per live event of the caller's account, named by its
 * `type` (`event`, `transfer`, `delivery`) with the event minus `account` as JSON data, plus a comment
 * every 15 s. Ends when the client goes away or the server closes.
 */
export function liveStream(runtime: Runtime) {
  return (c: Context<Env>) => {
    const key = c.get('account').key;
    return streamSSE(c, async (stream) => {
      // Writes are queued in call order; one to a gone client fails quietly.
      const send = (text: string) => void stream.write(text);
      const unsubscribe = runtime.sandbox.on(({ account, ...live }: LiveEvent) => {
        if (account === key) send(`event: ${live.type}\ndata: ${JSON.stringify(live)}\n\n`);
      });
      const heartbeat = setInterval(() => send(': heartbeat\n\n'), HEARTBEAT_MS);
      heartbeat.unref();
      // A first comment sends the headers at once, so a client knows it is subscribed.
      send(': connected\n\n');
      // The server's close() destroys every connection, which aborts the stream too. A client that goes away
      // closes its side: the Node server keeps half-closed connections open for their answer, so that ends it here.
      const socket = c.env?.incoming?.socket;
      let gone = () => {};
      await new Promise<void>((resolve) => {
        gone = resolve;
        stream.onAbort(resolve);
        socket?.once('end', resolve);
      });
      socket?.off('end', gone);
      clearInterval(heartbeat);
      unsubscribe();
    });
  };
}
