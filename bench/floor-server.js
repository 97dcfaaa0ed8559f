// The bench's SQLite floor: bench/bare-server.js plus node:sqlite storing each create as the least a store can: the
// payment's row and its `created` event's row, each table with a unique (account, id) index and one lookup index
// beside its rowid, the writes of one turn of the event loop in one transaction committed before any of the turn's
// answers is sent (group commit, as va-sandbox does). `node bench/floor-server.js PORT FILE`.
import { randomUUID } from 'node:crypto';
import { DatabaseSync } from 'node:sqlite';
import { answerServer } from './bare-server.js';

const [port, file] = process.argv.slice(2);
const db = new DatabaseSync(file);
db.exec(`
  PRAGMA journal_mode = WAL;
  PRAGMA synchronous = NORMAL;
  CREATE TABLE va_payments (account INTEGER NOT NULL, id TEXT NOT NULL, status TEXT NOT NULL, record TEXT NOT NULL);
  CREATE UNIQUE INDEX va_payments_by_id ON va_payments (account, id);
  CREATE INDEX va_payments_by_status ON va_payments (account, status);
  CREATE TABLE events (account INTEGER NOT NULL, id TEXT NOT NULL, va_payment_id TEXT NOT NULL, record TEXT NOT NULL);
  CREATE UNIQUE INDEX events_by_id ON events (account, id);
  CREATE INDEX events_by_payment ON events (account, va_payment_id);
`);
const putPayment = db.prepare('INSERT INTO va_payments (account, id, status, record) VALUES (1, ?, ?, ?)');
const putEvent = db.prepare('INSERT INTO events (account, id, va_payment_id, record) VALUES (1, ?, ?, ?)');

/** The answers waiting for the open transaction to commit; null when none is open. */
let waiting = null;

answerServer(Number(port), (data, send) => {
  if (waiting === null) {
    waiting = [];
    db.exec('BEGIN');
    setImmediate(() => {
      db.exec('COMMIT');
      const sends = waiting;
      waiting = null;
      for (const answer of sends) answer();
    });
  }
  putPayment.run(data.id, data.status, JSON.stringify(data));
  putEvent.run(
    randomUUID(),
    data.id,
    JSON.stringify({ eventType: 'created', vaPaymentId: data.id, createdAt: data.createdAt, data }),
  );
  waiting.push(send);
});
