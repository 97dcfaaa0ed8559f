import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * What one connection may make the server hold. Node parses every request a read brings in and queues each answer in
 * memory until the client takes it: 20 connections pipelining 500 `GET /openapi.json` (235 KB each) and reading
 * nothing grew the process by gigabytes until V8 aborted. So a connection has at most `answers` requests handed to the
 * app at a time, and none while its socket holds more than its highWaterMark of unread answers (Node's own guard then
 * stops reading it, until the client reads); the requests parsed meanwhile wait their turn, in order, up to `waiting`,
 * past which the connection is closed. Unread answers that the client takes none of for `stalledMs` close it too.
 */
export interface ConnectionLimits {
  answers: number;
  waiting: number;
  stalledMs: number;
}

export const CONNECTION_LIMITS: ConnectionLimits = { answers: 8, waiting: 1000, stalledMs: 30_000 };

type Serve = (req: IncomingMessage, res: ServerResponse) => Promise<unknown>;

/** The server's request listener: each request is given to `serve` when its connection has room for its answer. */
export function connectionGate(serve: Serve, limits: ConnectionLimits) {
  const lines = new WeakMap<Socket, Line>();
  return (req: IncomingMessage, res: ServerResponse): void => {
    let line = lines.get(req.socket);
    if (!line) lines.set(req.socket, (line = new Line(req.socket, serve, limits)));
    line.take(req, res);
  };
}

/** One connection's requests, served in the order they came (Node writes pipelined answers in that order). */
class Line {
  private answering = 0;
  private readonly waiting: [IncomingMessage, ServerResponse][] = [];
  private stall: NodeJS.Timeout | null = null;
  /** Whether this gate stopped reading the socket (requests wait). */
  private stopped = false;

  constructor(
    private readonly socket: Socket,
    private readonly serve: Serve,
    private readonly limits: ConnectionLimits,
  ) {
    socket.on('drain', () => this.next());
    // Node reads again each time an answer is written: not while requests of the connection wait their turn.
    socket.on('resume', () => {
      if (this.waiting.length > 0) this.reading(false);
    });
    socket.once('close', () => {
      this.waiting.length = 0;
      if (this.stall) clearTimeout(this.stall);
    });
  }

  take(req: IncomingMessage, res: ServerResponse): void {
    if (this.waiting.length >= this.limits.waiting) return void this.socket.destroy();
    this.waiting.push([req, res]);
    this.next();
    if (this.waiting.length > 0) this.reading(false);
  }

  /** Stops or starts parsing the socket's requests (Node starts it too: whenever it writes an answer, or drains). */
  private reading(on: boolean): void {
    this.stopped = !on;
    const node = this.socket as Socket & { _paused: boolean; parser?: { pause(): void; resume(): void } | null };
    // The switch Node's own pipelining guard sets (`parserOnIncoming` in Node's http server), which it sets only once
    // answers are already written and waiting: too late for a read that brings hundreds of requests at once.
    node._paused = !on;
    if (on) {
      node.parser?.resume();
      this.socket.resume();
    } else {
      node.parser?.pause();
      this.socket.pause();
    }
  }

  private next(): void {
    while (
      this.waiting.length > 0 &&
      this.answering < this.limits.answers &&
      !this.socket.writableNeedDrain &&
      !this.socket.destroyed
    ) {
      const [req, res] = this.waiting.shift()!;
      this.answering++;
      res.once('close', () => {
        this.answering--;
        this.next();
      });
      void this.serve(req, res).finally(() => this.watch());
    }
    // Every request that waited is under way: the connection is read again.
    if (this.stopped && this.waiting.length === 0 && !this.socket.destroyed) this.reading(true);
    this.watch();
  }

  /** Bytes the kernel took from this socket so far: they grow while the client reads. */
  private taken(): number {
    return this.socket.bytesWritten - this.socket.writableLength;
  }

  /** While answers sit unread, checks every `stalledMs` that the client took some; one that took none is closed. */
  private watch(): void {
    if (this.stall || !this.socket.writableNeedDrain || this.socket.destroyed) return;
    const before = this.taken();
    this.stall = setTimeout(() => {
      this.stall = null;
      if (!this.socket.writableNeedDrain) return;
      if (this.taken() === before) return void this.socket.destroy();
      this.watch();
    }, this.limits.stalledMs);
    this.stall.unref();
  }
}
