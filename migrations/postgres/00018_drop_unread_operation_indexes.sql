-- +goose Up
-- Two indexes of 00001 that no query reads: operations_provider_key and
-- operations_result_ref. The Operations page finds a provider key or a
-- result ref as a substring of the search side table's text (00012,
-- store/list.go), the desk through 00004's trigram indexes, and nothing
-- looks an operation up by either value exactly. Yet no update of an
-- operation is HOT, so each lifecycle paid three entries in them — the
-- provider key at register and again at settle, the result ref at settle:
-- about 370 bytes of WAL and three b-tree inserts of the twenty or so it
-- makes. A query that needs one again brings it back with its benchmark.
DROP INDEX IF EXISTS operations_provider_key;
DROP INDEX IF EXISTS operations_result_ref;

-- +goose Down
CREATE INDEX operations_provider_key ON operations (provider_key);
CREATE INDEX operations_result_ref ON operations (result_ref) WHERE result_ref IS NOT NULL;
