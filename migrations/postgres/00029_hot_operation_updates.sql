-- +goose Up
-- The updates of a running operation — its begin, heartbeats and settle —
-- become HOT (heap-only) updates: PostgreSQL writes the new row version
-- beside the old one on its page and adds no entry to any of the table's
-- indexes, which it may do only when no column that an index names (in
-- its key, expression or predicate) changes. Before this every update of
-- operations added an entry to every one of its indexes: each write
-- changed updated_at (keyed by 00006's and 00027's indexes) and each
-- transition changed state (named by the predicates of nearly all the
-- partial indexes), lease_expires_at (00001) or result_ref (00004, 00025).
--
-- What moves where (docs/performance.md, "HOT updates of operations"):
--
--   Sets an operation enters or leaves on its way through the workflow
--   live in two side tables, kept by a trigger in the transaction of the
--   write, so every writer of operations — the GORM transaction, the pgx
--   single statement, the multi-row statement, the purge, a bulk load —
--   keeps them without knowing:
--     open_operations   one row per operation in a twin state
--                       (domain.TwinStates: queued, claimed, waiting for a
--                       retry, in doubt), with its lease's expiry: the
--                       twin check (00024, 00027) and the lease sweep
--                       (00001) read it. A settle deletes the row, which
--                       touches none of its indexes.
--     final_operations  one row per completed or cancelled operation,
--                       with its last change and whether content is left:
--                       content retention (00006) and the echo guard
--                       (00027) read it. A settle inserts the row.
--     operation_result_refs  the result ref, lowercased, for the
--                       Operations page's exact match (00025).
--   Sets an operation is in, or not, all the way from its begin to its
--   settle are named by generated columns, which a begin or a completed
--   settle does not change: queued (00001's queue), desk_state (the desk,
--   its search, the operations awaiting a lookup: 00001, 00004, 00015),
--   desk_result_ref (the desk search's result ref) and twin_held (00019).
--
-- A trigger, not a common table expression of each write: the writes are
-- rendered by three renderers and GORM, and a side table that one of them
-- forgot would answer wrongly without failing. Its function runs only on
-- the transitions that change one of these sets (WHEN), not on a begin.
--
-- fillfactor 85: a HOT update needs room for the new version on the old
-- one's page. Rows are inserted in order and a full page has none; the
-- room left free at insert holds the next version until page pruning
-- frees the dead ones.
--
-- Adding the generated columns rewrites the table, and the indexes are
-- built again, with writes locked out meanwhile (seconds per 100,000
-- operations).
ALTER TABLE operations
    ADD COLUMN queued boolean GENERATED ALWAYS AS (state IN ('received', 'failed_retryable')) STORED,
    ADD COLUMN desk_state text GENERATED ALWAYS AS
        (CASE WHEN state IN ('unknown_outcome', 'failed_terminal') THEN state END) STORED,
    ADD COLUMN desk_result_ref text GENERATED ALWAYS AS
        (CASE WHEN state IN ('unknown_outcome', 'failed_terminal') THEN result_ref END) STORED,
    ADD COLUMN twin_held boolean GENERATED ALWAYS AS
        (state = 'awaiting_approval' AND last_error_code IS NOT DISTINCT FROM 'twin_unresolved') STORED;
ALTER TABLE operations SET (fillfactor = 85);

CREATE TABLE open_operations (
    id               text PRIMARY KEY,
    namespace        text NOT NULL,
    key              text NOT NULL,
    identity_hash    text NOT NULL,
    lease_expires_at timestamptz
);
CREATE INDEX open_operations_twins ON open_operations (namespace, identity_hash);
CREATE INDEX open_operations_lease_expiry ON open_operations (lease_expires_at) WHERE lease_expires_at IS NOT NULL;

CREATE TABLE final_operations (
    id            text PRIMARY KEY,
    namespace     text NOT NULL,
    identity_hash text NOT NULL,
    state         text NOT NULL,
    updated_at    timestamptz NOT NULL,
    content_left  boolean NOT NULL
);
CREATE INDEX final_operations_content_retention ON final_operations (updated_at) WHERE content_left;
CREATE INDEX final_operations_echoes ON final_operations (namespace, identity_hash, updated_at)
    WHERE state = 'completed' AND identity_hash <> '';

-- Hash, as 00025's: equality on a value of any length.
CREATE TABLE operation_result_refs (
    operation_id text PRIMARY KEY,
    value        text NOT NULL -- lower(result_ref), not empty
);
CREATE INDEX operation_result_refs_value ON operation_result_refs USING hash (value);

-- +goose StatementBegin
CREATE FUNCTION handoff_operation_sets() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    was_open  boolean := TG_OP <> 'INSERT' AND OLD.state IN ('received', 'processing', 'action_pending',
                                                             'unknown_outcome', 'failed_retryable', 'failed_terminal');
    is_open   boolean := TG_OP <> 'DELETE' AND NEW.state IN ('received', 'processing', 'action_pending',
                                                            'unknown_outcome', 'failed_retryable', 'failed_terminal');
    was_final boolean := TG_OP <> 'INSERT' AND OLD.state IN ('completed', 'cancelled');
    is_final  boolean := TG_OP <> 'DELETE' AND NEW.state IN ('completed', 'cancelled');
    old_ref   text := CASE WHEN TG_OP <> 'INSERT' THEN COALESCE(OLD.result_ref, '') ELSE '' END;
    new_ref   text := CASE WHEN TG_OP <> 'DELETE' THEN COALESCE(NEW.result_ref, '') ELSE '' END;
    same_id   boolean := TG_OP = 'UPDATE' AND OLD.id = NEW.id;
BEGIN
    IF was_open AND is_open AND same_id THEN
        IF (OLD.namespace, OLD.key, OLD.identity_hash, OLD.lease_expires_at) IS DISTINCT FROM
           (NEW.namespace, NEW.key, NEW.identity_hash, NEW.lease_expires_at) THEN
            UPDATE open_operations SET namespace = NEW.namespace, key = NEW.key, identity_hash = NEW.identity_hash,
                                       lease_expires_at = NEW.lease_expires_at
             WHERE id = NEW.id;
        END IF;
    ELSE
        IF was_open THEN
            DELETE FROM open_operations WHERE id = OLD.id;
        END IF;
        IF is_open THEN
            INSERT INTO open_operations (id, namespace, key, identity_hash, lease_expires_at)
            VALUES (NEW.id, NEW.namespace, NEW.key, NEW.identity_hash, NEW.lease_expires_at);
        END IF;
    END IF;

    IF was_final AND is_final AND same_id THEN
        IF (OLD.namespace, OLD.identity_hash, OLD.state, OLD.updated_at, OLD.content = '') IS DISTINCT FROM
           (NEW.namespace, NEW.identity_hash, NEW.state, NEW.updated_at, NEW.content = '') THEN
            UPDATE final_operations SET namespace = NEW.namespace, identity_hash = NEW.identity_hash, state = NEW.state,
                                        updated_at = NEW.updated_at, content_left = NEW.content <> ''
             WHERE id = NEW.id;
        END IF;
    ELSE
        IF was_final THEN
            DELETE FROM final_operations WHERE id = OLD.id;
        END IF;
        IF is_final THEN
            INSERT INTO final_operations (id, namespace, identity_hash, state, updated_at, content_left)
            VALUES (NEW.id, NEW.namespace, NEW.identity_hash, NEW.state, NEW.updated_at, NEW.content <> '');
        END IF;
    END IF;

    IF same_id AND old_ref <> '' AND new_ref <> '' THEN
        IF lower(old_ref) <> lower(new_ref) THEN
            UPDATE operation_result_refs SET value = lower(new_ref) WHERE operation_id = NEW.id;
        END IF;
    ELSE
        IF old_ref <> '' THEN
            DELETE FROM operation_result_refs WHERE operation_id = OLD.id;
        END IF;
        IF new_ref <> '' THEN
            INSERT INTO operation_result_refs (operation_id, value) VALUES (NEW.id, lower(new_ref));
        END IF;
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER operation_sets_insert AFTER INSERT ON operations
    FOR EACH ROW EXECUTE FUNCTION handoff_operation_sets();
-- Whatever changes a row of a side table: a change of set (the twin
-- states, the final ones), of a column the side tables copy, or of the
-- result ref. A begin changes none of them.
CREATE TRIGGER operation_sets_update AFTER UPDATE ON operations
    FOR EACH ROW
    WHEN ((OLD.state IN ('received', 'processing', 'action_pending', 'unknown_outcome', 'failed_retryable', 'failed_terminal'))
              IS DISTINCT FROM
          (NEW.state IN ('received', 'processing', 'action_pending', 'unknown_outcome', 'failed_retryable', 'failed_terminal'))
          OR (OLD.state IN ('completed', 'cancelled')) IS DISTINCT FROM (NEW.state IN ('completed', 'cancelled'))
          OR (OLD.id, OLD.namespace, OLD.key, OLD.identity_hash, OLD.lease_expires_at, OLD.result_ref) IS DISTINCT FROM
             (NEW.id, NEW.namespace, NEW.key, NEW.identity_hash, NEW.lease_expires_at, NEW.result_ref)
          OR (NEW.state IN ('completed', 'cancelled') AND
              (OLD.state, OLD.updated_at, OLD.content = '') IS DISTINCT FROM (NEW.state, NEW.updated_at, NEW.content = '')))
    EXECUTE FUNCTION handoff_operation_sets();
CREATE TRIGGER operation_sets_delete AFTER DELETE ON operations
    FOR EACH ROW EXECUTE FUNCTION handoff_operation_sets();

INSERT INTO open_operations (id, namespace, key, identity_hash, lease_expires_at)
SELECT id, namespace, key, identity_hash, lease_expires_at FROM operations
 WHERE state IN ('received', 'processing', 'action_pending', 'unknown_outcome', 'failed_retryable', 'failed_terminal');
INSERT INTO final_operations (id, namespace, identity_hash, state, updated_at, content_left)
SELECT id, namespace, identity_hash, state, updated_at, content <> '' FROM operations WHERE state IN ('completed', 'cancelled');
INSERT INTO operation_result_refs (operation_id, value)
SELECT id, lower(result_ref) FROM operations WHERE result_ref <> '';

-- The indexes that named state, updated_at, lease_expires_at or
-- result_ref: those of the sets above on their side tables, the rest over
-- the generated columns. store/ spells each predicate in its queries.
DROP INDEX IF EXISTS operations_twins;
DROP INDEX IF EXISTS operations_lease_expiry;
DROP INDEX IF EXISTS operations_content_retention;
DROP INDEX IF EXISTS operations_echoes;
DROP INDEX IF EXISTS operations_exact_result_ref;
DROP INDEX IF EXISTS operations_ready;
CREATE INDEX operations_ready ON operations (namespace, created_at, id) WHERE queued;
DROP INDEX IF EXISTS operations_desk;
CREATE INDEX operations_desk ON operations (desk_state, created_at, id) WHERE desk_state IS NOT NULL;
DROP INDEX IF EXISTS operations_awaiting_lookup;
CREATE INDEX operations_awaiting_lookup ON operations (type) WHERE desk_state = 'unknown_outcome' AND desk_entered_at IS NULL;
DROP INDEX IF EXISTS operations_twin_holds;
CREATE INDEX operations_twin_holds ON operations (namespace, identity_hash) WHERE twin_held;
-- 00004's trigram indexes, where pg_trgm is (see 00004), over the same
-- expressions but result_ref's, which is desk_result_ref's.
-- +goose StatementBegin
DO $$
DECLARE
    ext_schema text;
    col        text;
BEGIN
    SELECT n.nspname INTO ext_schema
      FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
     WHERE e.extname = 'pg_trgm';
    FOREACH col IN ARRAY ARRAY['key', 'event_id', 'correlation_id', 'provider_key', 'result_ref',
                                'last_error_message', 'last_error_code'] LOOP
        EXECUTE format('DROP INDEX IF EXISTS %I', 'operations_desk_search_' || col);
        IF ext_schema IS NOT NULL THEN
            EXECUTE format('CREATE INDEX %I ON operations USING gin (lower(COALESCE(%I, %L)) %I.gin_trgm_ops) '
                           'WHERE desk_state IS NOT NULL',
                           'operations_desk_search_' || col, CASE col WHEN 'result_ref' THEN 'desk_result_ref' ELSE col END,
                           '', ext_schema);
        END IF;
    END LOOP;
END
$$;
-- +goose StatementEnd
ANALYZE operations, open_operations, final_operations, operation_result_refs;

-- +goose Down
DROP TRIGGER IF EXISTS operation_sets_insert ON operations;
DROP TRIGGER IF EXISTS operation_sets_update ON operations;
DROP TRIGGER IF EXISTS operation_sets_delete ON operations;
DROP FUNCTION IF EXISTS handoff_operation_sets();
DROP TABLE IF EXISTS open_operations;
DROP TABLE IF EXISTS final_operations;
DROP TABLE IF EXISTS operation_result_refs;
DROP INDEX IF EXISTS operations_ready;
DROP INDEX IF EXISTS operations_desk;
DROP INDEX IF EXISTS operations_awaiting_lookup;
DROP INDEX IF EXISTS operations_twin_holds;
-- +goose StatementBegin
DO $$
DECLARE
    ext_schema text;
    col        text;
BEGIN
    SELECT n.nspname INTO ext_schema
      FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
     WHERE e.extname = 'pg_trgm';
    FOREACH col IN ARRAY ARRAY['key', 'event_id', 'correlation_id', 'provider_key', 'result_ref',
                                'last_error_message', 'last_error_code'] LOOP
        EXECUTE format('DROP INDEX IF EXISTS %I', 'operations_desk_search_' || col);
        IF ext_schema IS NOT NULL THEN
            EXECUTE format('CREATE INDEX %I ON operations USING gin (lower(COALESCE(%I, %L)) %I.gin_trgm_ops) '
                           'WHERE state IN (%L, %L)',
                           'operations_desk_search_' || col, col, '', ext_schema, 'unknown_outcome', 'failed_terminal');
        END IF;
    END LOOP;
END
$$;
-- +goose StatementEnd
ALTER TABLE operations RESET (fillfactor);
ALTER TABLE operations DROP COLUMN queued, DROP COLUMN desk_state, DROP COLUMN desk_result_ref, DROP COLUMN twin_held;
CREATE INDEX operations_ready ON operations (namespace, created_at, id)
    WHERE state IN ('received', 'failed_retryable');
CREATE INDEX operations_lease_expiry ON operations (lease_expires_at) WHERE lease_expires_at IS NOT NULL;
CREATE INDEX operations_desk ON operations (state, created_at, id)
    WHERE state IN ('unknown_outcome', 'failed_terminal');
CREATE INDEX operations_content_retention ON operations (updated_at) WHERE content <> '' AND state IN ('completed', 'cancelled');
CREATE INDEX operations_awaiting_lookup ON operations (type) WHERE state = 'unknown_outcome' AND desk_entered_at IS NULL;
CREATE INDEX operations_exact_result_ref ON operations USING hash (lower(result_ref)) WHERE result_ref <> '';
CREATE INDEX operations_twins ON operations (namespace, identity_hash)
    WHERE state IN ('received', 'processing', 'action_pending', 'unknown_outcome', 'failed_retryable', 'failed_terminal');
CREATE INDEX operations_twin_holds ON operations (namespace, identity_hash)
    WHERE state = 'awaiting_approval' AND last_error_code = 'twin_unresolved';
CREATE INDEX operations_echoes ON operations (namespace, identity_hash, updated_at)
    WHERE state = 'completed' AND identity_hash <> '';
