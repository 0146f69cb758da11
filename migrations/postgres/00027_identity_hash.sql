-- +goose Up
-- Twins by intent (invariant 14): a card may name the content fields that
-- make two registrations the same business intent (its identity line).
-- The twin hold and the echo guard compare identity_hash, which is the
-- fingerprint (the exact content) for a card without the line and for
-- every operation registered before it was kept. The twins' indexes move
-- to it; store/twin.go spells their predicates.
ALTER TABLE operations ADD COLUMN identity_hash text NOT NULL DEFAULT '';
UPDATE operations SET identity_hash = fingerprint;

DROP INDEX IF EXISTS operations_twins;
CREATE INDEX operations_twins ON operations (namespace, identity_hash)
    WHERE state IN ('received', 'processing', 'action_pending', 'unknown_outcome', 'failed_retryable', 'failed_terminal');
DROP INDEX IF EXISTS operations_twin_holds;
CREATE INDEX operations_twin_holds ON operations (namespace, identity_hash)
    WHERE state = 'awaiting_approval' AND last_error_code = 'twin_unresolved';

-- The echo guard: the operation of an identity that completed latest,
-- within a card's echo window. Its predicate names identity_hash, as the
-- guard's query does, so that no other query that only asks for completed
-- operations (the Operations page filtered by state) is planned over it.
CREATE INDEX operations_echoes ON operations (namespace, identity_hash, updated_at)
    WHERE state = 'completed' AND identity_hash <> '';

-- +goose Down
DROP INDEX IF EXISTS operations_echoes;
DROP INDEX IF EXISTS operations_twin_holds;
CREATE INDEX operations_twin_holds ON operations (namespace, fingerprint)
    WHERE state = 'awaiting_approval' AND last_error_code = 'twin_unresolved';
DROP INDEX IF EXISTS operations_twins;
CREATE INDEX operations_twins ON operations (namespace, fingerprint)
    WHERE state IN ('received', 'processing', 'action_pending', 'unknown_outcome', 'failed_retryable', 'failed_terminal');
ALTER TABLE operations DROP COLUMN identity_hash;
