-- +goose Up
-- As PostgreSQL's 00032: the desk's items by type, in the queue's order,
-- for the queue filtered by a type. SQLite has no INCLUDE; the row is
-- read for the rest of the filter.
CREATE INDEX operations_desk_by_type ON operations (type, created_at, id) WHERE desk_state IS NOT NULL;

-- +goose Down
DROP INDEX operations_desk_by_type;
