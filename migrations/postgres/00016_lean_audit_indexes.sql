-- +goose Up
-- A leaner index set on audit_events. Every transition writes an audit
-- row, and every row paid for six indexes; most rows are machine
-- transitions (registered, claimed_and_began, settled …) that only the
-- chain reads back by stream. What stays whole: the write position (pos),
-- the event id, and (stream, seq), which the chain and an operation's
-- timeline read. The rest becomes narrower:
--
--   time       stays: (at, pos) is the order of a page with a time range.
--              Write positions only roughly follow time, so a BRIN index
--              or the primary key cannot find the first rows of a range by
--              write position without reading every row before it.
--   action     a b-tree over the actions that are not the lifecycle's
--              machine transitions: the desk's decisions and the
--              machinery's rare outcomes (lease_expired, reconciled …).
--              A lifecycle action is the bulk of the trail, so a page of
--              it is found by reading in write order.
--   actor      b-trees over the rows whose actor is not a workflow token:
--              people and the system. A token's events are found by
--              reading in write order (see store/audit_page.go).
--   namespace  no index: a namespace's events are read in write order.
--
-- A partial index is used only when its predicate is in the query's text,
-- so store/audit.go and store/audit_page.go write these predicates out
-- verbatim.
DROP INDEX audit_events_action;
DROP INDEX audit_events_namespace;
CREATE INDEX audit_events_decisions ON audit_events (action, pos)
    WHERE action NOT IN ('registered', 'claimed', 'claimed_and_began', 'heartbeat', 'began', 'settled');
CREATE INDEX audit_events_actor_name ON audit_events (actor_name, pos) WHERE actor_kind <> 'workflow';
CREATE INDEX audit_events_actor_email ON audit_events (actor_email, pos) WHERE actor_kind <> 'workflow';
CREATE INDEX audit_events_actor_subject ON audit_events (actor_subject, pos) WHERE actor_kind <> 'workflow';

-- +goose Down
DROP INDEX audit_events_actor_subject;
DROP INDEX audit_events_actor_email;
DROP INDEX audit_events_actor_name;
DROP INDEX audit_events_decisions;
CREATE INDEX audit_events_namespace ON audit_events (namespace, pos);
CREATE INDEX audit_events_action ON audit_events (action, pos);
