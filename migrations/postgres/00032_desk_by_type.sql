-- +goose Up
-- The desk's items by type, in the queue's order, holding what the
-- queue's filters read. The queue filtered by a type (and an age) and its
-- matching count read every item of the desk index (00029's
-- operations_desk, by desk state) in created_at order and fetched each
-- row for its type and desk_entered_at; from this index they read only
-- that type's items, and the count reads nothing else. The predicate is
-- the desk's, written in the queries' own text, so generic plans take it
-- too. None of its columns changes while an operation runs its workflow
-- off the desk, so the lifecycle's updates stay HOT (00029).
CREATE INDEX operations_desk_by_type ON operations (type, created_at, id)
    INCLUDE (desk_state, desk_entered_at) WHERE desk_state IS NOT NULL;

-- +goose Down
DROP INDEX operations_desk_by_type;
