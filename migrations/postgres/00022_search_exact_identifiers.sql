-- +goose Up
-- The Operations page's search (store/list.go, ListQuery.Deep) matches the
-- identifiers people paste whole — event ID, correlation ID, provider key,
-- result ref — exactly (case-insensitively, the whole value) instead of as
-- substrings, and keeps substring search for the text people remember a
-- part of: the key, the content and the error's message and code.
--
-- Why. Every identifier in 00012's side table put one trigram per
-- character into its GIN index: a provider key (hk_ and 32 hex digits) and
-- a result ref cost about 35 pending-list entries each, at every register
-- and settle, for a search nobody makes by a part of a hash. The side
-- table and its trigram index were the largest share of a lifecycle's WAL
-- (3.0 kB of 9.6 kB).
--
-- Now:
--   operation_search part 0: key and content, lowercased, one per line;
--   operation_search part 1: error message and code, lowercased, one per
--     line, present only while one of them is not empty (a settle with a
--     result ref and no error writes no part 1);
--   operation_search_exact: one row per distinct non-empty identifier of
--     the operation, lowercased, with a hash index on it. A hash index,
--     not a B-tree: its entry is the value's 4-byte hash whatever the
--     value's length (a result ref may be 1000 characters, over a B-tree
--     entry's limit), it costs less WAL per entry, and equality is all it
--     is asked. The table has no key: the trigger writes each value of an
--     operation once.
--
-- One UPDATE trigger, whose WHEN names every searched column, instead of
-- 00012's two: claim and begin change none of them and pay one check; a
-- settle writes only the parts whose columns changed.
LOCK TABLE operations IN SHARE ROW EXCLUSIVE MODE;

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

DROP TRIGGER operation_search_insert ON operations;
DROP TRIGGER operation_search_registered ON operations;
DROP TRIGGER operation_search_outcome ON operations;
DROP TRIGGER operation_search_delete ON operations;
CREATE TRIGGER operation_search_insert AFTER INSERT ON operations
    FOR EACH ROW EXECUTE FUNCTION handoff_operation_search_write();
CREATE TRIGGER operation_search_update AFTER UPDATE ON operations
    FOR EACH ROW
    WHEN ((OLD.id, OLD.key, OLD.content_sha256, OLD.content = '', OLD.last_error_message, OLD.last_error_code,
           OLD.event_id, OLD.correlation_id, OLD.provider_key, OLD.result_ref)
          IS DISTINCT FROM
          (NEW.id, NEW.key, NEW.content_sha256, NEW.content = '', NEW.last_error_message, NEW.last_error_code,
           NEW.event_id, NEW.correlation_id, NEW.provider_key, NEW.result_ref))
    EXECUTE FUNCTION handoff_operation_search_write();
CREATE TRIGGER operation_search_delete AFTER DELETE ON operations
    FOR EACH ROW EXECUTE FUNCTION handoff_operation_search_write();

-- The existing text, in the new parts.
UPDATE operation_search s SET body = lower(o.key || E'\n' || o.content)
  FROM operations o WHERE s.operation_id = o.id AND s.part = 0;
DELETE FROM operation_search s USING operations o
 WHERE s.operation_id = o.id AND s.part = 1
   AND COALESCE(o.last_error_message, '') = '' AND COALESCE(o.last_error_code, '') = '';
UPDATE operation_search s SET body = lower(COALESCE(o.last_error_message, '') || E'\n' || COALESCE(o.last_error_code, ''))
  FROM operations o WHERE s.operation_id = o.id AND s.part = 1;
INSERT INTO operation_search_exact (value, operation_id)
SELECT v, o.id FROM operations o,
       unnest(handoff_operation_identifiers(o.event_id, o.correlation_id, o.provider_key, o.result_ref)) AS v;
ANALYZE operation_search, operation_search_exact;

-- +goose Down
DROP TRIGGER IF EXISTS operation_search_insert ON operations;
DROP TRIGGER IF EXISTS operation_search_update ON operations;
DROP TRIGGER IF EXISTS operation_search_delete ON operations;
DROP TABLE IF EXISTS operation_search_exact;
DROP FUNCTION IF EXISTS handoff_operation_identifiers(text, text, text, text);
-- 00017's function and 00012's triggers.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION handoff_operation_search_write() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    parts text := TG_ARGV[0];
    fresh boolean := TG_OP = 'INSERT';
