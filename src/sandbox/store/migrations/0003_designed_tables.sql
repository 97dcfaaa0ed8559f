-- Schema version 3: the tables designed for their queries.
-- Every record row (and an account's head) keeps `crc`, the CRC-32 of its stored text (`crc32`, the store's function:
-- node:zlib's), checked whenever the row is read, so a record changed on disk is never served.
-- Each table is made again with only the columns something looks up, filters or lists by, its rows copied in the
-- order their records were made (by `created_at`, then as written): an account's records are written in the order
-- made, so `seq` is that order and every list goes by it. Each lookup's index is `(account, column)`: it ends with
-- the rowid, so the records of one value are in the order made too. A table listed whole has `<table>_by_account`.
-- A delivery's attempts are a row each: an attempt appends one rather than rewriting the delivery with its history;
-- the delivery's row keeps `attempts: []` in their place, and how many are stored.
ALTER TABLE accounts ADD COLUMN crc INTEGER NOT NULL DEFAULT 0;
UPDATE accounts SET crc = crc32(head);
CREATE TABLE delivery_attempts (account INTEGER NOT NULL, delivery TEXT NOT NULL, n INTEGER NOT NULL, data TEXT NOT NULL, crc INTEGER NOT NULL, PRIMARY KEY (account, delivery, n)) WITHOUT ROWID;
ALTER TABLE hubs RENAME TO v2_hubs;
CREATE TABLE hubs (seq INTEGER PRIMARY KEY, account INTEGER NOT NULL, id TEXT NOT NULL, data TEXT NOT NULL, crc INTEGER NOT NULL, cvu TEXT, alias TEXT);
INSERT INTO hubs (account, id, data, crc, cvu, alias)
  SELECT account, id, data, crc32(data), cvu, alias FROM v2_hubs ORDER BY account, seq;
DROP TABLE v2_hubs;
CREATE UNIQUE INDEX hubs_by_id ON hubs (account, id);
CREATE INDEX hubs_by_cvu ON hubs (account, cvu) WHERE cvu IS NOT NULL;
CREATE INDEX hubs_by_alias ON hubs (account, alias) WHERE alias IS NOT NULL;
CREATE TRIGGER hubs_counted_insert AFTER INSERT ON hubs BEGIN INSERT INTO counts SELECT NEW.account, 'hubs', 1 WHERE 'hubs' IS NOT NULL ON CONFLICT DO UPDATE SET n = n + 1; END;
CREATE TRIGGER hubs_counted_delete AFTER DELETE ON hubs BEGIN UPDATE counts SET n = n - 1 WHERE account = OLD.account AND list = 'hubs'; END;
ALTER TABLE pool_cvus RENAME TO v2_pool_cvus;
CREATE TABLE pool_cvus (seq INTEGER PRIMARY KEY, account INTEGER NOT NULL, id TEXT NOT NULL, data TEXT NOT NULL, crc INTEGER NOT NULL, alias TEXT, free TEXT);
INSERT INTO pool_cvus (account, id, data, crc, alias, free)
  SELECT account, id, data, crc32(data), alias, free FROM v2_pool_cvus ORDER BY account, seq;
DROP TABLE v2_pool_cvus;
CREATE UNIQUE INDEX pool_cvus_by_id ON pool_cvus (account, id);
CREATE INDEX pool_cvus_by_alias ON pool_cvus (account, alias) WHERE alias IS NOT NULL;
CREATE INDEX pool_cvus_by_free ON pool_cvus (account, free) WHERE free IS NOT NULL;
CREATE TRIGGER pool_cvus_counted_insert AFTER INSERT ON pool_cvus BEGIN INSERT INTO counts SELECT NEW.account, 'pool_cvus', 1 WHERE 'pool_cvus' IS NOT NULL ON CONFLICT DO UPDATE SET n = n + 1; END;
CREATE TRIGGER pool_cvus_counted_delete AFTER DELETE ON pool_cvus BEGIN UPDATE counts SET n = n - 1 WHERE account = OLD.account AND list = 'pool_cvus'; END;
ALTER TABLE va_payments RENAME TO v2_va_payments;
CREATE TABLE va_payments (seq INTEGER PRIMARY KEY, account INTEGER NOT NULL, id TEXT NOT NULL, data TEXT NOT NULL, crc INTEGER NOT NULL, created_at INTEGER, status TEXT, client_id TEXT, client_tax_id TEXT, external_reference TEXT, amount_lock TEXT, due_at INTEGER);
INSERT INTO va_payments (account, id, data, crc, created_at, status, client_id, client_tax_id, external_reference, amount_lock, due_at)
  SELECT account, id, data, crc32(data), created_at, status, client_id, client_tax_id, external_reference, amount_lock, due_at FROM v2_va_payments ORDER BY account, created_at, seq;
DROP TABLE v2_va_payments;
CREATE UNIQUE INDEX va_payments_by_id ON va_payments (account, id);
CREATE INDEX va_payments_by_account ON va_payments (account);
CREATE INDEX va_payments_by_created_at ON va_payments (account, created_at) WHERE created_at IS NOT NULL;
CREATE INDEX va_payments_by_status ON va_payments (account, status) WHERE status IS NOT NULL;
CREATE INDEX va_payments_by_client_id ON va_payments (account, client_id) WHERE client_id IS NOT NULL;
CREATE INDEX va_payments_by_client_tax_id ON va_payments (account, client_tax_id) WHERE client_tax_id IS NOT NULL;
CREATE INDEX va_payments_by_external_reference ON va_payments (account, external_reference) WHERE external_reference IS NOT NULL;
CREATE INDEX va_payments_by_amount_lock ON va_payments (account, amount_lock) WHERE amount_lock IS NOT NULL;
CREATE INDEX va_payments_by_due_at ON va_payments (account, due_at) WHERE due_at IS NOT NULL;
CREATE TRIGGER va_payments_counted_insert AFTER INSERT ON va_payments BEGIN INSERT INTO counts SELECT NEW.account, 'va_payments', 1 WHERE 'va_payments' IS NOT NULL ON CONFLICT DO UPDATE SET n = n + 1; INSERT INTO counts SELECT NEW.account, 'va_payments.status=' || NEW.status, 1 WHERE 'va_payments.status=' || NEW.status IS NOT NULL ON CONFLICT DO UPDATE SET n = n + 1; END;
CREATE TRIGGER va_payments_counted_delete AFTER DELETE ON va_payments BEGIN UPDATE counts SET n = n - 1 WHERE account = OLD.account AND list = 'va_payments'; UPDATE counts SET n = n - 1 WHERE account = OLD.account AND list = 'va_payments.status=' || OLD.status; END;
CREATE TRIGGER va_payments_counted_status AFTER UPDATE OF status ON va_payments WHEN OLD.status IS NOT NEW.status BEGIN UPDATE counts SET n = n - 1 WHERE account = OLD.account AND list = 'va_payments.status=' || OLD.status; INSERT INTO counts SELECT NEW.account, 'va_payments.status=' || NEW.status, 1 WHERE 'va_payments.status=' || NEW.status IS NOT NULL ON CONFLICT DO UPDATE SET n = n + 1; END;
ALTER TABLE transfers RENAME TO v2_transfers;
CREATE TABLE transfers (seq INTEGER PRIMARY KEY, account INTEGER NOT NULL, id TEXT NOT NULL, data TEXT NOT NULL, crc INTEGER NOT NULL, target TEXT, returned_at INTEGER);
INSERT INTO transfers (account, id, data, crc, target, returned_at)
  SELECT account, id, data, crc32(data), target, returned_at FROM v2_transfers ORDER BY account, created_at, seq;
DROP TABLE v2_transfers;
CREATE UNIQUE INDEX transfers_by_id ON transfers (account, id);
CREATE INDEX transfers_by_account ON transfers (account);
CREATE INDEX transfers_by_target ON transfers (account, target) WHERE target IS NOT NULL;
CREATE INDEX transfers_by_returned_at ON transfers (account, returned_at) WHERE returned_at IS NOT NULL;
CREATE TRIGGER transfers_counted_insert AFTER INSERT ON transfers BEGIN INSERT INTO counts SELECT NEW.account, 'transfers', 1 WHERE 'transfers' IS NOT NULL ON CONFLICT DO UPDATE SET n = n + 1; END;
CREATE TRIGGER transfers_counted_delete AFTER DELETE ON transfers BEGIN UPDATE counts SET n = n - 1 WHERE account = OLD.account AND list = 'transfers'; END;
ALTER TABLE events RENAME TO v2_events;
CREATE TABLE events (seq INTEGER PRIMARY KEY, account INTEGER NOT NULL, id TEXT NOT NULL, data TEXT NOT NULL, crc INTEGER NOT NULL, source TEXT, dropped TEXT);
INSERT INTO events (account, id, data, crc, source, dropped)
  SELECT account, id, data, crc32(data), source, dropped FROM v2_events ORDER BY account, created_at, seq;
DROP TABLE v2_events;
CREATE UNIQUE INDEX events_by_id ON events (account, id);
CREATE INDEX events_by_account ON events (account);
CREATE INDEX events_by_source ON events (account, source) WHERE source IS NOT NULL;
CREATE INDEX events_by_dropped ON events (account, dropped) WHERE dropped IS NOT NULL;
CREATE TRIGGER events_counted_insert AFTER INSERT ON events BEGIN INSERT INTO counts SELECT NEW.account, 'events', 1 WHERE 'events' IS NOT NULL ON CONFLICT DO UPDATE SET n = n + 1; INSERT INTO counts SELECT NEW.account, 'events.dropped=' || NEW.dropped, 1 WHERE 'events.dropped=' || NEW.dropped IS NOT NULL ON CONFLICT DO UPDATE SET n = n + 1; END;
CREATE TRIGGER events_counted_delete AFTER DELETE ON events BEGIN UPDATE counts SET n = n - 1 WHERE account = OLD.account AND list = 'events'; UPDATE counts SET n = n - 1 WHERE account = OLD.account AND list = 'events.dropped=' || OLD.dropped; END;
CREATE TRIGGER events_counted_dropped AFTER UPDATE OF dropped ON events WHEN OLD.dropped IS NOT NEW.dropped BEGIN UPDATE counts SET n = n - 1 WHERE account = OLD.account AND list = 'events.dropped=' || OLD.dropped; INSERT INTO counts SELECT NEW.account, 'events.dropped=' || NEW.dropped, 1 WHERE 'events.dropped=' || NEW.dropped IS NOT NULL ON CONFLICT DO UPDATE SET n = n + 1; END;
ALTER TABLE deliveries RENAME TO v2_deliveries;
CREATE TABLE deliveries (seq INTEGER PRIMARY KEY, account INTEGER NOT NULL, id TEXT NOT NULL, data TEXT NOT NULL, crc INTEGER NOT NULL, event_id TEXT, status TEXT, event_type TEXT, pending_at INTEGER, retry_at INTEGER, attempts INTEGER NOT NULL DEFAULT 0);
INSERT INTO delivery_attempts (account, delivery, n, data, crc)
  SELECT d.account, d.id, a.key, a.value, crc32(a.value) FROM v2_deliveries AS d, json_each(d.data, '$.attempts') AS a ORDER BY d.seq, a.key;
INSERT INTO deliveries (account, id, data, crc, event_id, status, event_type, pending_at, retry_at, attempts)
  SELECT account, id, json_set(data, '$.attempts', json('[]')), crc32(json_set(data, '$.attempts', json('[]'))), event_id, status, event_type, pending_at, retry_at, json_array_length(data, '$.attempts') FROM v2_deliveries ORDER BY account, created_at, seq;
DROP TABLE v2_deliveries;
CREATE UNIQUE INDEX deliveries_by_id ON deliveries (account, id);
CREATE INDEX deliveries_by_account ON deliveries (account);
CREATE INDEX deliveries_by_event_id ON deliveries (account, event_id) WHERE event_id IS NOT NULL;
CREATE INDEX deliveries_by_status ON deliveries (account, status) WHERE status IS NOT NULL;
CREATE INDEX deliveries_by_event_type ON deliveries (account, event_type) WHERE event_type IS NOT NULL;
CREATE INDEX deliveries_by_pending_at ON deliveries (account, pending_at) WHERE pending_at IS NOT NULL;
CREATE INDEX deliveries_by_retry_at ON deliveries (account, retry_at) WHERE retry_at IS NOT NULL;
CREATE TRIGGER deliveries_counted_insert AFTER INSERT ON deliveries BEGIN INSERT INTO counts SELECT NEW.account, 'deliveries', 1 WHERE 'deliveries' IS NOT NULL ON CONFLICT DO UPDATE SET n = n + 1; INSERT INTO counts SELECT NEW.account, 'deliveries.status=' || NEW.status, 1 WHERE 'deliveries.status=' || NEW.status IS NOT NULL ON CONFLICT DO UPDATE SET n = n + 1; INSERT INTO counts SELECT NEW.account, 'deliveries.event_type=' || NEW.event_type, 1 WHERE 'deliveries.event_type=' || NEW.event_type IS NOT NULL ON CONFLICT DO UPDATE SET n = n + 1; END;
CREATE TRIGGER deliveries_counted_delete AFTER DELETE ON deliveries BEGIN UPDATE counts SET n = n - 1 WHERE account = OLD.account AND list = 'deliveries'; UPDATE counts SET n = n - 1 WHERE account = OLD.account AND list = 'deliveries.status=' || OLD.status; UPDATE counts SET n = n - 1 WHERE account = OLD.account AND list = 'deliveries.event_type=' || OLD.event_type; END;
CREATE TRIGGER deliveries_counted_status AFTER UPDATE OF status ON deliveries WHEN OLD.status IS NOT NEW.status BEGIN UPDATE counts SET n = n - 1 WHERE account = OLD.account AND list = 'deliveries.status=' || OLD.status; INSERT INTO counts SELECT NEW.account, 'deliveries.status=' || NEW.status, 1 WHERE 'deliveries.status=' || NEW.status IS NOT NULL ON CONFLICT DO UPDATE SET n = n + 1; END;
CREATE TRIGGER deliveries_counted_event_type AFTER UPDATE OF event_type ON deliveries WHEN OLD.event_type IS NOT NEW.event_type BEGIN UPDATE counts SET n = n - 1 WHERE account = OLD.account AND list = 'deliveries.event_type=' || OLD.event_type; INSERT INTO counts SELECT NEW.account, 'deliveries.event_type=' || NEW.event_type, 1 WHERE 'deliveries.event_type=' || NEW.event_type IS NOT NULL ON CONFLICT DO UPDATE SET n = n + 1; END;
CREATE TRIGGER delivery_attempts_dropped AFTER DELETE ON deliveries BEGIN DELETE FROM delivery_attempts WHERE account = OLD.account AND delivery = OLD.id; END;
ALTER TABLE idempotency_keys RENAME TO v2_idempotency_keys;
CREATE TABLE idempotency_keys (seq INTEGER PRIMARY KEY, account INTEGER NOT NULL, id TEXT NOT NULL, data TEXT NOT NULL, crc INTEGER NOT NULL, due_at INTEGER);
INSERT INTO idempotency_keys (account, id, data, crc, due_at)
  SELECT account, id, data, crc32(data), due_at FROM v2_idempotency_keys ORDER BY account, created_at, seq;
DROP TABLE v2_idempotency_keys;
CREATE UNIQUE INDEX idempotency_keys_by_id ON idempotency_keys (account, id);
CREATE INDEX idempotency_keys_by_due_at ON idempotency_keys (account, due_at) WHERE due_at IS NOT NULL;
CREATE TRIGGER idempotency_keys_counted_insert AFTER INSERT ON idempotency_keys BEGIN INSERT INTO counts SELECT NEW.account, 'idempotency_keys', 1 WHERE 'idempotency_keys' IS NOT NULL ON CONFLICT DO UPDATE SET n = n + 1; END;
CREATE TRIGGER idempotency_keys_counted_delete AFTER DELETE ON idempotency_keys BEGIN UPDATE counts SET n = n - 1 WHERE account = OLD.account AND list = 'idempotency_keys'; END;
ALTER TABLE clients RENAME TO v2_clients;
CREATE TABLE clients (seq INTEGER PRIMARY KEY, account INTEGER NOT NULL, id TEXT NOT NULL, data TEXT NOT NULL, crc INTEGER NOT NULL, tax_id TEXT, external_reference TEXT, cvu TEXT, alias TEXT, cvu_ready_at INTEGER);
INSERT INTO clients (account, id, data, crc, tax_id, external_reference, cvu, alias, cvu_ready_at)
  SELECT account, id, data, crc32(data), tax_id, external_reference, cvu, alias, cvu_ready_at FROM v2_clients ORDER BY account, created_at, seq;
DROP TABLE v2_clients;
CREATE UNIQUE INDEX clients_by_id ON clients (account, id);
CREATE INDEX clients_by_account ON clients (account);
CREATE INDEX clients_by_tax_id ON clients (account, tax_id) WHERE tax_id IS NOT NULL;
CREATE INDEX clients_by_external_reference ON clients (account, external_reference) WHERE external_reference IS NOT NULL;
CREATE INDEX clients_by_cvu ON clients (account, cvu) WHERE cvu IS NOT NULL;
CREATE INDEX clients_by_alias ON clients (account, alias) WHERE alias IS NOT NULL;
CREATE INDEX clients_by_cvu_ready_at ON clients (account, cvu_ready_at) WHERE cvu_ready_at IS NOT NULL;
CREATE TRIGGER clients_counted_insert AFTER INSERT ON clients BEGIN INSERT INTO counts SELECT NEW.account, 'clients', 1 WHERE 'clients' IS NOT NULL ON CONFLICT DO UPDATE SET n = n + 1; END;
CREATE TRIGGER clients_counted_delete AFTER DELETE ON clients BEGIN UPDATE counts SET n = n - 1 WHERE account = OLD.account AND list = 'clients'; END;
ALTER TABLE ledger_entries RENAME TO v2_ledger_entries;
CREATE TABLE ledger_entries (seq INTEGER PRIMARY KEY, account INTEGER NOT NULL, id TEXT NOT NULL, data TEXT NOT NULL, crc INTEGER NOT NULL, created_at INTEGER, client_id TEXT, entry_type TEXT, operation TEXT, reversal TEXT);
INSERT INTO ledger_entries (account, id, data, crc, created_at, client_id, entry_type, operation, reversal)
  SELECT account, id, data, crc32(data), created_at, client_id, entry_type, operation, reversal FROM v2_ledger_entries ORDER BY account, created_at, seq;
DROP TABLE v2_ledger_entries;
CREATE UNIQUE INDEX ledger_entries_by_id ON ledger_entries (account, id);
CREATE INDEX ledger_entries_by_client_id ON ledger_entries (account, client_id) WHERE client_id IS NOT NULL;
CREATE INDEX ledger_entries_by_entry_type ON ledger_entries (account, entry_type) WHERE entry_type IS NOT NULL;
CREATE INDEX ledger_entries_by_operation ON ledger_entries (account, operation) WHERE operation IS NOT NULL;
CREATE INDEX ledger_entries_by_reversal ON ledger_entries (account, reversal) WHERE reversal IS NOT NULL;
CREATE TRIGGER ledger_entries_counted_insert AFTER INSERT ON ledger_entries BEGIN INSERT INTO counts SELECT NEW.account, 'ledger_entries', 1 WHERE 'ledger_entries' IS NOT NULL ON CONFLICT DO UPDATE SET n = n + 1; END;
CREATE TRIGGER ledger_entries_counted_delete AFTER DELETE ON ledger_entries BEGIN UPDATE counts SET n = n - 1 WHERE account = OLD.account AND list = 'ledger_entries'; END;
ALTER TABLE invoices RENAME TO v2_invoices;
CREATE TABLE invoices (seq INTEGER PRIMARY KEY, account INTEGER NOT NULL, id TEXT NOT NULL, data TEXT NOT NULL, crc INTEGER NOT NULL, client_id TEXT, number TEXT, sequence TEXT);
INSERT INTO invoices (account, id, data, crc, client_id, number, sequence)
  SELECT account, id, data, crc32(data), client_id, number, sequence FROM v2_invoices ORDER BY account, created_at, seq;
DROP TABLE v2_invoices;
CREATE UNIQUE INDEX invoices_by_id ON invoices (account, id);
CREATE INDEX invoices_by_client_id ON invoices (account, client_id) WHERE client_id IS NOT NULL;
CREATE INDEX invoices_by_number ON invoices (account, number) WHERE number IS NOT NULL;
CREATE INDEX invoices_by_sequence ON invoices (account, sequence) WHERE sequence IS NOT NULL;
CREATE TRIGGER invoices_counted_insert AFTER INSERT ON invoices BEGIN INSERT INTO counts SELECT NEW.account, 'invoices', 1 WHERE 'invoices' IS NOT NULL ON CONFLICT DO UPDATE SET n = n + 1; END;
CREATE TRIGGER invoices_counted_delete AFTER DELETE ON invoices BEGIN UPDATE counts SET n = n - 1 WHERE account = OLD.account AND list = 'invoices'; END;
