-- +goose Up
-- PostgreSQL's 00029 moves every index that named state, updated_at,
-- lease_expires_at or result_ref off operations, so that the updates of a
-- running operation are HOT there. SQLite has no HOT updates; it gets the
-- same columns, side tables and predicates, since the store's queries are
-- one text for both (store/claim.go, twin.go, content_purge.go, desk.go,
-- list.go). Its search matches the result ref on operations itself, so it
-- has no operation_result_refs. Generated columns are VIRTUAL: SQLite adds
-- no STORED column to a table that exists.
ALTER TABLE operations ADD COLUMN queued boolean GENERATED ALWAYS AS (state IN ('received', 'failed_retryable')) VIRTUAL;
ALTER TABLE operations ADD COLUMN desk_state text GENERATED ALWAYS AS
    (CASE WHEN state IN ('unknown_outcome', 'failed_terminal') THEN state END) VIRTUAL;
ALTER TABLE operations ADD COLUMN desk_result_ref text GENERATED ALWAYS AS
    (CASE WHEN state IN ('unknown_outcome', 'failed_terminal') THEN result_ref END) VIRTUAL;
ALTER TABLE operations ADD COLUMN twin_held boolean GENERATED ALWAYS AS
    (state = 'awaiting_approval' AND last_error_code IS 'twin_unresolved') VIRTUAL;

CREATE TABLE open_operations (
    id               text PRIMARY KEY,
    namespace        text NOT NULL,
    key              text NOT NULL,
    identity_hash    text NOT NULL,
    lease_expires_at datetime
);
CREATE INDEX open_operations_twins ON open_operations (namespace, identity_hash);
CREATE INDEX open_operations_lease_expiry ON open_operations (lease_expires_at) WHERE lease_expires_at IS NOT NULL;

CREATE TABLE final_operations (
    id            text PRIMARY KEY,
    namespace     text NOT NULL,
    identity_hash text NOT NULL,
    state         text NOT NULL,
    updated_at    datetime NOT NULL,
    content_left  boolean NOT NULL
);
CREATE INDEX final_operations_content_retention ON final_operations (updated_at) WHERE content_left;
CREATE INDEX final_operations_echoes ON final_operations (namespace, identity_hash, updated_at)
    WHERE state = 'completed' AND identity_hash <> '';

-- +goose StatementBegin
CREATE TRIGGER operation_sets_insert AFTER INSERT ON operations BEGIN
    INSERT INTO open_operations (id, namespace, key, identity_hash, lease_expires_at)
    SELECT NEW.id, NEW.namespace, NEW.key, NEW.identity_hash, NEW.lease_expires_at
     WHERE NEW.state IN ('received', 'processing', 'action_pending', 'unknown_outcome', 'failed_retryable', 'failed_terminal');
    INSERT INTO final_operations (id, namespace, identity_hash, state, updated_at, content_left)
    SELECT NEW.id, NEW.namespace, NEW.identity_hash, NEW.state, NEW.updated_at, NEW.content <> ''
     WHERE NEW.state IN ('completed', 'cancelled');
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER operation_sets_update AFTER UPDATE ON operations BEGIN
    DELETE FROM open_operations WHERE id = OLD.id;
    INSERT INTO open_operations (id, namespace, key, identity_hash, lease_expires_at)
    SELECT NEW.id, NEW.namespace, NEW.key, NEW.identity_hash, NEW.lease_expires_at
     WHERE NEW.state IN ('received', 'processing', 'action_pending', 'unknown_outcome', 'failed_retryable', 'failed_terminal');
    DELETE FROM final_operations WHERE id = OLD.id;
    INSERT INTO final_operations (id, namespace, identity_hash, state, updated_at, content_left)
    SELECT NEW.id, NEW.namespace, NEW.identity_hash, NEW.state, NEW.updated_at, NEW.content <> ''
     WHERE NEW.state IN ('completed', 'cancelled');
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER operation_sets_delete AFTER DELETE ON operations BEGIN
    DELETE FROM open_operations WHERE id = OLD.id;
    DELETE FROM final_operations WHERE id = OLD.id;
END;
-- +goose StatementEnd

INSERT INTO open_operations (id, namespace, key, identity_hash, lease_expires_at)
SELECT id, namespace, key, identity_hash, lease_expires_at FROM operations
 WHERE state IN ('received', 'processing', 'action_pending', 'unknown_outcome', 'failed_retryable', 'failed_terminal');
INSERT INTO final_operations (id, namespace, identity_hash, state, updated_at, content_left)
SELECT id, namespace, identity_hash, state, updated_at, content <> '' FROM operations WHERE state IN ('completed', 'cancelled');

DROP INDEX IF EXISTS operations_twins;
DROP INDEX IF EXISTS operations_lease_expiry;
DROP INDEX IF EXISTS operations_content_retention;
DROP INDEX IF EXISTS operations_echoes;
DROP INDEX IF EXISTS operations_ready;
CREATE INDEX operations_ready ON operations (namespace, created_at, id) WHERE queued;
DROP INDEX IF EXISTS operations_desk;
CREATE INDEX operations_desk ON operations (desk_state, created_at, id) WHERE desk_state IS NOT NULL;
DROP INDEX IF EXISTS operations_awaiting_lookup;
CREATE INDEX operations_awaiting_lookup ON operations (type) WHERE desk_state = 'unknown_outcome' AND desk_entered_at IS NULL;
DROP INDEX IF EXISTS operations_twin_holds;
CREATE INDEX operations_twin_holds ON operations (namespace, identity_hash) WHERE twin_held;

-- +goose Down
DROP TRIGGER IF EXISTS operation_sets_insert;
DROP TRIGGER IF EXISTS operation_sets_update;
DROP TRIGGER IF EXISTS operation_sets_delete;
DROP TABLE IF EXISTS open_operations;
DROP TABLE IF EXISTS final_operations;
DROP INDEX IF EXISTS operations_ready;
DROP INDEX IF EXISTS operations_desk;
DROP INDEX IF EXISTS operations_awaiting_lookup;
DROP INDEX IF EXISTS operations_twin_holds;
ALTER TABLE operations DROP COLUMN twin_held;
ALTER TABLE operations DROP COLUMN desk_result_ref;
ALTER TABLE operations DROP COLUMN desk_state;
ALTER TABLE operations DROP COLUMN queued;
CREATE INDEX operations_ready ON operations (namespace, created_at, id)
    WHERE state IN ('received', 'failed_retryable');
CREATE INDEX operations_lease_expiry ON operations (lease_expires_at) WHERE lease_expires_at IS NOT NULL;
CREATE INDEX operations_desk ON operations (state, created_at, id)
    WHERE state IN ('unknown_outcome', 'failed_terminal');
CREATE INDEX operations_content_retention ON operations (updated_at) WHERE content <> '' AND state IN ('completed', 'cancelled');
CREATE INDEX operations_awaiting_lookup ON operations (type) WHERE state = 'unknown_outcome' AND desk_entered_at IS NULL;
CREATE INDEX operations_twins ON operations (namespace, identity_hash)
    WHERE state IN ('received', 'processing', 'action_pending', 'unknown_outcome', 'failed_retryable', 'failed_terminal');
CREATE INDEX operations_twin_holds ON operations (namespace, identity_hash)
    WHERE state = 'awaiting_approval' AND last_error_code = 'twin_unresolved';
CREATE INDEX operations_echoes ON operations (namespace, identity_hash, updated_at)
    WHERE state = 'completed' AND identity_hash <> '';
