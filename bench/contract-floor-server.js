// The bench's contract floor: the least a server can do and still do what the contract asks of a create, for the
// same-run ratios of bench/floor-ratio.js (issue 48). bench/bare-server.js's node:http answer, plus: the body checked
// against a JSON schema (ajv, compiled once); a new pool CVU and alias checked unused (two indexed lookups); the
// payment, its pool CVU, its `created` event and that event's delivery written as JSON rows with a CRC-32 each
// (node:zlib), every table with a unique (account, id) index and one lookup index; the writes of one turn of the
// event loop in one transaction, committed with the account's wake time updated before any of its answers is sent
// (group commit, as va-sandbox does). `node bench/contract-floor-server.js PORT FILE`.
import { randomInt, randomUUID } from 'node:crypto';
import { DatabaseSync } from 'node:sqlite';
import { crc32 } from 'node:zlib';
import Ajv from 'ajv';
import { answerServer } from './bare-server.js';

const [port, file] = process.argv.slice(2);
const db = new DatabaseSync(file);
const table = (name, column) => `
  CREATE TABLE ${name} (seq INTEGER PRIMARY KEY, account INTEGER NOT NULL, id TEXT NOT NULL, data TEXT NOT NULL, crc INTEGER NOT NULL, ${column} TEXT);
  CREATE UNIQUE INDEX ${name}_by_id ON ${name} (account, id);
  CREATE INDEX ${name}_by_${column} ON ${name} (account, ${column}) WHERE ${column} IS NOT NULL;`;
db.exec(`
  PRAGMA journal_mode = WAL;
  PRAGMA synchronous = NORMAL;
  CREATE TABLE accounts (id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, due_at INTEGER);
  INSERT INTO accounts (id, key) VALUES (1, 'sk_bench');
  ${table('va_payments', 'status')}
  ${table('pool_cvus', 'alias')}
  ${table('events', 'source')}
  ${table('deliveries', 'status')}
`);
const insert = (name, column) =>
  db.prepare(`INSERT INTO ${name} (account, id, data, crc, ${column}) VALUES (1, ?, ?, ?, ?)`);
const put = {
  payment: insert('va_payments', 'status'),
  pool: insert('pool_cvus', 'alias'),
  event: insert('events', 'source'),
  delivery: insert('deliveries', 'status'),
};
const taken = {
  cvu: db.prepare('SELECT 1 FROM pool_cvus WHERE account = 1 AND id = ?'),
  alias: db.prepare('SELECT 1 FROM pool_cvus WHERE account = 1 AND alias = ?'),
};
const wake = db.prepare('UPDATE accounts SET due_at = ? WHERE id = 1');

/** The create's body as the contract has it (part 2.1): hub, currency, lock mode, amount, the optional fields. */
const valid = new Ajv().compile({
  type: 'object',
  required: ['paymentHubId', 'currency', 'lockMode'],
  additionalProperties: false,
  properties: {
    paymentHubId: { type: 'integer', minimum: 1 },
    currency: { enum: ['ARS'] },
    lockMode: { enum: ['time', 'amount', 'amount_and_time'] },
    amount: { type: 'integer', minimum: 1 },
    ttlSeconds: { type: 'integer', minimum: 60, maximum: 28800 },
    externalReference: { type: 'string', maxLength: 255 },
    callbackUrl: { type: 'string', maxLength: 2048 },
    clientTaxId: { type: 'string', maxLength: 64 },
    metadata: { type: 'object' },
  },
});

const row = (statement, id, record, column) => {
  const text = JSON.stringify(record);
  statement.run(id, text, crc32(text), column);
};
const digits = (n) => Array.from({ length: n }, () => randomInt(10)).join('');

/** The answers waiting for the open transaction to commit; null when none is open. */
let waiting = null;
let dueAt = 0;

answerServer(
  Number(port),
  (data, send) => {
    if (waiting === null) {
      waiting = [];
      db.exec('BEGIN');
      setImmediate(() => {
        wake.run(dueAt);
        db.exec('COMMIT');
        const sends = waiting;
        waiting = null;
        for (const answer of sends) answer();
      });
    }
    let cvu;
    let alias;
    do {
      cvu = `00045800${digits(14)}`;
      alias = `POOL.${digits(6)}.${digits(4)}`;
    } while (taken.cvu.get(cvu) || taken.alias.get(alias));
    Object.assign(data, { cvu, alias, paymentInstructions: { ...data.paymentInstructions, cvu, alias } });
    const event = {
      id: randomUUID(),
      eventType: 'created',
      vaPaymentId: data.id,
      createdAt: data.createdAt,
      body: data,
    };
    row(put.payment, data.id, data, data.status);
    row(put.pool, cvu, { cvu, alias, vaPaymentId: data.id, releasedAt: null }, alias);
    row(put.event, event.id, event, data.id);
    row(put.delivery, randomUUID(), { eventId: event.id, url: data.callbackUrl ?? null, attempts: [] }, 'dropped');
    dueAt = Math.max(dueAt, Date.parse(data.expiresAt));
    waiting.push(send);
  },
  valid,
);
