-- +goose Up
-- PostgreSQL's 00025 matches the Operations page's identifiers through
-- hash indexes on operations instead of 00022's table. SQLite's search
-- reads operations column by column (store/list.go) and needs neither; the
-- migration exists so that both dialects share their version numbers.
SELECT 1;

-- +goose Down
SELECT 1;
