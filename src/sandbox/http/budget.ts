import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { SandboxError } from '../../core/index.js';
import { DEFAULT_BUFFER_BUDGET } from '../runtime/defaults.js';
import { MIB } from './request-body.js';

/** How many connections `hang` rules may hold at once; the next one is answered at once (`heldConnectionsLimit`). */
export const HELD_CONNECTIONS = 64;

/** Answers that are large whatever the account holds: asked past the budget, they are refused like a body. */
const LARGE_ANSWERS = new Set(['/sandbox/v1/export', '/sandbox/v1/scenario', '/openapi.json']);

/** How the budget stands, as `/health` shows it. */
export interface BudgetView {
  /** Bytes held for clients now: answers not yet read by their sockets, and bodies of requests under way. */
  used: number;
  limit: number;
  /** Connections `hang` rules hold now, and at most. */
  heldConnections: number;
  heldConnectionsLimit: number;
}

/**
 * What the whole process holds for its clients, in bytes, and its bound (contract part 8, "Memory"): each socket's and
 * each waiting answer's unread bytes (Node's `writableLength`) and each request body under way (its Content-Length,
 * reserved when it is admitted, until its answer is done), so 100 slow connections are bounded as one. Past the limit a
 * request that would add to it (one with a body, a large answer, a `delay` or `hang` fault) is refused with 503; every
 * other request is served as usual. An import's body is bounded on its own (one at a time): not counted here.
 */
export class BufferBudget {
  private readonly sockets = new Set<Socket>();
  /** Answers under way: those waiting behind a pipelined one hold their bytes before they have a socket. */
  private readonly answers = new Set<ServerResponse>();
  private bodies = 0;
  /** Extra bytes held beside the answers (a `delay`ed answer), by whoever holds them. */
  private extra = 0;
  /** Connections held by `hang` rules, with how many of their requests hang. */
  private readonly held = new Map<Socket, number>();

  constructor(
    readonly limit: number = DEFAULT_BUFFER_BUDGET,
    readonly heldLimit: number = HELD_CONNECTIONS,
  ) {}

  /** A new connection: its unread answers count from now until it closes. */
  watch(socket: Socket): void {
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
  }

  used(): number {
    let bytes = this.bodies + this.extra;
    for (const socket of this.sockets) bytes += socket.writableLength;
    // An answer with a socket has its bytes there (counted above); one waiting its turn holds them itself.
    for (const res of this.answers) bytes += res.socket ? 0 : res.writableLength;
    return bytes;
  }

  /** Whether the budget is spent; `own`: bytes of the asking request's, already counted, left out. */
  over(own = 0): boolean {
    return this.used() - own >= this.limit;
  }

  /**
   * Lets a request in, counting its body until its answer is done; or the error it is refused with: past the budget,
   * a request that brings a body or asks for a large answer.
   */
  admit(req: IncomingMessage, res: ServerResponse): SandboxError | null {
    const body = hasBody(req);
    if ((body || LARGE_ANSWERS.has(pathOf(req.url))) && this.over()) return this.refusal();
    // A chunked body is reserved at the body limit of a request (an import's is bounded on its own).
    const reserved =
      body && pathOf(req.url) !== '/sandbox/v1/import' ? Number(req.headers['content-length'] ?? MIB) || 0 : 0;
    this.bodies += reserved;
    this.answers.add(res);
    res.once('close', () => {
      this.bodies -= reserved;
      this.answers.delete(res);
    });
    return null;
  }

  /** Counts `bytes` held beside the answers (a `delay`ed answer) until the function it returns is called. */
  hold(bytes: number): () => void {
    this.extra += bytes;
    let released = false;
    return () => {
      if (!released) this.extra -= bytes;
      released = true;
    };
  }

  /** Counts a connection as held by a `hang` rule until the function it returns is called; null past the cap. */
  holdConnection(socket: Socket): (() => void) | null {
    const hanging = this.held.get(socket) ?? 0;
    if (hanging === 0 && this.held.size >= this.heldLimit) return null;
    this.held.set(socket, hanging + 1);
    return () => {
      const left = (this.held.get(socket) ?? 1) - 1;
      if (left > 0) this.held.set(socket, left);
      else this.held.delete(socket);
    };
  }

  refusal(
    why = `the server holds ${mib(this.used())} MiB for slow clients, its budget is ${mib(this.limit)} MiB`,
  ): SandboxError {
    return new SandboxError('SERVICE_UNAVAILABLE', `Server busy: ${why}; retry later`, [
      '(request): over the buffer budget',
    ]);
  }

  view(): BudgetView {
    return {
      used: this.used(),
      limit: this.limit,
      heldConnections: this.held.size,
      heldConnectionsLimit: this.heldLimit,
    };
  }
}

/** Seconds a client is told to wait (`Retry-After`) when the budget refuses it. */
export const BUDGET_RETRY_AFTER = '1';

const mib = (bytes: number): string => (bytes / MIB).toFixed(1);

/** Whether a request brings a body: a Content-Length over 0, or chunks. */
export const hasBody = (req: IncomingMessage): boolean =>
  Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;

const pathOf = (url: string | undefined): string => (url ?? '/').split('?')[0]!;
