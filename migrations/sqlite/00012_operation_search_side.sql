-- +goose Up
-- PostgreSQL's 00012 moves the Operations page's searched text into a side
-- table kept by triggers and drops 00009's index. SQLite has no index that
-- LIKE '%…%' could use and no such index to drop; its search keeps reading
-- operations (store/list.go). The migration exists so that both dialects
-- share their version numbers.
SELECT 1;

-- +goose Down
SELECT 1;
