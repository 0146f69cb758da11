-- +goose Up
-- An incident keeps its open items' counts by state (domain.Incident's
-- OpenIn), written with OpenItems where an item joins or leaves: an item
-- keeps its state while it is open, since any move out of it is its exit.
-- The incidents list and an incident's page read the states from the
-- incident's row instead of joining every open item to its operation.
--
-- Replicas of an earlier version must be stopped first, as for every
-- migration: they would add and close memberships without the counts.
LOCK TABLE incidents, incident_items IN SHARE ROW EXCLUSIVE MODE;

ALTER TABLE incidents ADD COLUMN open_unknown_outcome integer NOT NULL DEFAULT 0,
                      ADD COLUMN open_failed_terminal integer NOT NULL DEFAULT 0;

UPDATE incidents i SET open_unknown_outcome = c.unknown_outcome, open_failed_terminal = c.failed_terminal
FROM (SELECT ii.incident_id, COUNT(*) FILTER (WHERE o.state = 'unknown_outcome') AS unknown_outcome,
             COUNT(*) FILTER (WHERE o.state = 'failed_terminal') AS failed_terminal
      FROM incident_items ii JOIN operations o ON o.id = ii.operation_id
      WHERE ii.left_at IS NULL GROUP BY ii.incident_id) c
WHERE c.incident_id = i.id;

-- +goose Down
ALTER TABLE incidents DROP COLUMN open_unknown_outcome, DROP COLUMN open_failed_terminal;
