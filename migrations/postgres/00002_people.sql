-- +goose Up
-- People who signed in, keyed on (issuer, subject): an email address can be
-- reassigned by the provider, a subject cannot.
CREATE TABLE people (
    issuer        text NOT NULL,
    subject       text NOT NULL,
    email         text NOT NULL DEFAULT '',
    name          text NOT NULL DEFAULT '',
    role          text NOT NULL,
    first_seen_at timestamptz NOT NULL,
    last_seen_at  timestamptz NOT NULL,
    PRIMARY KEY (issuer, subject)
);

-- Desk sessions: only the SHA-256 of the cookie value is stored.
CREATE TABLE sessions (
    hash         text PRIMARY KEY,
    issuer       text NOT NULL,
    subject      text NOT NULL,
    email        text NOT NULL DEFAULT '',
    name         text NOT NULL DEFAULT '',
    role         text NOT NULL,
    created_at   timestamptz NOT NULL,
    last_seen_at timestamptz NOT NULL
);
CREATE INDEX sessions_last_seen ON sessions (last_seen_at);
CREATE INDEX sessions_created ON sessions (created_at);

-- Sign-ins waiting for the provider's answer: single use, short-lived.
CREATE TABLE login_attempts (
    state_hash    text PRIMARY KEY,
    nonce_hash    text NOT NULL,
    code_verifier text NOT NULL,
    return_to     text NOT NULL DEFAULT '',
    created_at    timestamptz NOT NULL,
    expires_at    timestamptz NOT NULL
);
CREATE INDEX login_attempts_expires ON login_attempts (expires_at);

-- +goose Down
DROP TABLE login_attempts;
DROP TABLE sessions;
DROP TABLE people;
