-- +goose Up
-- The Operations page's search (store/list.go, ListQuery.Deep) moves from
-- 00009's trigram index on operations to a side table that is written only
-- when the searched text changes.
--
-- Why. No update of operations is a HOT update (see 00009), so every
-- register, claim, begin and settle put every trigram of the row — its key,
-- IDs, error and whole content — into 00009's index again, although that
-- text almost never changes after register. That index cost 15–25% of the
-- lifecycle's throughput and doubled its WAL (16 kB instead of 8 kB).
--
-- The searched text is split by when it changes, one row per part:
--   part 0, fixed at register: key, event ID, correlation ID, provider key
--     and content, lowercased, one per line. Rewritten only when one of
--     them changes: a content revision or a content purge.
--   part 1, the outcome: result ref, error message, error code, lowercased,
--     one per line. Present only while one of them is not empty, so a
--     settle without either writes nothing and one with either writes a
--     short row.
-- Register writes part 0 (and part 1 when an operation is born failed);
-- claim and begin change none of the searched columns and write nothing:
-- they pay the triggers' WHEN checks only.
--
-- The operation ID is not in the text: the search matches it (and an
-- attempt's ID) exactly, through the primary keys, not as a substring.
--
-- Triggers keep the table in step with every writer of operations (GORM,
-- the pgx single statement of store/fastpath.go, the multi-row statement of
-- store/multirow.go, the content purge) without any of them knowing. The
-- handoff never deletes an operation; if one is deleted by hand its text
-- goes with it (a trigger, not a foreign key: a foreign key would lock the
-- operation's row FOR KEY SHARE at every insert of its text, a WAL record
-- on the hot path for a delete that does not happen).
--
-- The table is locked for writes while the existing text is copied and the
-- index built, so that no write in between is missed (about 10 s per
-- 100,000 operations on two cores, as 00009).
LOCK TABLE operations IN SHARE ROW EXCLUSIVE MODE;

CREATE TABLE operation_search (
    operation_id text NOT NULL,
    part         smallint NOT NULL, -- 0: the text fixed at register; 1: the outcome
    body         text NOT NULL,
    PRIMARY KEY (operation_id, part)
);
-- As 00009 found for its expression: with the default 100 histogram buckets
-- the planner takes a substring found in a few rows but in one bucket's
-- bound for 1% of the table and reads operations in created_at order to the
-- end; with 400 it tells rare from common substrings.
ALTER TABLE operation_search ALTER COLUMN body SET STATISTICS 400;

-- +goose StatementBegin
-- TG_ARGV[0] names the parts to write: 'all', 'registered' or 'outcome'.
CREATE FUNCTION handoff_operation_search_write() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    parts text := TG_ARGV[0];
BEGIN
    IF TG_OP = 'DELETE' THEN
        DELETE FROM operation_search WHERE operation_id = OLD.id;
        RETURN NULL;
    END IF;
    IF TG_OP = 'UPDATE' AND OLD.id IS DISTINCT FROM NEW.id THEN
        DELETE FROM operation_search WHERE operation_id = OLD.id;
        parts := 'all';
    END IF;
    IF parts IN ('all', 'registered') THEN
        INSERT INTO operation_search (operation_id, part, body)
        VALUES (NEW.id, 0, lower(NEW.key || E'\n' || NEW.event_id || E'\n' || NEW.correlation_id || E'\n' ||
                                 NEW.provider_key || E'\n' || NEW.content))
        ON CONFLICT (operation_id, part) DO UPDATE SET body = EXCLUDED.body;
    END IF;
    IF parts IN ('all', 'outcome') THEN
        IF COALESCE(NEW.result_ref, '') = '' AND COALESCE(NEW.last_error_message, '') = ''
           AND COALESCE(NEW.last_error_code, '') = '' THEN
            IF TG_OP = 'UPDATE' THEN
                DELETE FROM operation_search WHERE operation_id = NEW.id AND part = 1;
            END IF;
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
-- The content is compared by its hash and by whether it is empty, not by
-- itself: comparing two large contents (up to 64 kB, kept out of line)
-- would read and decompress both at every transition, while a revision
-- changes the hash, and a purge (which keeps the hash) or a decision that
-- writes purged content back changes whether it is empty — which
-- PostgreSQL tells from the stored length alone.
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

INSERT INTO operation_search (operation_id, part, body)
SELECT id, 0, lower(key || E'\n' || event_id || E'\n' || correlation_id || E'\n' || provider_key || E'\n' || content)
  FROM operations;
INSERT INTO operation_search (operation_id, part, body)
SELECT id, 1, lower(COALESCE(result_ref, '') || E'\n' || COALESCE(last_error_message, '') || E'\n' ||
                    COALESCE(last_error_code, ''))
  FROM operations
 WHERE COALESCE(result_ref, '') <> '' OR COALESCE(last_error_message, '') <> '' OR COALESCE(last_error_code, '') <> '';

-- As 00009: without pg_trgm the migration succeeds, says so, and the search
-- keeps working by reading the side table.
-- +goose StatementBegin
DO $$
DECLARE
    ext_schema text;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') THEN
        BEGIN
            IF EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = 'public') THEN
                CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public;
            ELSE
                CREATE EXTENSION IF NOT EXISTS pg_trgm;
            END IF;
        EXCEPTION WHEN OTHERS THEN
            RAISE NOTICE 'handoff: cannot create extension pg_trgm (%)', SQLERRM;
        END;
    END IF;
    SELECT n.nspname INTO ext_schema
      FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
     WHERE e.extname = 'pg_trgm';
    IF ext_schema IS NULL THEN
        RAISE NOTICE 'handoff: pg_trgm is unavailable; the Operations page''s search will read every operation''s text';
        RETURN;
    END IF;
    EXECUTE format('CREATE INDEX IF NOT EXISTS operation_search_body ON operation_search USING gin (body %I.gin_trgm_ops)',
                   ext_schema);
END
$$;
-- +goose StatementEnd

DROP INDEX IF EXISTS operations_search;
ANALYZE operation_search;

-- +goose Down
DROP TRIGGER IF EXISTS operation_search_insert ON operations;
DROP TRIGGER IF EXISTS operation_search_registered ON operations;
DROP TRIGGER IF EXISTS operation_search_outcome ON operations;
DROP TRIGGER IF EXISTS operation_search_delete ON operations;
DROP FUNCTION IF EXISTS handoff_operation_search_write();
DROP TABLE IF EXISTS operation_search;
-- 00009's index, as 00009 built it.
-- +goose StatementBegin
DO $$
DECLARE
    ext_schema text;
BEGIN
    SELECT n.nspname INTO ext_schema
      FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
     WHERE e.extname = 'pg_trgm';
    IF ext_schema IS NULL THEN
        RETURN;
    END IF;
    EXECUTE format('CREATE INDEX IF NOT EXISTS operations_search ON operations USING gin ('
                   'lower(key || E''\n'' || event_id || E''\n'' || correlation_id || E''\n'' || provider_key || E''\n'' || '
                   'COALESCE(result_ref, '''') || E''\n'' || COALESCE(last_error_message, '''') || E''\n'' || '
                   'COALESCE(last_error_code, '''') || E''\n'' || content) %I.gin_trgm_ops)', ext_schema);
    ALTER INDEX operations_search ALTER COLUMN 1 SET STATISTICS 400;
END
$$;
-- +goose StatementEnd
