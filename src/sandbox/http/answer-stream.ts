import type { ServerResponse } from 'node:http';
import { giveWay } from '../runtime/give-way.js';
import { CONNECTION_LIMITS } from './backpressure.js';

/** About how much text a streamed answer reads from the store and writes at a time. */
const PIECE_CHARS = 64 * 1024;

/** Runs a read of the store where it sees only committed writes (`Store.committed`). */
type Read = <T>(read: () => T) => Promise<T>;

/**
 * Writes a JSON answer made a piece at a time (`pieces`, each read inside `read`), as fast as the client takes it: a
 * write its socket cannot take waits for the socket to drain (backpressure), so a client that reads slowly or not at
 * all makes the server hold one piece, not the answer. One that takes nothing for `stalledMs` is closed. What fails
 * before the first piece is thrown (the answer is still an envelope); after it, the connection is closed and `failed`
 * told.
 */
export async function streamAnswer(
  res: ServerResponse,
  read: Read,
  pieces: Iterator<string>,
  failed: (error: unknown) => void,
  stalledMs = CONNECTION_LIMITS.stalledMs,
): Promise<void> {
  let text = await read(() => take(pieces));
  res.writeHead(200, { 'content-type': 'application/json' });
  // While the socket takes every piece at once, other requests still get their turns.
  const pause = giveWay();
  try {
    while (text !== null) {
      if (!res.write(text) && !(await drained(res, stalledMs))) return void res.destroy();
      await pause();
      text = await read(() => take(pieces));
    }
    res.end();
  } catch (error) {
    res.destroy();
    failed(error);
  }
}

/** The next piece of text (several of `pieces` joined, about `PIECE_CHARS`), or null once there is none. */
function take(pieces: Iterator<string>): string | null {
  const parts: string[] = [];
  let size = 0;
  while (size < PIECE_CHARS) {
    const next = pieces.next();
    if (next.done) break;
    parts.push(next.value);
    size += next.value.length;
  }
  return parts.length === 0 ? null : parts.join('');
}

/** Resolves true once the socket drained; false if the client went away, or took none of it for `stalledMs`. */
function drained(res: ServerResponse, stalledMs: number): Promise<boolean> {
  const socket = res.socket;
  // Bytes the kernel took from the socket so far: they grow while the client reads.
  const taken = () => (socket ? socket.bytesWritten - socket.writableLength : 0);
  return new Promise((resolve) => {
    let before = taken();
    const watch = (): NodeJS.Timeout =>
      setTimeout(() => {
        if (taken() === before) return onClose();
        before = taken();
        timer = watch();
      }, stalledMs);
    let timer = watch();
    const done = (ok: boolean) => () => {
      clearTimeout(timer);
      res.off('drain', onDrain);
      res.off('close', onClose);
      resolve(ok);
    };
    const onDrain = done(true);
    const onClose = done(false);
    res.once('drain', onDrain);
    res.once('close', onClose);
  });
}
