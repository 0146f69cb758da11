-- +goose Up
-- The Operations page's search matches the identifiers people paste whole
-- (event ID, correlation ID, provider key, result ref: 00022) through four
-- partial hash indexes on operations, one per column over its lowercased
-- value, instead of 00022's table of identifiers kept by the side table's
-- trigger.
--
-- Why. That table cost every lifecycle a row and an index entry for the
-- provider key at register and another for the result ref at settle, each
-- written by a statement of the trigger's — and because the result ref
-- changes at settle, every settle ran the trigger's function (PL/pgSQL,
-- and an executor start for its INSERT) for that one row. An index entry
-- is written by PostgreSQL inside the write it belongs to: a settle now
-- adds an entry for its result ref and one for its provider key (no update
-- of operations is HOT, so every row version carries its own entries, as
-- 00012 says of the text), and runs no trigger unless its error changed.
-- Measured on a two-call lifecycle: 0.15–0.3 kB less WAL
-- (docs/performance.md).
--
-- Hash, as 00022 chose for its table: an entry is the value's 4-byte hash
-- whatever the value's length (a result ref may be 1000 characters, over a
-- B-tree entry's limit). Partial, over the values that are not empty: most
-- operations have no event ID or correlation ID, and none has a result ref
-- before it settles. store/list.go's search spells each predicate so that
-- the planner takes the indexes.
--
-- The side table keeps the text (part 0, the key and content; part 1, the
-- error) and its trigger, which no longer watches the identifiers.
LOCK TABLE operations IN SHARE ROW EXCLUSIVE MODE;

CREATE INDEX operations_exact_event_id ON operations USING hash (lower(event_id)) WHERE event_id <> '';
CREATE INDEX operations_exact_correlation_id ON operations USING hash (lower(correlation_id)) WHERE correlation_id <> '';
CREATE INDEX operations_exact_provider_key ON operations USING hash (lower(provider_key)) WHERE provider_key <> '';
CREATE INDEX operations_exact_result_ref ON operations USING hash (lower(result_ref)) WHERE result_ref <> '';

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION handoff_operation_search_write() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    fresh   boolean := TG_OP = 'INSERT';
    had_err boolean;
    has_err boolean;
