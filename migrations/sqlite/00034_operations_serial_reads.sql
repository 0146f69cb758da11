-- +goose Up
-- PostgreSQL's 00034 keeps parallel workers from reads of operations;
-- SQLite has none. The migration exists so that both dialects share their
-- version numbers.
SELECT 1;

-- +goose Down
SELECT 1;
