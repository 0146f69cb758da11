-- +goose Up
-- The desk's live search matches a substring of seven columns of the items
-- in the desk (store/list.go: LOWER(COALESCE(col, '')) LIKE '%…%'). Without
-- an index every search reads every desk row; trigram GIN indexes on exactly
-- those expressions let PostgreSQL combine the seven with a BitmapOr. They
-- are partial, over the desk's states only, so the workflow's hot path —
-- register, claim, begin, settle of operations that never reach the desk —
-- never maintains them.
--
-- pg_trgm is a contrib extension: creating it needs the right to, and it may
-- not be installed at all. Then the search keeps working by scanning the
-- desk, and the migration says so instead of failing. The extension goes
-- into "public" when there is one, so that a schema-per-tenant (or
-- schema-per-test) database shares one copy that no DROP SCHEMA takes away;
-- the operator class is named with the extension's schema because it need
-- not be on the search_path.
-- +goose StatementBegin
DO $$
DECLARE
    ext_schema text;
    col        text;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') THEN
        BEGIN
            IF EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = 'public') THEN
                CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public;
            ELSE
                CREATE EXTENSION IF NOT EXISTS pg_trgm;
            END IF;
        EXCEPTION WHEN OTHERS THEN
            -- Not installed, not allowed, or created by a concurrent
            -- migration a moment ago: look again below.
            RAISE NOTICE 'handoff: cannot create extension pg_trgm (%)', SQLERRM;
        END;
    END IF;
    SELECT n.nspname INTO ext_schema
      FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
     WHERE e.extname = 'pg_trgm';
    IF ext_schema IS NULL THEN
        RAISE NOTICE 'handoff: pg_trgm is unavailable; the desk search will scan the desk''s items';
        RETURN;
    END IF;
    FOREACH col IN ARRAY ARRAY['key', 'event_id', 'correlation_id', 'provider_key', 'result_ref',
                                'last_error_message', 'last_error_code'] LOOP
        EXECUTE format('CREATE INDEX IF NOT EXISTS %I ON operations USING gin (lower(COALESCE(%I, %L)) %I.gin_trgm_ops) '
                       'WHERE state IN (%L, %L)',
                       'operations_desk_search_' || col, col, '', ext_schema, 'unknown_outcome', 'failed_terminal');
    END LOOP;
END
$$;
-- +goose StatementEnd

-- +goose Down
DROP INDEX IF EXISTS operations_desk_search_key;
DROP INDEX IF EXISTS operations_desk_search_event_id;
DROP INDEX IF EXISTS operations_desk_search_correlation_id;
DROP INDEX IF EXISTS operations_desk_search_provider_key;
DROP INDEX IF EXISTS operations_desk_search_result_ref;
DROP INDEX IF EXISTS operations_desk_search_last_error_message;
DROP INDEX IF EXISTS operations_desk_search_last_error_code;
