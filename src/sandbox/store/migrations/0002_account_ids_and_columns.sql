-- Schema version 2 (released): accounts by an id of their own (each row and index holds it rather than the key), each
-- record's lookup columns beside its JSON, indexed, and the counts of lists kept by triggers. Version 1's rows are
-- copied, their columns computed from the JSON; version 1's tables are dropped. A released migration never changes.
-- (Each record's JSON loses the id kept beside it; an account's wake is computed again at its next write.)
DROP INDEX IF EXISTS hubs_by_id;
DROP INDEX IF EXISTS pool_cvus_by_id;
DROP INDEX IF EXISTS va_payments_by_id;
DROP INDEX IF EXISTS transfers_by_id;
DROP INDEX IF EXISTS events_by_id;
DROP INDEX IF EXISTS deliveries_by_id;
DROP INDEX IF EXISTS idempotency_keys_by_id;
DROP INDEX IF EXISTS clients_by_id;
DROP INDEX IF EXISTS ledger_entries_by_id;
DROP INDEX IF EXISTS invoices_by_id;
DROP INDEX IF EXISTS accounts_by_due_at;
DROP INDEX IF EXISTS accounts_sending;
ALTER TABLE accounts RENAME TO v1_accounts;
ALTER TABLE hubs RENAME TO v1_hubs;
ALTER TABLE pool_cvus RENAME TO v1_pool_cvus;
ALTER TABLE va_payments RENAME TO v1_va_payments;
ALTER TABLE transfers RENAME TO v1_transfers;
ALTER TABLE events RENAME TO v1_events;
ALTER TABLE deliveries RENAME TO v1_deliveries;
ALTER TABLE idempotency_keys RENAME TO v1_idempotency_keys;
ALTER TABLE clients RENAME TO v1_clients;
ALTER TABLE ledger_entries RENAME TO v1_ledger_entries;
ALTER TABLE invoices RENAME TO v1_invoices;
CREATE TABLE accounts (
           id INTEGER PRIMARY KEY AUTOINCREMENT,
           key TEXT NOT NULL UNIQUE,
           head TEXT NOT NULL,
           due_at INTEGER,
           sending INTEGER NOT NULL DEFAULT 0
         );
