-- +goose Up
-- The Operations page searches every state (store/list.go, ListQuery.Deep):
-- a substring of the seven columns the desk searches or of the content, the
-- operation ID exactly, an attempt ID exactly. Migration 00004's trigram
-- indexes hold only the desk's states, so over every state each search read
-- the whole table (0.8 s at 100,000 operations). This adds one trigram GIN
-- index over the seven columns and the content joined by line breaks,
-- exactly store/list.go's searchText; the two IDs are found through the
-- primary keys of operations and attempts.
--
-- One index over one expression rather than eight: every write of a row
-- adds to each index once, and the planner keeps statistics for an
-- expression index, so it can tell a search that matches thousands of rows
-- (read operations in created_at order, stop at a page) from one that
-- matches a few (read the index). It chooses by a histogram of the
-- expression: with the default 100 buckets a substring found in 86 of
-- 100,000 rows but in one bucket's bound was taken for 1% of the table and
-- read in created_at order to the end (330 ms instead of 10); with 400
-- buckets none of 97 such searches was misjudged. ANALYZE of operations
-- then samples 120,000 rows instead of 30,000. (Values over 1 kB, such as
-- large contents, are left out of any histogram; with none the planner
-- takes a long substring for a rare one, which is the safe guess.)
--
-- What it costs the hot path. No update of operations is a HOT update:
-- every write changes updated_at (indexed by 00006) and every transition
-- changes state (named by the predicates of 00001's, 00004's and 00006's
-- partial indexes), so every register, claim, begin and settle already
-- adds an entry to every index of the table, and now to this one: the row's
-- distinct trigrams, about one per character of its key, IDs, error and
-- content, appended to the index's pending list (fastupdate). On 100,000
-- operations, 8,000 claims wrote 67,000 WAL records without this index and
-- 110,000 with it. Vacuum merges the pending list into the index; when none
-- has run for a while, the write that finds the list over
-- gin_pending_list_limit (4 MB) merges it before it commits.
--
-- Tried and left: the same index without the running states (processing,
-- action_pending), so that claim and begin skip it (75,500 WAL records),
-- and a B-tree to read those. Every search then read every running
-- operation (30 ms more at 4,000 of them), and the dearer index plan made
-- the planner read the table in created_at order for a substring it took
-- for 0.5% of the rows (400 ms).
--
-- Building the index locks out writes to operations until it is built
-- (about 10 s per 100,000 operations on two cores).
--
-- As in 00004: without pg_trgm the migration succeeds, says so, and the
-- search keeps working by reading the table.
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
        RAISE NOTICE 'handoff: pg_trgm is unavailable; the Operations page''s search will read every operation';
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

-- +goose Down
DROP INDEX IF EXISTS operations_search;
