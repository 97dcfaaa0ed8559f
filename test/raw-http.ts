import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';

/** The resident memory of a process, in MiB (Linux). */
export const rssMiB = (pid: number): number =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

/** A connection that sends `text` and reads nothing (the socket is paused); the server closing it is no error. */
export function nonReader(port: number, text: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('error', reject);
    socket.once('connect', () => {
      socket.off('error', reject);
      socket.on('error', () => {});
      socket.pause();
      socket.write(text);
      resolve(socket);
    });
  });
}

/** What a plain HTTP client sees: an answer, or the error its connection ended with (no answer at all). */
type Outcome =
  | { status: number; headers: Record<string, string | string[] | undefined>; body: any; ms: number }
  | { error: string; ms: number };

/** One request over its own connection (no keep-alive), as an integration's HTTP client would make it. */
export function send(
  baseUrl: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
  signal?: AbortSignal,
): Promise<Outcome> {
  const started = performance.now();
  const ms = () => Math.round(performance.now() - started);
  const text = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve) => {
    const req = request(
      `${baseUrl}${path}`,
      {
        method,
        agent: false,
        signal,
        headers: {
          authorization: 'Bearer sk_faults',
          ...(text ? { 'content-type': 'application/json' } : {}),
          ...headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode!,
            headers: res.headers,
            body: JSON.parse(Buffer.concat(chunks).toString() || 'null'),
            ms: ms(),
          }),
        );
        res.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message, ms: ms() }));
      },
    );
    req.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message, ms: ms() }));
    req.end(text);
  });
}
