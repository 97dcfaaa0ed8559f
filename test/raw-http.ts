import { request } from 'node:http';

/** What a plain HTTP client sees: an answer, or the error its connection ended with (no answer at all). */
type Outcome = { status: number; headers: Record<string, string | string[] | undefined>; body: any; ms: number } | { error: string; ms: number };

/** One request over its own connection (no keep-alive), as an integration's HTTP client would make it. */
export function send(baseUrl: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}, signal?: AbortSignal): Promise<Outcome> {
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
        headers: { authorization: 'Bearer sk_faults', ...(text ? { 'content-type': 'application/json' } : {}), ...headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: JSON.parse(Buffer.concat(chunks).toString() || 'null'), ms: ms() }));
        res.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message, ms: ms() }));
      },
    );
    req.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message, ms: ms() }));
    req.end(text);
  });
}