BEGIN
    IF TG_OP = 'DELETE' THEN
        DELETE FROM operation_search WHERE operation_id = OLD.id;
        RETURN NULL;
    END IF;
    IF TG_OP = 'UPDATE' AND OLD.id IS DISTINCT FROM NEW.id THEN
        DELETE FROM operation_search WHERE operation_id = OLD.id;
        parts := 'all';
        fresh := true;
    END IF;
    IF parts IN ('all', 'registered') THEN
        IF fresh THEN
            INSERT INTO operation_search (operation_id, part, body)
            VALUES (NEW.id, 0, lower(NEW.key || E'\n' || NEW.event_id || E'\n' || NEW.correlation_id || E'\n' ||
                                     NEW.provider_key || E'\n' || NEW.content));
        ELSE
            INSERT INTO operation_search (operation_id, part, body)
            VALUES (NEW.id, 0, lower(NEW.key || E'\n' || NEW.event_id || E'\n' || NEW.correlation_id || E'\n' ||
                                     NEW.provider_key || E'\n' || NEW.content))
            ON CONFLICT (operation_id, part) DO UPDATE SET body = EXCLUDED.body;
        END IF;
    END IF;
    IF parts IN ('all', 'outcome') THEN
        IF COALESCE(NEW.result_ref, '') = '' AND COALESCE(NEW.last_error_message, '') = ''
           AND COALESCE(NEW.last_error_code, '') = '' THEN
            IF NOT fresh THEN
                DELETE FROM operation_search WHERE operation_id = NEW.id AND part = 1;
            END IF;
        ELSIF fresh OR (COALESCE(OLD.result_ref, '') = '' AND COALESCE(OLD.last_error_message, '') = ''
                        AND COALESCE(OLD.last_error_code, '') = '') THEN
            INSERT INTO operation_search (operation_id, part, body)
            VALUES (NEW.id, 1, lower(COALESCE(NEW.result_ref, '') || E'\n' || COALESCE(NEW.last_error_message, '') ||
                                     E'\n' || COALESCE(NEW.last_error_code, '')));
        ELSE
            INSERT INTO operation_search (operation_id, part, body)
            VALUES (NEW.id, 1, lower(COALESCE(NEW.result_ref, '') || E'\n' || COALESCE(NEW.last_error_message, '') ||
                                     E'\n' || COALESCE(NEW.last_error_code, '')))
            ON CONFLICT (operation_id, part) DO UPDATE SET body = EXCLUDED.body;
        END IF;
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER operation_search_insert AFTER INSERT ON operations
    FOR EACH ROW EXECUTE FUNCTION handoff_operation_search_write('all');
CREATE TRIGGER operation_search_registered AFTER UPDATE ON operations
    FOR EACH ROW
    WHEN ((OLD.id, OLD.key, OLD.event_id, OLD.correlation_id, OLD.provider_key, OLD.content_sha256, OLD.content = '')
          IS DISTINCT FROM
          (NEW.id, NEW.key, NEW.event_id, NEW.correlation_id, NEW.provider_key, NEW.content_sha256, NEW.content = ''))
    EXECUTE FUNCTION handoff_operation_search_write('registered');
CREATE TRIGGER operation_search_outcome AFTER UPDATE ON operations
    FOR EACH ROW
    WHEN ((OLD.result_ref, OLD.last_error_message, OLD.last_error_code) IS DISTINCT FROM
          (NEW.result_ref, NEW.last_error_message, NEW.last_error_code))
    EXECUTE FUNCTION handoff_operation_search_write('outcome');
CREATE TRIGGER operation_search_delete AFTER DELETE ON operations
    FOR EACH ROW EXECUTE FUNCTION handoff_operation_search_write('all');
-- The text as 00012 wrote it.
UPDATE operation_search s
   SET body = lower(o.key || E'\n' || o.event_id || E'\n' || o.correlation_id || E'\n' || o.provider_key || E'\n' || o.content)
  FROM operations o WHERE s.operation_id = o.id AND s.part = 0;
DELETE FROM operation_search WHERE part = 1;
INSERT INTO operation_search (operation_id, part, body)
SELECT id, 1, lower(COALESCE(result_ref, '') || E'\n' || COALESCE(last_error_message, '') || E'\n' ||
                    COALESCE(last_error_code, ''))
  FROM operations
 WHERE COALESCE(result_ref, '') <> '' OR COALESCE(last_error_message, '') <> '' OR COALESCE(last_error_code, '') <> '';
