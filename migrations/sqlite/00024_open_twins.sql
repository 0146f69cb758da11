-- +goose Up
-- A twin is open while it is on its way to the provider or back
-- (domain.TwinStates: queued, claimed, waiting for a retry, or in doubt),
-- not only while its outcome is in doubt: two registrations of one content
-- under different keys that both waited for their begin (the three-call
-- form, or a queue) both executed. The partial index that the twin check
-- reads holds the open states; store/twin.go spells the same predicate.
DROP INDEX IF EXISTS operations_twins;
CREATE INDEX operations_twins ON operations (namespace, fingerprint)
    WHERE state IN ('received', 'processing', 'action_pending', 'unknown_outcome', 'failed_retryable', 'failed_terminal');

-- +goose Down
DROP INDEX IF EXISTS operations_twins;
CREATE INDEX operations_twins ON operations (namespace, fingerprint)
    WHERE state IN ('action_pending', 'unknown_outcome', 'failed_terminal');
