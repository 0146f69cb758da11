-- +goose Up
-- The audit trail: checkpoints, an append-only audit table, and the one
-- deliberate way to remove events (retention of final operations).

-- Each checkpoint is a system audit event committing to the heads of the
-- streams changed since the previous one; this table is the bookkeeping of
-- where the last one stopped. The primary key on seq makes two replicas
-- that race to write the same checkpoint collide instead of both succeed.
CREATE TABLE audit_checkpoints (
    seq      bigint PRIMARY KEY,
    upto_pos bigint NOT NULL,
    root     text NOT NULL,
    heads    integer NOT NULL,
    event_id text NOT NULL,
    at       timestamptz NOT NULL
);

-- The trail's filters: by action and by namespace, in write order.
CREATE INDEX audit_events_action ON audit_events (action, pos);
CREATE INDEX audit_events_namespace ON audit_events (namespace, pos);

-- audit_events is append-only, for every role, the owner included. The only
-- exception is a DELETE of one stream while the session setting
-- handoff.audit_purge names that stream, which handoff_purge_audit_stream
-- sets for the length of its own DELETE.
-- +goose StatementBegin
CREATE FUNCTION handoff_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        IF current_setting('handoff.audit_purge', true) = OLD.stream THEN
            RETURN OLD;
        END IF;
    END IF;
    RAISE EXCEPTION 'audit_events is append-only: % refused', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END
$$;
-- +goose StatementEnd
CREATE TRIGGER audit_events_append_only BEFORE UPDATE OR DELETE ON audit_events
    FOR EACH ROW EXECUTE FUNCTION handoff_audit_append_only();
CREATE TRIGGER audit_events_no_truncate BEFORE TRUNCATE ON audit_events
    FOR EACH STATEMENT EXECUTE FUNCTION handoff_audit_append_only();

-- Retention's deliberate path. It deletes one stream, and only when the
-- operation is final and the newest system event is that stream's
-- tombstone (the store appends it in the same transaction, under the
-- system stream's lock). SECURITY DEFINER: it runs with its owner's rights,
-- so the server's role needs no DELETE privilege on audit_events at all;
-- search_path is pinned to the schema it was created in.
-- +goose StatementBegin
CREATE FUNCTION handoff_purge_audit_stream(p_stream text) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
DECLARE
    n    bigint;
    tomb audit_events%ROWTYPE;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM operations WHERE id = p_stream AND state IN ('completed', 'cancelled')) THEN
        RAISE EXCEPTION 'audit stream % does not belong to a final operation', p_stream;
    END IF;
    SELECT * INTO tomb FROM audit_events WHERE stream = 'system' ORDER BY seq DESC LIMIT 1;
    IF tomb.action IS DISTINCT FROM 'stream_purged' OR (tomb.detail::jsonb ->> 'stream') IS DISTINCT FROM p_stream THEN
        RAISE EXCEPTION 'audit stream % has no tombstone', p_stream;
    END IF;
    PERFORM set_config('handoff.audit_purge', p_stream, true);
    DELETE FROM audit_events WHERE stream = p_stream;
    GET DIAGNOSTICS n = ROW_COUNT;
    PERFORM set_config('handoff.audit_purge', '', true);
    RETURN n;
END
$$;
-- +goose StatementEnd
REVOKE ALL ON FUNCTION handoff_purge_audit_stream(text) FROM PUBLIC;

-- Running the server with a role that cannot UPDATE or DELETE audit rows.
-- The trigger stops every role, but the table's owner could drop it; a role
-- without those privileges cannot even try. Migrate as the owner:
--
--   HANDOFF_DATABASE_URL=postgres://owner@db/handoff handoff migrate
--
-- then, after every migration that adds a table, grant the server's role
-- (CREATE ROLE handoff_app LOGIN PASSWORD '…' once):
--
--   GRANT USAGE ON SCHEMA public TO handoff_app;
--   GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO handoff_app;
--   REVOKE UPDATE, DELETE, TRUNCATE ON audit_events, audit_checkpoints FROM handoff_app;
--   GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO handoff_app;
--   GRANT EXECUTE ON FUNCTION handoff_purge_audit_stream(text) TO handoff_app;
--
-- and serve as that role:
--
--   HANDOFF_DATABASE_URL=postgres://handoff_app@db/handoff handoff serve
--
-- The server finds no pending migration and runs none. Retention purges
-- through handoff_purge_audit_stream, which runs as the owner and removes
-- only a final operation's stream after its tombstone; nothing else the
-- server's role can do removes or changes an audit event.
-- (TestAudit_restrictedRole in store/audit_guard_test.go runs these grants.)

-- +goose Down
DROP FUNCTION handoff_purge_audit_stream(text);
DROP TRIGGER audit_events_no_truncate ON audit_events;
DROP TRIGGER audit_events_append_only ON audit_events;
DROP FUNCTION handoff_audit_append_only();
DROP INDEX audit_events_namespace;
DROP INDEX audit_events_action;
DROP TABLE audit_checkpoints;
