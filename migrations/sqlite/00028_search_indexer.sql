-- +goose Up
-- PostgreSQL's 00028 moves the writing of the Operations page's search
-- text off the write path, to the search indexer. SQLite's search reads
-- operations column by column (store/list.go) and has no side table to
-- write, so what a write changes is found at once; the migration exists so
-- that both dialects share their version numbers.
SELECT 1;

-- +goose Down
SELECT 1;
