-- +goose Up
-- The result of each applied batch decision (domain/batch.go): which items
-- were decided and which skipped, and why. Each item's decision is in its
-- own timeline and the audit trail for good, with the batch's ID; this row
-- is the receipt the person who applied it, or a colleague they send the
-- link to, reads on any replica.
CREATE TABLE batch_results (
    id         text PRIMARY KEY,
    applied_at datetime NOT NULL,
    record     text NOT NULL
);

-- +goose Down
DROP TABLE batch_results;
