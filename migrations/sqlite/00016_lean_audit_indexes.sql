-- +goose Up
-- A leaner index set on audit_events, as on PostgreSQL (see its 00016):
-- the action and actor filters use partial indexes over the rows that are
-- not the lifecycle's machine transitions, namespace has none. The store
-- writes their predicates out verbatim, as a partial index is used only
-- when they are in the query.
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
