-- +goose Up
-- The columns of operations in a new order: those a running operation's
-- updates change — its claim, begin, heartbeats and settle — last,
-- together, after every column that is written once or seldom (the key,
-- the content and its hashes, the provider key, the desk's columns).
--
-- Why. PostgreSQL logs a HOT update's new row version without the bytes
-- it shares with the old one at its start and at its end (a prefix and a
-- suffix, which it looks for when both versions are on one page, as a
-- HOT update's are). Until now a settle changed state (the fifth column)
-- and updated_at (the 42nd), so everything between them — the
-- fingerprint, the content, its hash, the provider key — went into the
-- WAL again at every begin, heartbeat and settle. Now a settle logs from
-- its result on, a heartbeat from its lease on
-- (docs/design/performance-log.md, "WAL per lifecycle after 00028 and
-- 00029").
--
-- PostgreSQL cannot move a column, so the table is written anew and its
-- indexes, constraints, triggers and the foreign keys that name it are
-- made again under the same names, with writes locked out meanwhile
-- (seconds per 100,000 operations). No query depends on the order: the
-- store names every column it writes and reads rows by column name.
LOCK TABLE operations IN ACCESS EXCLUSIVE MODE;

CREATE TABLE operations_reordered (
    id text NOT NULL,
    namespace text NOT NULL,
    key text NOT NULL,
    type text NOT NULL,
    event_id text DEFAULT '' NOT NULL,
    source text DEFAULT '' NOT NULL,
    correlation_id text DEFAULT '' NOT NULL,
    caused_by text DEFAULT '' NOT NULL,
    supersedes text DEFAULT '' NOT NULL,
    superseded_by text DEFAULT '' NOT NULL,
    fingerprint text NOT NULL,
    identity_hash text DEFAULT '' NOT NULL,
    content_version integer NOT NULL,
    content_sha256 text NOT NULL,
    content text NOT NULL,
    content_author text DEFAULT '' NOT NULL,
    content_purged_at timestamp with time zone,
    provider_key text NOT NULL,
    approval_version integer,
    approval_by text,
    approval_at timestamp with time zone,
    created_at timestamp with time zone NOT NULL,
    assignee text DEFAULT '' NOT NULL,
    assignee_issuer text DEFAULT '' NOT NULL,
    assignee_subject text DEFAULT '' NOT NULL,
    assigned_at timestamp with time zone,
    escalated_at timestamp with time zone,
    resolution_action text,
    resolution_by text,
    resolution_reason text,
    resolution_at timestamp with time zone,
    desk_entered_at timestamp with time zone,
    first_attempt_at timestamp with time zone,
    provider_key_content_version integer DEFAULT 0 NOT NULL,
    provider_key_first_sent_at timestamp with time zone,
    attempts integer DEFAULT 0 NOT NULL,
    retry_from integer DEFAULT 0 NOT NULL,
    next_retry_at timestamp with time zone,
    last_error_class text,
    last_error_code text,
    last_error_message text,
    result_data text,
    result_ref text,
    state text NOT NULL,
    lease_token bigint DEFAULT 0 NOT NULL,
    lease_worker text,
    lease_expires_at timestamp with time zone,
    version bigint NOT NULL,
    audit_head text DEFAULT '' NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    queued boolean GENERATED ALWAYS AS (state IN ('received', 'failed_retryable')) STORED,
    desk_state text GENERATED ALWAYS AS
        (CASE WHEN state IN ('unknown_outcome', 'failed_terminal') THEN state END) STORED,
    desk_result_ref text GENERATED ALWAYS AS
        (CASE WHEN state IN ('unknown_outcome', 'failed_terminal') THEN result_ref END) STORED,
    twin_held boolean GENERATED ALWAYS AS
        (state = 'awaiting_approval' AND last_error_code IS NOT DISTINCT FROM 'twin_unresolved') STORED
) WITH (fillfactor = 85);

INSERT INTO operations_reordered (
    id, namespace, key, type, event_id, source, correlation_id, caused_by, supersedes,
    superseded_by, fingerprint, identity_hash, content_version, content_sha256, content,
    content_author, content_purged_at, provider_key, approval_version, approval_by, approval_at,
    created_at, assignee, assignee_issuer, assignee_subject, assigned_at, escalated_at,
    resolution_action, resolution_by, resolution_reason, resolution_at, desk_entered_at,
    first_attempt_at, provider_key_content_version, provider_key_first_sent_at, attempts,
    retry_from, next_retry_at, last_error_class, last_error_code, last_error_message, result_data,
    result_ref, state, lease_token, lease_worker, lease_expires_at, version, audit_head, updated_at)
SELECT
    id, namespace, key, type, event_id, source, correlation_id, caused_by, supersedes,
    superseded_by, fingerprint, identity_hash, content_version, content_sha256, content,
    content_author, content_purged_at, provider_key, approval_version, approval_by, approval_at,
    created_at, assignee, assignee_issuer, assignee_subject, assigned_at, escalated_at,
    resolution_action, resolution_by, resolution_reason, resolution_at, desk_entered_at,
    first_attempt_at, provider_key_content_version, provider_key_first_sent_at, attempts,
    retry_from, next_retry_at, last_error_class, last_error_code, last_error_message, result_data,
    result_ref, state, lease_token, lease_worker, lease_expires_at, version, audit_head, updated_at
  FROM operations;

ALTER TABLE attempts DROP CONSTRAINT attempts_operation_id_fkey;
ALTER TABLE content_versions DROP CONSTRAINT content_versions_operation_id_fkey;
ALTER TABLE notifications DROP CONSTRAINT notifications_operation_id_fkey;
ALTER TABLE incident_items DROP CONSTRAINT incident_items_operation_id_fkey;
DROP TABLE operations;
ALTER TABLE operations_reordered RENAME TO operations;

ALTER TABLE operations ADD CONSTRAINT operations_pkey PRIMARY KEY (id);
ALTER TABLE operations ADD CONSTRAINT operations_namespace_key UNIQUE (namespace, key);
ALTER TABLE attempts ADD CONSTRAINT attempts_operation_id_fkey FOREIGN KEY (operation_id) REFERENCES operations (id);
ALTER TABLE content_versions ADD CONSTRAINT content_versions_operation_id_fkey FOREIGN KEY (operation_id) REFERENCES operations (id);
ALTER TABLE notifications ADD CONSTRAINT notifications_operation_id_fkey FOREIGN KEY (operation_id) REFERENCES operations (id);
ALTER TABLE incident_items ADD CONSTRAINT incident_items_operation_id_fkey FOREIGN KEY (operation_id) REFERENCES operations (id);

CREATE INDEX operations_list ON operations (created_at, id);
CREATE INDEX operations_event ON operations (namespace, event_id) WHERE event_id <> '';
CREATE INDEX operations_correlation ON operations (correlation_id) WHERE correlation_id <> '';
CREATE INDEX operations_exact_event_id ON operations USING hash (lower(event_id)) WHERE event_id <> '';
CREATE INDEX operations_exact_correlation_id ON operations USING hash (lower(correlation_id)) WHERE correlation_id <> '';
CREATE INDEX operations_exact_provider_key ON operations USING hash (lower(provider_key)) WHERE provider_key <> '';
CREATE INDEX operations_desk_entered ON operations (desk_entered_at) WHERE desk_entered_at IS NOT NULL;
CREATE INDEX operations_resolved ON operations (resolution_at) WHERE resolution_by IS NOT NULL;
CREATE INDEX operations_ready ON operations (namespace, created_at, id) WHERE queued;
CREATE INDEX operations_desk ON operations (desk_state, created_at, id) WHERE desk_state IS NOT NULL;
CREATE INDEX operations_awaiting_lookup ON operations (type) WHERE desk_state = 'unknown_outcome' AND desk_entered_at IS NULL;
CREATE INDEX operations_twin_holds ON operations (namespace, identity_hash) WHERE twin_held;
-- 00029's trigram indexes, where pg_trgm is (see 00004).
-- +goose StatementBegin
DO $$
DECLARE
    ext_schema text;
    col        text;
BEGIN
    SELECT n.nspname INTO ext_schema
      FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
     WHERE e.extname = 'pg_trgm';
    IF ext_schema IS NULL THEN
        RETURN;
    END IF;
    FOREACH col IN ARRAY ARRAY['key', 'event_id', 'correlation_id', 'provider_key', 'result_ref',
                                'last_error_message', 'last_error_code'] LOOP
        EXECUTE format('CREATE INDEX %I ON operations USING gin (lower(COALESCE(%I, %L)) %I.gin_trgm_ops) '
                       'WHERE desk_state IS NOT NULL',
                       'operations_desk_search_' || col, CASE col WHEN 'result_ref' THEN 'desk_result_ref' ELSE col END,
                       '', ext_schema);
    END LOOP;
END
$$;
-- +goose StatementEnd

-- 00028's triggers and 00030's.
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
CREATE TRIGGER operation_sets_insert AFTER INSERT ON operations
    FOR EACH ROW EXECUTE FUNCTION handoff_operation_sets();
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
CREATE TRIGGER operation_sets_delete AFTER DELETE ON operations
    FOR EACH ROW EXECUTE FUNCTION handoff_operation_sets();
ANALYZE operations;

-- +goose Down
-- The order of the columns means nothing to any query, nor to the earlier
-- migrations' Down parts, which name the columns they drop: the table
-- stays as it is.
SELECT 1;