CREATE INDEX accounts_by_due_at ON accounts (due_at) WHERE due_at IS NOT NULL;
CREATE INDEX accounts_sending ON accounts (sending) WHERE sending;
CREATE TABLE retired (account INTEGER PRIMARY KEY);
CREATE TABLE counts (account INTEGER NOT NULL, list TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (account, list)) WITHOUT ROWID;
CREATE TABLE hubs (seq INTEGER PRIMARY KEY, account INTEGER NOT NULL, id TEXT NOT NULL, data TEXT NOT NULL, cvu TEXT, alias TEXT);
CREATE UNIQUE INDEX hubs_by_id ON hubs (account, id);
CREATE INDEX hubs_by_cvu ON hubs (account, cvu) WHERE cvu IS NOT NULL;
CREATE INDEX hubs_by_alias ON hubs (account, alias) WHERE alias IS NOT NULL;
CREATE TRIGGER hubs_counted_insert AFTER INSERT ON hubs BEGIN INSERT INTO counts SELECT NEW.account, 'hubs', 1 WHERE 'hubs' IS NOT NULL ON CONFLICT DO UPDATE SET n = n + 1;  END;
CREATE TRIGGER hubs_counted_delete AFTER DELETE ON hubs BEGIN UPDATE counts SET n = n - 1 WHERE account = OLD.account AND list = 'hubs';  END;
CREATE TABLE pool_cvus (seq INTEGER PRIMARY KEY, account INTEGER NOT NULL, id TEXT NOT NULL, data TEXT NOT NULL, alias TEXT, free TEXT);
CREATE UNIQUE INDEX pool_cvus_by_id ON pool_cvus (account, id);
CREATE INDEX pool_cvus_by_alias ON pool_cvus (account, alias) WHERE alias IS NOT NULL;
CREATE INDEX pool_cvus_by_free ON pool_cvus (account, free) WHERE free IS NOT NULL;
CREATE TRIGGER pool_cvus_counted_insert AFTER INSERT ON pool_cvus BEGIN INSERT INTO counts SELECT NEW.account, 'pool_cvus', 1 WHERE 'pool_cvus' IS NOT NULL ON CONFLICT DO UPDATE SET n = n + 1;  END;
CREATE TRIGGER pool_cvus_counted_delete AFTER DELETE ON pool_cvus BEGIN UPDATE counts SET n = n - 1 WHERE account = OLD.account AND list = 'pool_cvus';  END;
CREATE TABLE va_payments (seq INTEGER PRIMARY KEY, account INTEGER NOT NULL, id TEXT NOT NULL, data TEXT NOT NULL, created_at INTEGER, status TEXT, client_id TEXT, client_tax_id TEXT, external_reference TEXT, amount_lock TEXT, due_at INTEGER);
CREATE UNIQUE INDEX va_payments_by_id ON va_payments (account, id);
CREATE INDEX va_payments_by_created_at ON va_payments (account, created_at);
CREATE INDEX va_payments_by_status ON va_payments (account, status, created_at) WHERE status IS NOT NULL;
CREATE INDEX va_payments_by_client_id ON va_payments (account, client_id, created_at) WHERE client_id IS NOT NULL;
CREATE INDEX va_payments_by_client_tax_id ON va_payments (account, client_tax_id, created_at) WHERE client_tax_id IS NOT NULL;
CREATE INDEX va_payments_by_external_reference ON va_payments (account, external_reference, created_at) WHERE external_reference IS NOT NULL;
CREATE INDEX va_payments_by_amount_lock ON va_payments (account, amount_lock, created_at) WHERE amount_lock IS NOT NULL;
CREATE INDEX va_payments_by_due_at ON va_payments (account, due_at, created_at) WHERE due_at IS NOT NULL;
CREATE TRIGGER va_payments_counted_insert AFTER INSERT ON va_payments BEGIN INSERT INTO counts SELECT NEW.account, 'va_payments', 1 WHERE 'va_payments' IS NOT NULL ON CONFLICT DO UPDATE SET n = n + 1; INSERT INTO counts SELECT NEW.account, 'va_payments.status=' || NEW.status, 1 WHERE 'va_payments.status=' || NEW.status IS NOT NULL ON CONFLICT DO UPDATE SET n = n + 1; END;
CREATE TRIGGER va_payments_counted_delete AFTER DELETE ON va_payments BEGIN UPDATE counts SET n = n - 1 WHERE account = OLD.account AND list = 'va_payments'; UPDATE counts SET n = n - 1 WHERE account = OLD.account AND list = 'va_payments.status=' || OLD.status; END;
CREATE TRIGGER va_payments_counted_status AFTER UPDATE OF status ON va_payments WHEN OLD.status IS NOT NEW.status BEGIN UPDATE counts SET n = n - 1 WHERE account = OLD.account AND list = 'va_payments.status=' || OLD.status; INSERT INTO counts SELECT NEW.account, 'va_payments.status=' || NEW.status, 1 WHERE 'va_payments.status=' || NEW.status IS NOT NULL ON CONFLICT DO UPDATE SET n = n + 1; END;
CREATE TABLE transfers (seq INTEGER PRIMARY KEY, account INTEGER NOT NULL, id TEXT NOT NULL, data TEXT NOT NULL, created_at INTEGER, target TEXT, returned_at INTEGER);
CREATE UNIQUE INDEX transfers_by_id ON transfers (account, id);
CREATE INDEX transfers_by_created_at ON transfers (account, created_at);
CREATE INDEX transfers_by_target ON transfers (account, target, created_at) WHERE target IS NOT NULL;
CREATE INDEX transfers_by_returned_at ON transfers (account, returned_at, created_at) WHERE returned_at IS NOT NULL;
CREATE TRIGGER transfers_counted_insert AFTER INSERT ON transfers BEGIN INSERT INTO counts SELECT NEW.account, 'transfers', 1 WHERE 'transfers' IS NOT NULL ON CONFLICT DO UPDATE SET n = n + 1;  END;
CREATE TRIGGER transfers_counted_delete AFTER DELETE ON transfers BEGIN UPDATE counts SET n = n - 1 WHERE account = OLD.account AND list = 'transfers';  END;
CREATE TABLE events (seq INTEGER PRIMARY KEY, account INTEGER NOT NULL, id TEXT NOT NULL, data TEXT NOT NULL, created_at INTEGER, source TEXT, dropped TEXT);
CREATE UNIQUE INDEX events_by_id ON events (account, id);
CREATE INDEX events_by_created_at ON events (account, created_at);
CREATE INDEX events_by_source ON events (account, source, created_at) WHERE source IS NOT NULL;
CREATE INDEX events_by_dropped ON events (account, dropped, created_at) WHERE dropped IS NOT NULL;
CREATE TRIGGER events_counted_insert AFTER INSERT ON events BEGIN INSERT INTO counts SELECT NEW.account, 'events', 1 WHERE 'events' IS NOT NULL ON CONFLICT DO UPDATE SET n = n + 1; INSERT INTO counts SELECT NEW.account, 'events.dropped=' || NEW.dropped, 1 WHERE 'events.dropped=' || NEW.dropped IS NOT NULL ON CONFLICT DO UPDATE SET n = n + 1; END;
CREATE TRIGGER events_counted_delete AFTER DELETE ON events BEGIN UPDATE counts SET n = n - 1 WHERE account = OLD.account AND list = 'events'; UPDATE counts SET n = n - 1 WHERE account = OLD.account AND list = 'events.dropped=' || OLD.dropped; END;
CREATE TRIGGER events_counted_dropped AFTER UPDATE OF dropped ON events WHEN OLD.dropped IS NOT NEW.dropped BEGIN UPDATE counts SET n = n - 1 WHERE account = OLD.account AND list = 'events.dropped=' || OLD.dropped; INSERT INTO counts SELECT NEW.account, 'events.dropped=' || NEW.dropped, 1 WHERE 'events.dropped=' || NEW.dropped IS NOT NULL ON CONFLICT DO UPDATE SET n = n + 1; END;
CREATE TABLE deliveries (seq INTEGER PRIMARY KEY, account INTEGER NOT NULL, id TEXT NOT NULL, data TEXT NOT NULL, created_at INTEGER, event_id TEXT, status TEXT, event_type TEXT, pending_at INTEGER, retry_at INTEGER);
CREATE UNIQUE INDEX deliveries_by_id ON deliveries (account, id);
CREATE INDEX deliveries_by_created_at ON deliveries (account, created_at);
CREATE INDEX deliveries_by_event_id ON deliveries (account, event_id, created_at) WHERE event_id IS NOT NULL;
CREATE INDEX deliveries_by_status ON deliveries (account, status, created_at) WHERE status IS NOT NULL;
CREATE INDEX deliveries_by_event_type ON deliveries (account, event_type, created_at) WHERE event_type IS NOT NULL;
CREATE INDEX deliveries_by_pending_at ON deliveries (account, pending_at, created_at) WHERE pending_at IS NOT NULL;
CREATE INDEX deliveries_by_retry_at ON deliveries (account, retry_at, created_at) WHERE retry_at IS NOT NULL;
CREATE TRIGGER deliveries_counted_insert AFTER INSERT ON deliveries BEGIN INSERT INTO counts SELECT NEW.account, 'deliveries', 1 WHERE 'deliveries' IS NOT NULL ON CONFLICT DO UPDATE SET n = n + 1; INSERT INTO counts SELECT NEW.account, 'deliveries.status=' || NEW.status, 1 WHERE 'deliveries.status=' || NEW.status IS NOT NULL ON CONFLICT DO UPDATE SET n = n + 1; INSERT INTO counts SELECT NEW.account, 'deliveries.event_type=' || NEW.event_type, 1 WHERE 'deliveries.event_type=' || NEW.event_type IS NOT NULL ON CONFLICT DO UPDATE SET n = n + 1; END;
CREATE TRIGGER deliveries_counted_delete AFTER DELETE ON deliveries BEGIN UPDATE counts SET n = n - 1 WHERE account = OLD.account AND list = 'deliveries'; UPDATE counts SET n = n - 1 WHERE account = OLD.account AND list = 'deliveries.status=' || OLD.status; UPDATE counts SET n = n - 1 WHERE account = OLD.account AND list = 'deliveries.event_type=' || OLD.event_type; END;
CREATE TRIGGER deliveries_counted_status AFTER UPDATE OF status ON deliveries WHEN OLD.status IS NOT NEW.status BEGIN UPDATE counts SET n = n - 1 WHERE account = OLD.account AND list = 'deliveries.status=' || OLD.status; INSERT INTO counts SELECT NEW.account, 'deliveries.status=' || NEW.status, 1 WHERE 'deliveries.status=' || NEW.status IS NOT NULL ON CONFLICT DO UPDATE SET n = n + 1; END;
CREATE TRIGGER deliveries_counted_event_type AFTER UPDATE OF event_type ON deliveries WHEN OLD.event_type IS NOT NEW.event_type BEGIN UPDATE counts SET n = n - 1 WHERE account = OLD.account AND list = 'deliveries.event_type=' || OLD.event_type; INSERT INTO counts SELECT NEW.account, 'deliveries.event_type=' || NEW.event_type, 1 WHERE 'deliveries.event_type=' || NEW.event_type IS NOT NULL ON CONFLICT DO UPDATE SET n = n + 1; END;
CREATE TABLE idempotency_keys (seq INTEGER PRIMARY KEY, account INTEGER NOT NULL, id TEXT NOT NULL, data TEXT NOT NULL, created_at INTEGER, due_at INTEGER);
CREATE UNIQUE INDEX idempotency_keys_by_id ON idempotency_keys (account, id);
CREATE INDEX idempotency_keys_by_created_at ON idempotency_keys (account, created_at);
CREATE INDEX idempotency_keys_by_due_at ON idempotency_keys (account, due_at, created_at) WHERE due_at IS NOT NULL;
CREATE TRIGGER idempotency_keys_counted_insert AFTER INSERT ON idempotency_keys BEGIN INSERT INTO counts SELECT NEW.account, 'idempotency_keys', 1 WHERE 'idempotency_keys' IS NOT NULL ON CONFLICT DO UPDATE SET n = n + 1;  END;
CREATE TRIGGER idempotency_keys_counted_delete AFTER DELETE ON idempotency_keys BEGIN UPDATE counts SET n = n - 1 WHERE account = OLD.account AND list = 'idempotency_keys';  END;
CREATE TABLE clients (seq INTEGER PRIMARY KEY, account INTEGER NOT NULL, id TEXT NOT NULL, data TEXT NOT NULL, created_at INTEGER, tax_id TEXT, external_reference TEXT, cvu TEXT, alias TEXT, cvu_ready_at INTEGER);
CREATE UNIQUE INDEX clients_by_id ON clients (account, id);
CREATE INDEX clients_by_created_at ON clients (account, created_at);
CREATE INDEX clients_by_tax_id ON clients (account, tax_id, created_at) WHERE tax_id IS NOT NULL;
CREATE INDEX clients_by_external_reference ON clients (account, external_reference, created_at) WHERE external_reference IS NOT NULL;
CREATE INDEX clients_by_cvu ON clients (account, cvu, created_at) WHERE cvu IS NOT NULL;
CREATE INDEX clients_by_alias ON clients (account, alias, created_at) WHERE alias IS NOT NULL;
CREATE INDEX clients_by_cvu_ready_at ON clients (account, cvu_ready_at, created_at) WHERE cvu_ready_at IS NOT NULL;
CREATE TRIGGER clients_counted_insert AFTER INSERT ON clients BEGIN INSERT INTO counts SELECT NEW.account, 'clients', 1 WHERE 'clients' IS NOT NULL ON CONFLICT DO UPDATE SET n = n + 1;  END;
CREATE TRIGGER clients_counted_delete AFTER DELETE ON clients BEGIN UPDATE counts SET n = n - 1 WHERE account = OLD.account AND list = 'clients';  END;
CREATE TABLE ledger_entries (seq INTEGER PRIMARY KEY, account INTEGER NOT NULL, id TEXT NOT NULL, data TEXT NOT NULL, created_at INTEGER, client_id TEXT, entry_type TEXT, operation TEXT, reversal TEXT);
CREATE UNIQUE INDEX ledger_entries_by_id ON ledger_entries (account, id);
CREATE INDEX ledger_entries_by_created_at ON ledger_entries (account, created_at);
CREATE INDEX ledger_entries_by_client_id ON ledger_entries (account, client_id, created_at) WHERE client_id IS NOT NULL;
CREATE INDEX ledger_entries_by_entry_type ON ledger_entries (account, entry_type, created_at) WHERE entry_type IS NOT NULL;
CREATE INDEX ledger_entries_by_operation ON ledger_entries (account, operation, created_at) WHERE operation IS NOT NULL;
CREATE INDEX ledger_entries_by_reversal ON ledger_entries (account, reversal, created_at) WHERE reversal IS NOT NULL;
CREATE TRIGGER ledger_entries_counted_insert AFTER INSERT ON ledger_entries BEGIN INSERT INTO counts SELECT NEW.account, 'ledger_entries', 1 WHERE 'ledger_entries' IS NOT NULL ON CONFLICT DO UPDATE SET n = n + 1;  END;
CREATE TRIGGER ledger_entries_counted_delete AFTER DELETE ON ledger_entries BEGIN UPDATE counts SET n = n - 1 WHERE account = OLD.account AND list = 'ledger_entries';  END;
CREATE TABLE invoices (seq INTEGER PRIMARY KEY, account INTEGER NOT NULL, id TEXT NOT NULL, data TEXT NOT NULL, created_at INTEGER, client_id TEXT, number TEXT, sequence TEXT);
CREATE UNIQUE INDEX invoices_by_id ON invoices (account, id);
CREATE INDEX invoices_by_created_at ON invoices (account, created_at);
CREATE INDEX invoices_by_client_id ON invoices (account, client_id, created_at) WHERE client_id IS NOT NULL;
CREATE INDEX invoices_by_number ON invoices (account, number, created_at) WHERE number IS NOT NULL;
CREATE INDEX invoices_by_sequence ON invoices (account, sequence, created_at) WHERE sequence IS NOT NULL;
CREATE TRIGGER invoices_counted_insert AFTER INSERT ON invoices BEGIN INSERT INTO counts SELECT NEW.account, 'invoices', 1 WHERE 'invoices' IS NOT NULL ON CONFLICT DO UPDATE SET n = n + 1;  END;
CREATE TRIGGER invoices_counted_delete AFTER DELETE ON invoices BEGIN UPDATE counts SET n = n - 1 WHERE account = OLD.account AND list = 'invoices';  END;
INSERT INTO accounts (key, head) SELECT key, head FROM v1_accounts ORDER BY key;
INSERT INTO hubs (account, id, data, cvu, alias)
  SELECT a.id, r.id, r.data,
    json_extract(r.data, '$.collectionCvu'),
    upper(json_extract(r.data, '$.collectionAlias'))
  FROM v1_hubs AS r JOIN accounts AS a ON a.key = r.account ORDER BY a.id, r.seq;
