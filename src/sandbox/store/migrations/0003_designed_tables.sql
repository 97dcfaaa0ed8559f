-- Schema version 3: every record row (and an account's head) keeps `crc`, the CRC-32 of its stored text (`crc32`, the
-- store's function: node:zlib's), checked whenever the row is read, so a record changed on disk is never served.
ALTER TABLE accounts ADD COLUMN crc INTEGER NOT NULL DEFAULT 0;
UPDATE accounts SET crc = crc32(head);
ALTER TABLE hubs ADD COLUMN crc INTEGER NOT NULL DEFAULT 0;
UPDATE hubs SET crc = crc32(data);
ALTER TABLE pool_cvus ADD COLUMN crc INTEGER NOT NULL DEFAULT 0;
UPDATE pool_cvus SET crc = crc32(data);
ALTER TABLE va_payments ADD COLUMN crc INTEGER NOT NULL DEFAULT 0;
UPDATE va_payments SET crc = crc32(data);
ALTER TABLE transfers ADD COLUMN crc INTEGER NOT NULL DEFAULT 0;
UPDATE transfers SET crc = crc32(data);
ALTER TABLE events ADD COLUMN crc INTEGER NOT NULL DEFAULT 0;
UPDATE events SET crc = crc32(data);
ALTER TABLE deliveries ADD COLUMN crc INTEGER NOT NULL DEFAULT 0;
-- A delivery's attempts, a row each: an attempt appends one rather than rewriting the delivery with its history. The
-- delivery's row keeps `attempts: []` in their place, and how many are stored.
CREATE TABLE delivery_attempts (account INTEGER NOT NULL, delivery TEXT NOT NULL, n INTEGER NOT NULL, data TEXT NOT NULL, crc INTEGER NOT NULL, PRIMARY KEY (account, delivery, n)) WITHOUT ROWID;
INSERT INTO delivery_attempts (account, delivery, n, data, crc)
  SELECT d.account, d.id, a.key, a.value, crc32(a.value) FROM deliveries AS d, json_each(d.data, '$.attempts') AS a ORDER BY d.seq, a.key;
ALTER TABLE deliveries ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
UPDATE deliveries SET attempts = json_array_length(data, '$.attempts'), data = json_set(data, '$.attempts', json('[]'));
UPDATE deliveries SET crc = crc32(data);
CREATE TRIGGER delivery_attempts_dropped AFTER DELETE ON deliveries BEGIN DELETE FROM delivery_attempts WHERE account = OLD.account AND delivery = OLD.id; END;
ALTER TABLE idempotency_keys ADD COLUMN crc INTEGER NOT NULL DEFAULT 0;
UPDATE idempotency_keys SET crc = crc32(data);
ALTER TABLE clients ADD COLUMN crc INTEGER NOT NULL DEFAULT 0;
UPDATE clients SET crc = crc32(data);
ALTER TABLE ledger_entries ADD COLUMN crc INTEGER NOT NULL DEFAULT 0;
UPDATE ledger_entries SET crc = crc32(data);
ALTER TABLE invoices ADD COLUMN crc INTEGER NOT NULL DEFAULT 0;
UPDATE invoices SET crc = crc32(data);
