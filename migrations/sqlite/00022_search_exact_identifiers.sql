-- +goose Up
-- PostgreSQL's 00022 has the Operations page's search match identifiers
-- (event ID, correlation ID, provider key, result ref) whole, through a
-- table of their own, and keep substrings for the key, the content and the
-- error. SQLite's search reads operations column by column (store/list.go)
-- and matches them the same way without a table; the migration exists so
-- that both dialects share their version numbers.
SELECT 1;

-- +goose Down
SELECT 1;
