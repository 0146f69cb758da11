-- +goose Up
-- As PostgreSQL's 00033: an incident keeps its open items' counts by
-- state.
ALTER TABLE incidents ADD COLUMN open_unknown_outcome integer NOT NULL DEFAULT 0;
ALTER TABLE incidents ADD COLUMN open_failed_terminal integer NOT NULL DEFAULT 0;

UPDATE incidents SET
    open_unknown_outcome = (SELECT COUNT(*) FROM incident_items ii JOIN operations o ON o.id = ii.operation_id
                            WHERE ii.incident_id = incidents.id AND ii.left_at IS NULL AND o.state = 'unknown_outcome'),
    open_failed_terminal = (SELECT COUNT(*) FROM incident_items ii JOIN operations o ON o.id = ii.operation_id
                            WHERE ii.incident_id = incidents.id AND ii.left_at IS NULL AND o.state = 'failed_terminal');

-- +goose Down
ALTER TABLE incidents DROP COLUMN open_failed_terminal;
ALTER TABLE incidents DROP COLUMN open_unknown_outcome;
