-- +goose Up
-- The audit trail: checkpoints, an append-only audit table, and the one
-- deliberate way to remove events (retention of final operations).

-- Each checkpoint is a system audit event committing to the heads of the
-- streams changed since the previous one; this table is the bookkeeping of
-- where the last one stopped. The primary key on seq makes two writers
-- that race to write the same checkpoint collide instead of both succeed.
CREATE TABLE audit_checkpoints (
    seq      integer PRIMARY KEY,
    upto_pos integer NOT NULL,
    root     text NOT NULL,
    heads    integer NOT NULL,
    event_id text NOT NULL,
    at       datetime NOT NULL
);

-- The trail's filters: by action and by namespace, in write order.
CREATE INDEX audit_events_action ON audit_events (action, pos);
CREATE INDEX audit_events_namespace ON audit_events (namespace, pos);

-- audit_events is append-only. An embedded database's file belongs to
-- whoever runs the process, so this guards against mistakes, not against
-- its owner (PostgreSQL can do more; see its migration). Retention deletes
-- a stream only while audit_purge_permits names it, within the purge's own
-- transaction.
CREATE TABLE audit_purge_permits (
    stream text PRIMARY KEY
);
-- +goose StatementBegin
CREATE TRIGGER audit_events_no_update BEFORE UPDATE ON audit_events
BEGIN
    SELECT RAISE(ABORT, 'audit_events is append-only: UPDATE refused');
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER audit_events_no_delete BEFORE DELETE ON audit_events
WHEN NOT EXISTS (SELECT 1 FROM audit_purge_permits WHERE stream = OLD.stream)
BEGIN
    SELECT RAISE(ABORT, 'audit_events is append-only: DELETE refused');
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER audit_events_no_delete;
DROP TRIGGER audit_events_no_update;
DROP TABLE audit_purge_permits;
DROP INDEX audit_events_namespace;
DROP INDEX audit_events_action;
DROP TABLE audit_checkpoints;
