-- +goose Up
-- Drill receipts: every `handoff drill` run of an operation type, with the
-- receipt as written. Its hash is also in the system audit stream
-- (drill_recorded), so an edited receipt file, or an edited row, no longer
-- matches the chained event.
CREATE TABLE drill_receipts (
    id           text PRIMARY KEY,
    type         text NOT NULL,
    card_version integer NOT NULL,
    card_sha256  text NOT NULL,
    verdict      text NOT NULL,
    sha256       text NOT NULL,
    ran_by       text NOT NULL,
    ran_at       datetime NOT NULL,
    receipt      text NOT NULL
);
CREATE INDEX drill_receipts_type ON drill_receipts (type, ran_at);

-- +goose Down
DROP TABLE drill_receipts;
