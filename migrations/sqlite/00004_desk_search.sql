-- +goose Up
-- PostgreSQL's 00004 adds trigram indexes for the desk's substring search.
-- SQLite has no trigram index that LIKE '%…%' could use; an embedded
-- database scans its desk items, which is fast at the sizes it serves. The
-- migration exists so that both dialects share their version numbers.
SELECT 1;

-- +goose Down
SELECT 1;
