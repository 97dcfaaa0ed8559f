-- Schema version 5: an attempt writes a delivery's status columns, never its JSON again.
-- What an attempt changes of a delivery (`status`, `nextAttemptAt`, `updatedAt`) is kept in `state`, a JSON object read
-- over the delivery's `data`, with a CRC-32 of its own (`state_crc`, checked whenever the row is read, as `crc` is of
-- `data`); both are NULL while `data` holds the whole delivery (one written whole: made, held, released, imported).
ALTER TABLE deliveries ADD COLUMN state TEXT;
ALTER TABLE deliveries ADD COLUMN state_crc INTEGER;
