-- +goose Up
-- PostgreSQL's 00031 writes operations anew with the columns a running
-- operation's updates change last, so that a HOT update logs fewer bytes.
-- SQLite has no HOT updates and logs a changed page whole; the migration
-- exists so that both dialects share their version numbers.
SELECT 1;

-- +goose Down
SELECT 1;
