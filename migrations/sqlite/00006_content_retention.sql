-- +goose Up
-- Content retention (HANDOFF_CONTENT_RETENTION): when an operation's
-- content snapshots and result data were purged. The key, the fingerprint,
-- the content hashes and the result ref stay, so replays still deduplicate
-- and the audit chains, which hold only hashes, still verify.
ALTER TABLE operations ADD COLUMN content_purged_at datetime;
-- What retention still has to purge: final operations whose content is not
-- empty (purged content is '', which no registered content can be).
CREATE INDEX operations_content_retention ON operations (updated_at) WHERE content <> '' AND state IN ('completed', 'cancelled');

-- +goose Down
DROP INDEX operations_content_retention;
ALTER TABLE operations DROP COLUMN content_purged_at;
