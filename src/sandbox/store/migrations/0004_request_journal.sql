-- Schema version 4: the request journal (contract part 9), every `/api/v1` request of an account as it was sent and
-- answered, newest last by `seq`, bounded per account by the server (`start --journal N`) rather than by the schema.
-- A row is a log line, not state: it has no `crc` (nothing but the journal is served from it); `counts` keeps how many
-- an account has, so its bound and an unfiltered page's total cost one row.
-- `at` is the account's clock (ms) when the request came; `data` the item's small fields as JSON; the bodies as text,
-- each cut at 64 KiB (`truncated`). The API key is never in a row: `requestHeaders` leave out `Authorization`, and the
-- key is blanked wherever else the request or its answer held it.
CREATE TABLE requests (seq INTEGER PRIMARY KEY, account INTEGER NOT NULL, id TEXT NOT NULL, at INTEGER NOT NULL, method TEXT NOT NULL, path TEXT NOT NULL, status INTEGER, data TEXT NOT NULL, request_body TEXT, response_body TEXT);
CREATE UNIQUE INDEX requests_by_id ON requests (account, id);
CREATE INDEX requests_by_account ON requests (account);
CREATE TRIGGER requests_counted_insert AFTER INSERT ON requests BEGIN INSERT INTO counts SELECT NEW.account, 'requests', 1 WHERE 'requests' IS NOT NULL ON CONFLICT DO UPDATE SET n = n + 1; END;
CREATE TRIGGER requests_counted_delete AFTER DELETE ON requests BEGIN UPDATE counts SET n = n - 1 WHERE account = OLD.account AND list = 'requests'; END;
