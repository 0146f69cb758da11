-- +goose Up
-- PostgreSQL's 00017 has the search side table's trigger (00012) insert a
-- part it knows is absent without ON CONFLICT. SQLite has neither the
-- table nor the trigger; the migration exists so that both dialects share
-- their version numbers.
SELECT 1;

-- +goose Down
SELECT 1;
