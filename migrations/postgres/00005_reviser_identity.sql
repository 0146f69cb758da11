-- +goose Up
-- Four eyes follow the person, not the email claim: a content version
-- records who revised it as the identity provider names them, (issuer,
-- subject), beside the display identity in created_by.
ALTER TABLE content_versions ADD COLUMN created_by_issuer text NOT NULL DEFAULT '';
ALTER TABLE content_versions ADD COLUMN created_by_subject text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE content_versions DROP COLUMN created_by_subject;
ALTER TABLE content_versions DROP COLUMN created_by_issuer;
