-- Schema version 1 (released): accounts keyed by their API key, each record a row of JSON in its table, in the order
-- made (seq). A released migration never changes: a change to the schema is a new file.
CREATE TABLE accounts (
       key TEXT PRIMARY KEY,
       head TEXT NOT NULL,
       due_at INTEGER,
       sending INTEGER NOT NULL DEFAULT 0
     ) WITHOUT ROWID;
CREATE INDEX accounts_by_due_at ON accounts (due_at) WHERE due_at IS NOT NULL;
CREATE INDEX accounts_sending ON accounts (sending) WHERE sending;
CREATE TABLE hubs (seq INTEGER PRIMARY KEY, account TEXT NOT NULL, id TEXT NOT NULL, data TEXT NOT NULL);
CREATE UNIQUE INDEX hubs_by_id ON hubs (account, id);
CREATE TABLE pool_cvus (seq INTEGER PRIMARY KEY, account TEXT NOT NULL, id TEXT NOT NULL, data TEXT NOT NULL);
CREATE UNIQUE INDEX pool_cvus_by_id ON pool_cvus (account, id);
CREATE TABLE va_payments (seq INTEGER PRIMARY KEY, account TEXT NOT NULL, id TEXT NOT NULL, data TEXT NOT NULL);
CREATE UNIQUE INDEX va_payments_by_id ON va_payments (account, id);
CREATE TABLE transfers (seq INTEGER PRIMARY KEY, account TEXT NOT NULL, id TEXT NOT NULL, data TEXT NOT NULL);
CREATE UNIQUE INDEX transfers_by_id ON transfers (account, id);
CREATE TABLE events (seq INTEGER PRIMARY KEY, account TEXT NOT NULL, id TEXT NOT NULL, data TEXT NOT NULL);
CREATE UNIQUE INDEX events_by_id ON events (account, id);
CREATE TABLE deliveries (seq INTEGER PRIMARY KEY, account TEXT NOT NULL, id TEXT NOT NULL, data TEXT NOT NULL);
CREATE UNIQUE INDEX deliveries_by_id ON deliveries (account, id);
CREATE TABLE idempotency_keys (seq INTEGER PRIMARY KEY, account TEXT NOT NULL, id TEXT NOT NULL, data TEXT NOT NULL);
CREATE UNIQUE INDEX idempotency_keys_by_id ON idempotency_keys (account, id);
CREATE TABLE clients (seq INTEGER PRIMARY KEY, account TEXT NOT NULL, id TEXT NOT NULL, data TEXT NOT NULL);
CREATE UNIQUE INDEX clients_by_id ON clients (account, id);
CREATE TABLE ledger_entries (seq INTEGER PRIMARY KEY, account TEXT NOT NULL, id TEXT NOT NULL, data TEXT NOT NULL);
CREATE UNIQUE INDEX ledger_entries_by_id ON ledger_entries (account, id);
CREATE TABLE invoices (seq INTEGER PRIMARY KEY, account TEXT NOT NULL, id TEXT NOT NULL, data TEXT NOT NULL);
CREATE UNIQUE INDEX invoices_by_id ON invoices (account, id);
