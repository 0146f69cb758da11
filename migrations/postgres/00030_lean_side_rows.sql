-- +goose Up
-- Fewer rows and index entries per lifecycle for what 00028 and 00029 put
-- beside operations (docs/design/performance-log.md, "WAL per lifecycle
-- after 00028 and 00029"):
--
--   - The search indexer takes turns (store/search_index.go): a batch
--     first takes a transaction-scoped advisory lock, without waiting, and
--     reads in a statement that starts after it, so every batch reads a
--     snapshot taken after the previous batch committed. A later batch
--     then never writes an older state than an earlier one, which is what
--     operation_search_stamp was for; it goes, with its row and primary
--     key entry per operation. The queue's rows are deleted without a row
--     lock first (one WAL record each instead of two), and the text rows
--     are inserted without ON CONFLICT (no confirmation record): only the
--     batch that holds the turn writes them.
--   - The result ref moves into final_operations (result_ref, lowercased;
--     NULL when there is none, which a hash index does not hold): a result
--     ref is set only by the transitions into completed, which is final,
--     so its row is there already, and operation_result_refs' row and
--     primary key entry go.
--   - open_operations is keyed by (namespace, identity_hash, id), the twin
--     check's index made its primary key, so a registration adds two index
--     entries there instead of three. The trigger finds an operation's row
--     by the old row's namespace and identity hash.
LOCK TABLE operations IN SHARE ROW EXCLUSIVE MODE;

DROP TABLE operation_search_stamp;

ALTER TABLE final_operations ADD COLUMN result_ref text;
UPDATE final_operations f SET result_ref = r.value FROM operation_result_refs r WHERE r.operation_id = f.id;
CREATE INDEX final_operations_result_ref ON final_operations USING hash (result_ref);
DROP TABLE operation_result_refs;

ALTER TABLE open_operations DROP CONSTRAINT open_operations_pkey;
DROP INDEX open_operations_twins;
ALTER TABLE open_operations ADD CONSTRAINT open_operations_twins PRIMARY KEY (namespace, identity_hash, id);

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION handoff_operation_sets() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    was_open  boolean := TG_OP <> 'INSERT' AND OLD.state IN ('received', 'processing', 'action_pending',
                                                             'unknown_outcome', 'failed_retryable', 'failed_terminal');
    is_open   boolean := TG_OP <> 'DELETE' AND NEW.state IN ('received', 'processing', 'action_pending',
                                                            'unknown_outcome', 'failed_retryable', 'failed_terminal');
    was_final boolean := TG_OP <> 'INSERT' AND OLD.state IN ('completed', 'cancelled');
    is_final  boolean := TG_OP <> 'DELETE' AND NEW.state IN ('completed', 'cancelled');
    same_id   boolean := TG_OP = 'UPDATE' AND OLD.id = NEW.id;
BEGIN
    IF was_open AND is_open AND same_id THEN
        IF (OLD.namespace, OLD.key, OLD.identity_hash, OLD.lease_expires_at) IS DISTINCT FROM
           (NEW.namespace, NEW.key, NEW.identity_hash, NEW.lease_expires_at) THEN
            UPDATE open_operations SET namespace = NEW.namespace, key = NEW.key, identity_hash = NEW.identity_hash,
                                       lease_expires_at = NEW.lease_expires_at
             WHERE namespace = OLD.namespace AND identity_hash = OLD.identity_hash AND id = OLD.id;
        END IF;
    ELSE
        IF was_open THEN
            DELETE FROM open_operations WHERE namespace = OLD.namespace AND identity_hash = OLD.identity_hash AND id = OLD.id;
        END IF;
        IF is_open THEN
            INSERT INTO open_operations (id, namespace, key, identity_hash, lease_expires_at)
            VALUES (NEW.id, NEW.namespace, NEW.key, NEW.identity_hash, NEW.lease_expires_at);
        END IF;
    END IF;

    IF was_final AND is_final AND same_id THEN
        IF (OLD.namespace, OLD.identity_hash, OLD.state, OLD.updated_at, OLD.content = '', lower(NULLIF(OLD.result_ref, ''))) IS DISTINCT FROM
           (NEW.namespace, NEW.identity_hash, NEW.state, NEW.updated_at, NEW.content = '', lower(NULLIF(NEW.result_ref, ''))) THEN
            UPDATE final_operations SET namespace = NEW.namespace, identity_hash = NEW.identity_hash, state = NEW.state,
                                        updated_at = NEW.updated_at, content_left = NEW.content <> '',
                                        result_ref = lower(NULLIF(NEW.result_ref, ''))
             WHERE id = NEW.id;
        END IF;
    ELSE
        IF was_final THEN
            DELETE FROM final_operations WHERE id = OLD.id;
        END IF;
        IF is_final THEN
            INSERT INTO final_operations (id, namespace, identity_hash, state, updated_at, content_left, result_ref)
            VALUES (NEW.id, NEW.namespace, NEW.identity_hash, NEW.state, NEW.updated_at, NEW.content <> '',
                    lower(NULLIF(NEW.result_ref, '')));
        END IF;
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- 00029's, but that a change of the result ref matters only to a final
-- operation (the only one that has one).
DROP TRIGGER operation_sets_update ON operations;
CREATE TRIGGER operation_sets_update AFTER UPDATE ON operations
    FOR EACH ROW
    WHEN ((OLD.state IN ('received', 'processing', 'action_pending', 'unknown_outcome', 'failed_retryable', 'failed_terminal'))
              IS DISTINCT FROM
          (NEW.state IN ('received', 'processing', 'action_pending', 'unknown_outcome', 'failed_retryable', 'failed_terminal'))
          OR (OLD.state IN ('completed', 'cancelled')) IS DISTINCT FROM (NEW.state IN ('completed', 'cancelled'))
          OR (OLD.id, OLD.namespace, OLD.key, OLD.identity_hash, OLD.lease_expires_at) IS DISTINCT FROM
             (NEW.id, NEW.namespace, NEW.key, NEW.identity_hash, NEW.lease_expires_at)
          OR (NEW.state IN ('completed', 'cancelled') AND
              (OLD.state, OLD.updated_at, OLD.content = '', OLD.result_ref) IS DISTINCT FROM
              (NEW.state, NEW.updated_at, NEW.content = '', NEW.result_ref)))
    EXECUTE FUNCTION handoff_operation_sets();
ANALYZE final_operations, open_operations;

-- +goose Down
LOCK TABLE operations IN SHARE ROW EXCLUSIVE MODE;

CREATE TABLE operation_search_stamp (
    operation_id text PRIMARY KEY,
    stamp        bigint NOT NULL
);
INSERT INTO operation_search_stamp (operation_id, stamp)
SELECT id, 2 * version + (content = '')::int FROM operations WHERE id IN (SELECT operation_id FROM operation_search);

CREATE TABLE operation_result_refs (
    operation_id text PRIMARY KEY,
    value        text NOT NULL
);
CREATE INDEX operation_result_refs_value ON operation_result_refs USING hash (value);
INSERT INTO operation_result_refs (operation_id, value)
SELECT id, lower(result_ref) FROM operations WHERE result_ref <> '';
DROP INDEX final_operations_result_ref;
ALTER TABLE final_operations DROP COLUMN result_ref;

ALTER TABLE open_operations DROP CONSTRAINT open_operations_twins;
ALTER TABLE open_operations ADD PRIMARY KEY (id);
CREATE INDEX open_operations_twins ON open_operations (namespace, identity_hash);

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION handoff_operation_sets() RETURNS trigger
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
DROP TRIGGER operation_sets_update ON operations;
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