INSERT INTO pool_cvus (account, id, data, alias, free)
  SELECT a.id, r.id, json_remove(r.data, '$.cvu'),
    upper(json_extract(r.data, '$.alias')),
    CASE WHEN json_extract(r.data, '$.vaPaymentId') IS NULL THEN coalesce(json_extract(r.data, '$.releasedAt'), '') || '|' || r.id END
  FROM v1_pool_cvus AS r JOIN accounts AS a ON a.key = r.account ORDER BY a.id, r.seq;
INSERT INTO va_payments (account, id, data, created_at, status, client_id, client_tax_id, external_reference, amount_lock, due_at)
  SELECT a.id, r.id, json_remove(r.data, '$.id'),
    CAST(round(unixepoch(json_extract(r.data, '$.createdAt'), 'subsec') * 1000) AS INTEGER),
    json_extract(r.data, '$.status'),
    json_extract(r.data, '$.clientId'),
    json_extract(r.data, '$.clientTaxId'),
    json_extract(r.data, '$.externalReference'),
    CASE WHEN json_extract(r.data, '$.status') IN ('waiting', 'underpaid') AND json_extract(r.data, '$.lockMode') = 'amount' THEN 'amount:' || json_extract(r.data, '$.paymentHubId') || ':' || json_extract(r.data, '$.amount') END,
    CASE WHEN json_extract(r.data, '$.status') IN ('waiting', 'underpaid') THEN CAST(round(unixepoch(json_extract(r.data, '$.expiresAt'), 'subsec') * 1000) AS INTEGER) END
  FROM v1_va_payments AS r JOIN accounts AS a ON a.key = r.account ORDER BY a.id, r.seq;
