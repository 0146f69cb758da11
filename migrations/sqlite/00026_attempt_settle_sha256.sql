-- +goose Up
-- What each settle asked — its outcome, error class and code, result ref
-- and result data — as a digest (domain.SettleDigest), so that the same
-- settle sent again after it committed is recognised and answered as a
-- replay rather than refused as a stale lease. Attempts settled before
-- this column have none: a settle repeated for them is refused as before.
ALTER TABLE attempts ADD COLUMN settle_sha256 text;

-- +goose Down
ALTER TABLE attempts DROP COLUMN settle_sha256;
