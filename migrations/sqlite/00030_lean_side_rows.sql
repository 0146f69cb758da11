-- +goose Up
-- PostgreSQL's 00030 drops the search indexer's stamps, moves the result
-- ref into final_operations and keys open_operations by its twin index.
-- SQLite has no search side table, matches the result ref on operations
-- itself (store/list.go) and keeps 00029's open_operations; the migration
-- exists so that both dialects share their version numbers.
SELECT 1;

-- +goose Down
SELECT 1;
