-- +goose Up
-- The search side table's trigger (00012) wrote every part with INSERT …
-- ON CONFLICT DO UPDATE. A speculative insert costs a second WAL record
-- (its confirmation) and an extra pass over the primary key, on the
-- registration (part 0) and on the settle that first writes an outcome
-- (part 1) of every lifecycle, where the part cannot exist: the operation
-- is new, or had no outcome, and part 1 is kept only while it has one.
-- Those now insert plainly; the rest (a content revision or purge, a
-- changed outcome) keep the upsert. A part that exists where the rule
-- says it cannot (written by hand) makes the write fail on the primary
-- key rather than keep two texts.
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
            -- No outcome before: part 1 is absent (it is kept only while
            -- one of them is not empty).
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

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION handoff_operation_search_write() RETURNS trigger
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