INSERT INTO transfers (account, id, data, created_at, target, returned_at)
  SELECT a.id, r.id, json_remove(r.data, '$.id'),
    CAST(round(unixepoch(json_extract(r.data, '$.createdAt'), 'subsec') * 1000) AS INTEGER),
    json_extract(r.data, '$.target.id'),
    CASE WHEN json_type(r.data, '$.target') = 'null' THEN CAST(round(unixepoch(json_extract(r.data, '$.createdAt'), 'subsec') * 1000) AS INTEGER) END
  FROM v1_transfers AS r JOIN accounts AS a ON a.key = r.account ORDER BY a.id, r.seq;
INSERT INTO events (account, id, data, created_at, source, dropped)
  SELECT a.id, r.id, json_remove(r.data, '$.id'),
    CAST(round(unixepoch(json_extract(r.data, '$.createdAt'), 'subsec') * 1000) AS INTEGER),
    coalesce(json_extract(r.data, '$.vaPaymentId'), json_extract(r.data, '$.clientId')),
    CASE WHEN json_type(r.data, '$.url') = 'null' AND NOT coalesce(json_extract(r.data, '$.deliveryStored'), 0) THEN json_extract(r.data, '$.eventType') END
  FROM v1_events AS r JOIN accounts AS a ON a.key = r.account ORDER BY a.id, r.seq;
