-- +goose Up
-- PostgreSQL's 00009 adds a trigram index for the Operations page's search
-- over every state. SQLite has no index that LIKE '%…%' could use; it reads
-- the table, as it does for the desk's search (00004). The migration exists
-- so that both dialects share their version numbers.
SELECT 1;

-- +goose Down
SELECT 1;
