-- +goose Up
-- As PostgreSQL's 00018: no query reads operations_provider_key or
-- operations_result_ref (a search matches both as substrings, column by
-- column on SQLite), and every write paid for them.
DROP INDEX IF EXISTS operations_provider_key;
DROP INDEX IF EXISTS operations_result_ref;

-- +goose Down
CREATE INDEX operations_provider_key ON operations (provider_key);
CREATE INDEX operations_result_ref ON operations (result_ref) WHERE result_ref IS NOT NULL;