INSERT INTO deliveries (account, id, data, created_at, event_id, status, event_type, pending_at, retry_at)
  SELECT a.id, r.id, json_remove(r.data, '$.id'),
    CAST(round(unixepoch(json_extract(r.data, '$.createdAt'), 'subsec') * 1000) AS INTEGER),
    json_extract(r.data, '$.eventId'),
    json_extract(r.data, '$.status'),
    json_extract(r.data, '$.eventType'),
    CASE WHEN json_extract(r.data, '$.status') = 'pending' THEN CAST(round(unixepoch(json_extract(r.data, '$.updatedAt'), 'subsec') * 1000) AS INTEGER) END,
    CASE WHEN json_extract(r.data, '$.status') = 'retrying' AND json_extract(r.data, '$.nextAttemptAt') IS NOT NULL THEN CAST(round(unixepoch(json_extract(r.data, '$.nextAttemptAt'), 'subsec') * 1000) AS INTEGER) END
  FROM v1_deliveries AS r JOIN accounts AS a ON a.key = r.account ORDER BY a.id, r.seq;
INSERT INTO idempotency_keys (account, id, data, created_at, due_at)
  SELECT a.id, r.id, r.data,
    CAST(round(unixepoch(json_extract(r.data, '$.createdAt'), 'subsec') * 1000) AS INTEGER),
    CAST(round(unixepoch(json_extract(r.data, '$.createdAt'), 'subsec') * 1000) AS INTEGER) + 86400000
  FROM v1_idempotency_keys AS r JOIN accounts AS a ON a.key = r.account ORDER BY a.id, r.seq;
