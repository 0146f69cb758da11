-- +goose Up
-- Handoff's own lookups at the provider: one row per operation and
-- attempt that entered unknown_outcome on a card with a lookup adapter.
-- Reconcilers claim due rows (SKIP LOCKED on PostgreSQL) by raising
-- claim_token and pushing due_at out by their lease, and record each try
-- with a compare-and-set on claim_token: each try is made once.
CREATE TABLE lookups (
    operation_id text NOT NULL,
    attempt      integer NOT NULL,
    op_type      text NOT NULL,
    due_at       datetime NOT NULL,
    claim_token  bigint NOT NULL DEFAULT 0,
    started_at   datetime,
    tries        text NOT NULL DEFAULT '[]',
    conclusion   text NOT NULL DEFAULT '',
    created_at   datetime NOT NULL,
    PRIMARY KEY (operation_id, attempt)
);
CREATE INDEX lookups_due ON lookups (due_at) WHERE conclusion = '';
-- The operations awaiting a lookup: unknown_outcome without a desk clock.
CREATE INDEX operations_awaiting_lookup ON operations (type) WHERE state = 'unknown_outcome' AND desk_entered_at IS NULL;

-- +goose Down
DROP INDEX operations_awaiting_lookup;
DROP TABLE lookups;
