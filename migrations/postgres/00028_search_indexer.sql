-- +goose Up
-- The Operations page's text search (store/list.go, ListQuery.Deep) leaves
-- the write path. Until now a trigger of operations wrote the side table's
-- text (00012, 00025) in the transaction of every register and of every
-- settle that changed the error, so each of them added the text's trigrams
-- to operation_search_body's pending list (and merged that list when it was
-- full) before it committed. Now the trigger only queues the operation's ID
-- in operation_search_queue, a table without any index, and the search
-- indexer (store/search_index.go, run by every replica) writes the text
-- from the queue in batches, a moment later. The search finds an operation
-- by its content, its key and its error within seconds of a change; by its
-- ID, an attempt's ID, its key written whole and its identifiers at once,
-- from operations itself (store/list.go).
--
-- Why a queue filled by a trigger. The indexer must find every change from
-- the database alone (after a crash, on another replica) without an index
-- on operations that a settle would have to maintain: updated_at and the
-- state columns change at every settle, and no index may cover them if a
-- settle is to be a HOT update. The trigger fires on the same writes as
-- before (every insert; an update only when the key, the content or the
-- error changed — a WHEN clause PostgreSQL checks without calling the
-- function), and what it writes is one short heap row, no index entry.
--
-- The side table keeps its rows (part 0: key and content; part 1: the
-- error's message and code, only while it has one), each written only when
-- its text changed. Beside it, operation_search_stamp holds for each
-- operation the stamp of the state its text was written from: twice
-- operations.version, plus one when the content is empty. A content purge
-- empties the content without a new version, and nothing else changes the
-- text without one, so a later state of an operation always has a larger
-- stamp. Two indexers may index one operation at once (it was queued
-- twice); each writes the text only when it raised the stamp, and the
-- stamp's row lock orders them: the one that read the older state writes
-- nothing. The stamp is its own small row so that raising it (at a settle
-- with a new error, say) does not rewrite part 0, whose trigrams would go
-- into the index again.
LOCK TABLE operations IN SHARE ROW EXCLUSIVE MODE;

DROP TRIGGER operation_search_insert ON operations;
DROP TRIGGER operation_search_update ON operations;
DROP TRIGGER operation_search_delete ON operations;
DROP FUNCTION handoff_operation_search_write();

CREATE TABLE operation_search_stamp (
    operation_id text PRIMARY KEY,
    stamp        bigint NOT NULL
);
INSERT INTO operation_search_stamp (operation_id, stamp)
SELECT id, 2 * version + (content = '')::int FROM operations;

-- The IDs of the operations whose text changed since the indexer last
-- wrote it. An operation may be in it more than once; the indexer takes
-- rows FOR UPDATE SKIP LOCKED and deletes those it took.
CREATE TABLE operation_search_queue (
    operation_id text NOT NULL
);

-- +goose StatementBegin
CREATE FUNCTION handoff_operation_search_queue() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        INSERT INTO operation_search_queue (operation_id) VALUES (OLD.id);
    END IF;
    IF TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND OLD.id IS DISTINCT FROM NEW.id) THEN
        INSERT INTO operation_search_queue (operation_id) VALUES (NEW.id);
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER operation_search_insert AFTER INSERT ON operations
    FOR EACH ROW EXECUTE FUNCTION handoff_operation_search_queue();
CREATE TRIGGER operation_search_update AFTER UPDATE ON operations
    FOR EACH ROW
    WHEN ((OLD.id, OLD.key, OLD.content_sha256, OLD.content = '', OLD.last_error_message, OLD.last_error_code)
          IS DISTINCT FROM
          (NEW.id, NEW.key, NEW.content_sha256, NEW.content = '', NEW.last_error_message, NEW.last_error_code))
    EXECUTE FUNCTION handoff_operation_search_queue();
CREATE TRIGGER operation_search_delete AFTER DELETE ON operations
    FOR EACH ROW EXECUTE FUNCTION handoff_operation_search_queue();

-- +goose Down
-- 00025's trigger, which writes the text in the write's transaction; the
-- queue's operations are written now, so nothing queued is lost.
LOCK TABLE operations IN SHARE ROW EXCLUSIVE MODE;
DROP TRIGGER operation_search_insert ON operations;
DROP TRIGGER operation_search_update ON operations;
DROP TRIGGER operation_search_delete ON operations;
DROP FUNCTION handoff_operation_search_queue();

DELETE FROM operation_search WHERE operation_id IN (SELECT operation_id FROM operation_search_queue);
INSERT INTO operation_search (operation_id, part, body)
SELECT o.id, 0, lower(o.key || E'\n' || o.content)
  FROM operations o WHERE o.id IN (SELECT operation_id FROM operation_search_queue);
INSERT INTO operation_search (operation_id, part, body)
SELECT o.id, 1, lower(COALESCE(o.last_error_message, '') || E'\n' || COALESCE(o.last_error_code, ''))
  FROM operations o WHERE o.id IN (SELECT operation_id FROM operation_search_queue)
   AND (COALESCE(o.last_error_message, '') <> '' OR COALESCE(o.last_error_code, '') <> '');
DROP TABLE operation_search_queue;
DROP TABLE operation_search_stamp;

-- +goose StatementBegin
CREATE FUNCTION handoff_operation_search_write() RETURNS trigger
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

    IF fresh THEN
        INSERT INTO operation_search (operation_id, part, body)
        VALUES (NEW.id, 0, lower(NEW.key || E'\n' || NEW.content));
    ELSIF (OLD.key, OLD.content_sha256, OLD.content = '') IS DISTINCT FROM (NEW.key, NEW.content_sha256, NEW.content = '') THEN
        UPDATE operation_search SET body = lower(NEW.key || E'\n' || NEW.content) WHERE operation_id = NEW.id AND part = 0;
    END IF;

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
CREATE TRIGGER operation_search_insert AFTER INSERT ON operations
    FOR EACH ROW EXECUTE FUNCTION handoff_operation_search_write();
CREATE TRIGGER operation_search_update AFTER UPDATE ON operations
    FOR EACH ROW
    WHEN ((OLD.id, OLD.key, OLD.content_sha256, OLD.content = '', OLD.last_error_message, OLD.last_error_code)
          IS DISTINCT FROM
          (NEW.id, NEW.key, NEW.content_sha256, NEW.content = '', NEW.last_error_message, NEW.last_error_code))
    EXECUTE FUNCTION handoff_operation_search_write();
CREATE TRIGGER operation_search_delete AFTER DELETE ON operations
    FOR EACH ROW EXECUTE FUNCTION handoff_operation_search_write();