INSERT INTO clients (account, id, data, created_at, tax_id, external_reference, cvu, alias, cvu_ready_at)
  SELECT a.id, r.id, json_remove(r.data, '$.id'),
    CAST(round(unixepoch(json_extract(r.data, '$.createdAt'), 'subsec') * 1000) AS INTEGER),
    coalesce(nullif((WITH RECURSIVE d(i, out) AS (SELECT 1, '' UNION ALL SELECT i + 1, out || CASE WHEN substr(json_extract(r.data, '$.taxId'), i, 1) GLOB '[0-9]' THEN substr(json_extract(r.data, '$.taxId'), i, 1) ELSE '' END FROM d WHERE i <= length(json_extract(r.data, '$.taxId'))) SELECT out FROM d ORDER BY i DESC LIMIT 1), ''), json_extract(r.data, '$.taxId')),
    json_extract(r.data, '$.externalReference'),
    json_extract(r.data, '$.cvu'),
    upper(json_extract(r.data, '$.alias')),
    CASE WHEN json_extract(r.data, '$.cvuReadyAt') IS NOT NULL THEN CAST(round(unixepoch(json_extract(r.data, '$.cvuReadyAt'), 'subsec') * 1000) AS INTEGER) END
  FROM v1_clients AS r JOIN accounts AS a ON a.key = r.account ORDER BY a.id, r.seq;
