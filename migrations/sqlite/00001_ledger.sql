-- +goose Up
CREATE TABLE operations (
    id                         text PRIMARY KEY,
    namespace                  text NOT NULL,
    key                        text NOT NULL,
    type                       text NOT NULL,
    state                      text NOT NULL,
    version                    bigint NOT NULL,
    event_id                   text NOT NULL DEFAULT '',
    source                     text NOT NULL DEFAULT '',
    correlation_id             text NOT NULL DEFAULT '',
    caused_by                  text NOT NULL DEFAULT '',
    supersedes                 text NOT NULL DEFAULT '',
    superseded_by              text NOT NULL DEFAULT '',
    fingerprint                text NOT NULL,
    content_version            integer NOT NULL,
    content_sha256             text NOT NULL,
    content                    text NOT NULL,
    content_author             text NOT NULL DEFAULT '',
    approval_version           integer,
    approval_by                text,
    approval_at                datetime,
    provider_key               text NOT NULL,
    provider_key_first_sent_at datetime,
    attempts                   integer NOT NULL DEFAULT 0,
    retry_from                 integer NOT NULL DEFAULT 0,
    first_attempt_at           datetime,
    lease_token                bigint NOT NULL DEFAULT 0,
    lease_worker               text,
    lease_expires_at           datetime,
    next_retry_at              datetime,
    result_ref                 text,
    result_data                text,
    last_error_class           text,
    last_error_code            text,
    last_error_message         text,
    assignee                   text NOT NULL DEFAULT '',
    resolution_action          text,
    resolution_by              text,
    resolution_reason          text,
    resolution_at              datetime,
    audit_head                 text NOT NULL DEFAULT '',
    created_at                 datetime NOT NULL,
    updated_at                 datetime NOT NULL,
    CONSTRAINT operations_namespace_key UNIQUE (namespace, key)
);
CREATE INDEX operations_list ON operations (created_at, id);
CREATE INDEX operations_ready ON operations (namespace, created_at, id)
    WHERE state IN ('received', 'failed_retryable');
CREATE INDEX operations_lease_expiry ON operations (lease_expires_at) WHERE lease_expires_at IS NOT NULL;
CREATE INDEX operations_desk ON operations (state, created_at, id)
    WHERE state IN ('unknown_outcome', 'failed_terminal');
CREATE INDEX operations_event ON operations (namespace, event_id) WHERE event_id <> '';
CREATE INDEX operations_correlation ON operations (correlation_id) WHERE correlation_id <> '';
CREATE INDEX operations_provider_key ON operations (provider_key);
CREATE INDEX operations_result_ref ON operations (result_ref) WHERE result_ref IS NOT NULL;

CREATE TABLE attempts (
    id            text PRIMARY KEY,
    operation_id  text NOT NULL REFERENCES operations (id),
    number        integer NOT NULL,
    worker        text NOT NULL,
    lease_token   bigint NOT NULL,
    claimed_at    datetime NOT NULL,
    began_at      datetime,
    settled_at    datetime,
    outcome       text NOT NULL DEFAULT '',
    error_class   text,
    error_code    text,
    error_message text,
    CONSTRAINT attempts_operation_number UNIQUE (operation_id, number)
);

CREATE TABLE content_versions (
    operation_id text NOT NULL REFERENCES operations (id),
    version      integer NOT NULL,
    content      text NOT NULL,
    sha256       text NOT NULL,
    created_by   text NOT NULL DEFAULT '',
    created_at   datetime NOT NULL,
    reason       text NOT NULL DEFAULT '',
    approved_by  text,
    approved_at  datetime,
    rejected_by  text,
    rejected_at  datetime,
    PRIMARY KEY (operation_id, version)
);

-- One stream per operation (stream = operation id) plus the system stream;
-- seq is gap-free within a stream and the hashes chain each stream.
CREATE TABLE audit_events (
    pos             integer PRIMARY KEY AUTOINCREMENT,
    id              text NOT NULL UNIQUE,
    stream          text NOT NULL,
    seq             bigint NOT NULL,
    operation_id    text NOT NULL DEFAULT '',
    namespace       text NOT NULL DEFAULT '',
    at              datetime NOT NULL,
    actor_kind      text NOT NULL,
    actor_name      text NOT NULL DEFAULT '',
    actor_namespace text NOT NULL DEFAULT '',
    actor_issuer    text NOT NULL DEFAULT '',
    actor_subject   text NOT NULL DEFAULT '',
    actor_email     text NOT NULL DEFAULT '',
    actor_role      text NOT NULL DEFAULT '',
    action          text NOT NULL,
    from_state      text NOT NULL DEFAULT '',
    to_state        text NOT NULL DEFAULT '',
    reason          text NOT NULL DEFAULT '',
    detail          text NOT NULL DEFAULT '',
    request_id      text NOT NULL DEFAULT '',
    client_addr     text NOT NULL DEFAULT '',
    prev_hash       text NOT NULL DEFAULT '',
    hash            text NOT NULL,
    CONSTRAINT audit_events_stream_seq UNIQUE (stream, seq)
);
CREATE INDEX audit_events_at ON audit_events (at, pos);

CREATE TABLE events (
    namespace      text NOT NULL,
    event_id       text NOT NULL,
    source         text NOT NULL DEFAULT '',
    correlation_id text NOT NULL DEFAULT '',
    fingerprint    text NOT NULL,
    actions        text NOT NULL,
    received_at    datetime NOT NULL,
    PRIMARY KEY (namespace, event_id)
);

CREATE TABLE operation_types (
    name       text NOT NULL,
    version    integer NOT NULL,
    sha256     text NOT NULL,
    definition text NOT NULL,
    loaded_at  datetime NOT NULL,
    PRIMARY KEY (name, version)
);

CREATE TABLE api_tokens (
    id           text PRIMARY KEY,
    namespace    text NOT NULL,
    name         text NOT NULL,
    hash         text NOT NULL UNIQUE,
    created_at   datetime NOT NULL,
    revoked_at   datetime,
    last_used_at datetime
);

-- +goose Down
DROP TABLE api_tokens;
DROP TABLE operation_types;
DROP TABLE events;
DROP TABLE audit_events;
DROP TABLE content_versions;
DROP TABLE attempts;
DROP TABLE operations;
