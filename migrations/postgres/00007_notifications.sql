-- +goose Up
-- The desk clock: when an operation last came to wait on a person, when a
-- person took it, when it was escalated.
ALTER TABLE operations ADD COLUMN desk_entered_at timestamptz;
ALTER TABLE operations ADD COLUMN assigned_at timestamptz;
ALTER TABLE operations ADD COLUMN escalated_at timestamptz;

-- The outbox: one row per notification and destination, written in the
-- transaction of the change that made it due. The id is the webhook-id.
CREATE TABLE notifications (
    id              text PRIMARY KEY,
    operation_id    text NOT NULL REFERENCES operations (id),
    namespace       text NOT NULL,
    op_type         text NOT NULL,
    type            text NOT NULL,
    url             text NOT NULL,
    secret_env      text NOT NULL DEFAULT '',
    format          text NOT NULL,
    summary         text NOT NULL,
    created_at      timestamptz NOT NULL,
    status          text NOT NULL DEFAULT 'pending',
    attempts        integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL,
    claim_token     bigint NOT NULL DEFAULT 0,
    delivered_at    timestamptz,
    last_status     integer NOT NULL DEFAULT 0,
    last_error      text NOT NULL DEFAULT ''
);
CREATE INDEX notifications_due ON notifications (next_attempt_at) WHERE status = 'pending';
CREATE INDEX notifications_operation ON notifications (operation_id, created_at);
CREATE INDEX notifications_destination ON notifications (url, created_at);

-- Every delivery attempt: the answer's status, latency and first 1 KB.
CREATE TABLE notification_attempts (
    notification_id text NOT NULL REFERENCES notifications (id),
    number          integer NOT NULL,
    at              timestamptz NOT NULL,
    status_code     integer NOT NULL DEFAULT 0,
    latency_ms      bigint NOT NULL DEFAULT 0,
    response        text NOT NULL DEFAULT '',
    error           text NOT NULL DEFAULT '',
    outcome         text NOT NULL,
    PRIMARY KEY (notification_id, number)
);

-- +goose Down
DROP TABLE notification_attempts;
DROP TABLE notifications;
ALTER TABLE operations DROP COLUMN escalated_at;
ALTER TABLE operations DROP COLUMN assigned_at;
ALTER TABLE operations DROP COLUMN desk_entered_at;