INSERT INTO ledger_entries (account, id, data, created_at, client_id, entry_type, operation, reversal)
  SELECT a.id, r.id, json_remove(r.data, '$.id'),
    CAST(round(unixepoch(json_extract(r.data, '$.createdAt'), 'subsec') * 1000) AS INTEGER),
    json_extract(r.data, '$.clientId'),
    json_extract(r.data, '$.clientId') || ':' || json_extract(r.data, '$.entryType'),
    CASE WHEN json_extract(r.data, '$.operationId') IS NOT NULL AND json_extract(r.data, '$.entryType') <> 'reversal' THEN json_extract(r.data, '$.clientId') || ':' || json_extract(r.data, '$.operationId') END,
    CASE WHEN json_extract(r.data, '$.operationId') IS NOT NULL AND json_extract(r.data, '$.entryType') = 'reversal' THEN json_extract(r.data, '$.clientId') || ':' || json_extract(r.data, '$.operationId') END
  FROM v1_ledger_entries AS r JOIN accounts AS a ON a.key = r.account ORDER BY a.id, r.seq;
INSERT INTO invoices (account, id, data, created_at, client_id, number, sequence)
  SELECT a.id, r.id, json_remove(r.data, '$.id'),
    CAST(round(unixepoch(json_extract(r.data, '$.createdAt'), 'subsec') * 1000) AS INTEGER),
    json_extract(r.data, '$.clientId'),
    json_extract(r.data, '$.invoiceType') || ':' || json_extract(r.data, '$.invoiceNumber'),
    CASE WHEN json_extract(r.data, '$.invoiceNumber') GLOB '0001-[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]' THEN json_extract(r.data, '$.invoiceType') || ':' || json_extract(r.data, '$.invoiceNumber') END
  FROM v1_invoices AS r JOIN accounts AS a ON a.key = r.account ORDER BY a.id, r.seq;
DROP TABLE v1_accounts;
DROP TABLE v1_hubs;
DROP TABLE v1_pool_cvus;
DROP TABLE v1_va_payments;
DROP TABLE v1_transfers;
DROP TABLE v1_events;
DROP TABLE v1_deliveries;
DROP TABLE v1_idempotency_keys;
DROP TABLE v1_clients;
DROP TABLE v1_ledger_entries;
DROP TABLE v1_invoices;
