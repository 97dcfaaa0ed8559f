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
UPDATE deliveries SET crc = crc32(data);
ALTER TABLE idempotency_keys ADD COLUMN crc INTEGER NOT NULL DEFAULT 0;
UPDATE idempotency_keys SET crc = crc32(data);
ALTER TABLE clients ADD COLUMN crc INTEGER NOT NULL DEFAULT 0;
UPDATE clients SET crc = crc32(data);
ALTER TABLE ledger_entries ADD COLUMN crc INTEGER NOT NULL DEFAULT 0;
UPDATE ledger_entries SET crc = crc32(data);
ALTER TABLE invoices ADD COLUMN crc INTEGER NOT NULL DEFAULT 0;
UPDATE invoices SET crc = crc32(data);
