-- +goose Up
-- The overview's flows: operations handed to a person, and decided by one,
-- within the last hours and days, read as ranges of these rather than a
-- scan of every operation. The store writes the predicates out verbatim
-- (store/overview_flow.go), as a partial index is used only then.
CREATE INDEX operations_desk_entered ON operations (desk_entered_at) WHERE desk_entered_at IS NOT NULL;
CREATE INDEX operations_resolved ON operations (resolution_at) WHERE resolution_by IS NOT NULL;

-- +goose Down
DROP INDEX operations_resolved;
DROP INDEX operations_desk_entered;
