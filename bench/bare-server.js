// The bench's bare ceiling: a node:http server that reads each POST's body, parses it and answers 201 with a JSON
// envelope about the size of va-sandbox's create answer (~1 KB), built per request (a new id, the time). No routing,
// checks, storage or keys: only what any Node server must do per request. `node bench/bare-server.js PORT`; GET
// answers 200 (the bench's readiness check). bench/floor-server.js is this server storing each create in SQLite.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { pathToFileURL } from 'node:url';

/** Fields of a VA payment's view that the request does not carry, so the answer weighs what ours does. */
const REST = {
  status: 'waiting',
  lockMode: 'time',
  ttlSeconds: 1800,
  cvu: '0004580113792485363739',
  alias: 'TANGO.NUBE.LUNA',
  paymentInstructions: {
    cvu: '0004580113792485363739',
    alias: 'TANGO.NUBE.LUNA',
    holderName: 'Sandbox Payments S.A.',
    bankName: 'Banco Sandbox',
    currency: 'ARS',
  },
  clientId: null,
  clientTaxId: null,
  clientName: null,
  callbackUrl: null,
  successUrl: null,
  failureUrl: null,
  totalReceived: 0,
  receivedAmount: 0,
  cashIns: [],
  callbackDelivery: {
    events: 1,
    delivered: 0,
    pending: 0,
    retrying: 0,
    failed: 0,
    dropped: 1,
    lastEventType: 'created',
    lastAttemptAt: null,
  },
  completedAt: null,
  cancelledAt: null,
  expiredAt: null,
};

/**
 * Listens on `port`; each POST's answer is built, handed to `keep(data, send)` (the view, and the function that sends
 * the answer), which sends it when it has stored it. The bare server keeps nothing. `valid(body)`, when given, checks
 * the parsed body first: false answers 422.
 */
export function answerServer(port, keep = (_data, send) => send(), valid = () => true) {
  createServer((req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method !== 'POST')
        return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
      let body;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return void res.writeHead(400).end();
      }
      if (!valid(body)) return void res.writeHead(422).end();
      const now = new Date();
      const at = now.toISOString();
      const expiresAt = new Date(now.getTime() + 1_800_000).toISOString();
      const data = {
        id: randomUUID(),
        ...REST,
        ...body,
        expiresAt,
        remainingAmount: body.amount,
        createdAt: at,
        updatedAt: at,
      };
      keep(data, () => {
        const text = JSON.stringify({ success: true, data, timestamp: at });
        res.writeHead(201, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
      });
    });
  }).listen(port, '127.0.0.1');
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) answerServer(Number(process.argv[2]));