BEGIN
    IF TG_OP = 'DELETE' THEN
        DELETE FROM operation_search WHERE operation_id = OLD.id;
        RETURN NULL;
    END IF;
    IF TG_OP = 'UPDATE' AND OLD.id IS DISTINCT FROM NEW.id THEN
        DELETE FROM operation_search WHERE operation_id = OLD.id;
        fresh := true;
    END IF;

    -- Part 0. The content is compared by its hash and by whether it is
    -- empty, not by itself (as 00012's WHEN did).
    IF fresh THEN
        INSERT INTO operation_search (operation_id, part, body)
        VALUES (NEW.id, 0, lower(NEW.key || E'\n' || NEW.content));
    ELSIF (OLD.key, OLD.content_sha256, OLD.content = '') IS DISTINCT FROM (NEW.key, NEW.content_sha256, NEW.content = '') THEN
        UPDATE operation_search SET body = lower(NEW.key || E'\n' || NEW.content) WHERE operation_id = NEW.id AND part = 0;
    END IF;

    -- Part 1, kept only while the error has a message or a code.
    has_err := COALESCE(NEW.last_error_message, '') <> '' OR COALESCE(NEW.last_error_code, '') <> '';
    IF fresh THEN
        IF has_err THEN
            INSERT INTO operation_search (operation_id, part, body)
            VALUES (NEW.id, 1, lower(COALESCE(NEW.last_error_message, '') || E'\n' || COALESCE(NEW.last_error_code, '')));
        END IF;
    ELSIF (OLD.last_error_message, OLD.last_error_code) IS DISTINCT FROM (NEW.last_error_message, NEW.last_error_code) THEN
        had_err := COALESCE(OLD.last_error_message, '') <> '' OR COALESCE(OLD.last_error_code, '') <> '';
        IF NOT has_err THEN
            DELETE FROM operation_search WHERE operation_id = NEW.id AND part = 1;
        ELSIF had_err THEN
            UPDATE operation_search
               SET body = lower(COALESCE(NEW.last_error_message, '') || E'\n' || COALESCE(NEW.last_error_code, ''))
             WHERE operation_id = NEW.id AND part = 1;
        ELSE
            INSERT INTO operation_search (operation_id, part, body)
            VALUES (NEW.id, 1, lower(COALESCE(NEW.last_error_message, '') || E'\n' || COALESCE(NEW.last_error_code, '')));
        END IF;
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

DROP TRIGGER operation_search_update ON operations;
CREATE TRIGGER operation_search_update AFTER UPDATE ON operations
    FOR EACH ROW
    WHEN ((OLD.id, OLD.key, OLD.content_sha256, OLD.content = '', OLD.last_error_message, OLD.last_error_code)
          IS DISTINCT FROM
          (NEW.id, NEW.key, NEW.content_sha256, NEW.content = '', NEW.last_error_message, NEW.last_error_code))
    EXECUTE FUNCTION handoff_operation_search_write();
DROP TABLE operation_search_exact;
DROP FUNCTION handoff_operation_identifiers(text, text, text, text);
ANALYZE operations;

-- +goose Down
-- 00022's table, its functions and trigger, and the identifiers copied back.
LOCK TABLE operations IN SHARE ROW EXCLUSIVE MODE;
DROP INDEX IF EXISTS operations_exact_event_id;
DROP INDEX IF EXISTS operations_exact_correlation_id;
DROP INDEX IF EXISTS operations_exact_provider_key;
DROP INDEX IF EXISTS operations_exact_result_ref;
CREATE TABLE operation_search_exact (
    value        text NOT NULL, -- lower(identifier)
    operation_id text NOT NULL
);
CREATE INDEX operation_search_exact_value ON operation_search_exact USING hash (value);

-- +goose StatementBegin
-- The operation's identifiers as the exact table holds them: distinct,
-- lowercased, without the empty ones. PL/pgSQL, not SQL: each statement
-- here is a simple expression, where a query (unnest, array_agg) would go
-- through the executor at every settle.
CREATE FUNCTION handoff_operation_identifiers(event_id text, correlation_id text, provider_key text, result_ref text)
RETURNS text[] LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    ids text[] := '{}';
    v   text;
BEGIN
    FOREACH v IN ARRAY ARRAY[lower(event_id), lower(correlation_id), lower(provider_key), lower(result_ref)] LOOP
        IF COALESCE(v, '') <> '' AND NOT v = ANY (ids) THEN
            ids := ids || v;
        END IF;
    END LOOP;
    RETURN ids;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION handoff_operation_search_write() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    fresh   boolean := TG_OP = 'INSERT';
    had_err boolean;
    has_err boolean;
    old_ids text[] := '{}';
    new_ids text[];
BEGIN
    IF TG_OP = 'DELETE' THEN
        DELETE FROM operation_search WHERE operation_id = OLD.id;
        DELETE FROM operation_search_exact
         WHERE value = ANY (handoff_operation_identifiers(OLD.event_id, OLD.correlation_id, OLD.provider_key, OLD.result_ref))
           AND operation_id = OLD.id;
        RETURN NULL;
    END IF;
    IF TG_OP = 'UPDATE' AND OLD.id IS DISTINCT FROM NEW.id THEN
        DELETE FROM operation_search WHERE operation_id = OLD.id;
        DELETE FROM operation_search_exact
         WHERE value = ANY (handoff_operation_identifiers(OLD.event_id, OLD.correlation_id, OLD.provider_key, OLD.result_ref))
           AND operation_id = OLD.id;
        fresh := true;
    END IF;

    -- Part 0. The content is compared by its hash and by whether it is
    -- empty, not by itself (as 00012's WHEN did).
    IF fresh THEN
        INSERT INTO operation_search (operation_id, part, body)
        VALUES (NEW.id, 0, lower(NEW.key || E'\n' || NEW.content));
    ELSIF (OLD.key, OLD.content_sha256, OLD.content = '') IS DISTINCT FROM (NEW.key, NEW.content_sha256, NEW.content = '') THEN
        UPDATE operation_search SET body = lower(NEW.key || E'\n' || NEW.content) WHERE operation_id = NEW.id AND part = 0;
    END IF;

    -- Part 1, kept only while the error has a message or a code.
    has_err := COALESCE(NEW.last_error_message, '') <> '' OR COALESCE(NEW.last_error_code, '') <> '';
    IF fresh THEN
        IF has_err THEN
            INSERT INTO operation_search (operation_id, part, body)
            VALUES (NEW.id, 1, lower(COALESCE(NEW.last_error_message, '') || E'\n' || COALESCE(NEW.last_error_code, '')));
        END IF;
    ELSIF (OLD.last_error_message, OLD.last_error_code) IS DISTINCT FROM (NEW.last_error_message, NEW.last_error_code) THEN
        had_err := COALESCE(OLD.last_error_message, '') <> '' OR COALESCE(OLD.last_error_code, '') <> '';
        IF NOT has_err THEN
            DELETE FROM operation_search WHERE operation_id = NEW.id AND part = 1;
        ELSIF had_err THEN
            UPDATE operation_search
               SET body = lower(COALESCE(NEW.last_error_message, '') || E'\n' || COALESCE(NEW.last_error_code, ''))
             WHERE operation_id = NEW.id AND part = 1;
        ELSE
            INSERT INTO operation_search (operation_id, part, body)
            VALUES (NEW.id, 1, lower(COALESCE(NEW.last_error_message, '') || E'\n' || COALESCE(NEW.last_error_code, '')));
        END IF;
    END IF;

    -- The identifiers. A registration inserts them, each once; a settle
    -- adds its result ref; any other change deletes what is gone and
    -- inserts what is new.
    IF fresh THEN
        INSERT INTO operation_search_exact (value, operation_id)
        SELECT DISTINCT v, NEW.id
          FROM unnest(ARRAY[lower(NEW.event_id), lower(NEW.correlation_id), lower(NEW.provider_key),
                            lower(COALESCE(NEW.result_ref, ''))]) AS v
         WHERE v <> '';
    ELSIF (OLD.event_id, OLD.correlation_id, OLD.provider_key) IS NOT DISTINCT FROM
          (NEW.event_id, NEW.correlation_id, NEW.provider_key) AND COALESCE(OLD.result_ref, '') = '' THEN
        IF COALESCE(NEW.result_ref, '') <> '' AND
           lower(NEW.result_ref) NOT IN (lower(NEW.event_id), lower(NEW.correlation_id), lower(NEW.provider_key)) THEN
            INSERT INTO operation_search_exact (value, operation_id) VALUES (lower(NEW.result_ref), NEW.id);
        END IF;
    ELSIF (OLD.event_id, OLD.correlation_id, OLD.provider_key, OLD.result_ref) IS DISTINCT FROM
          (NEW.event_id, NEW.correlation_id, NEW.provider_key, NEW.result_ref) THEN
        old_ids := handoff_operation_identifiers(OLD.event_id, OLD.correlation_id, OLD.provider_key, OLD.result_ref);
        new_ids := handoff_operation_identifiers(NEW.event_id, NEW.correlation_id, NEW.provider_key, NEW.result_ref);
        IF NOT old_ids <@ new_ids THEN
            DELETE FROM operation_search_exact
             WHERE value = ANY (old_ids) AND NOT value = ANY (new_ids) AND operation_id = NEW.id;
        END IF;
        IF NOT new_ids <@ old_ids THEN
            INSERT INTO operation_search_exact (value, operation_id)
            SELECT v, NEW.id FROM unnest(new_ids) AS v WHERE NOT v = ANY (old_ids);
        END IF;
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

DROP TRIGGER operation_search_update ON operations;
CREATE TRIGGER operation_search_update AFTER UPDATE ON operations
    FOR EACH ROW
    WHEN ((OLD.id, OLD.key, OLD.content_sha256, OLD.content = '', OLD.last_error_message, OLD.last_error_code,
           OLD.event_id, OLD.correlation_id, OLD.provider_key, OLD.result_ref)
          IS DISTINCT FROM
          (NEW.id, NEW.key, NEW.content_sha256, NEW.content = '', NEW.last_error_message, NEW.last_error_code,
           NEW.event_id, NEW.correlation_id, NEW.provider_key, NEW.result_ref))
    EXECUTE FUNCTION handoff_operation_search_write();
INSERT INTO operation_search_exact (value, operation_id)
SELECT v, o.id FROM operations o,
       unnest(handoff_operation_identifiers(o.event_id, o.correlation_id, o.provider_key, o.result_ref)) AS v;
ANALYZE operation_search_exact;
