-- +goose Up
-- provider_key_content_version is the content version the current provider
-- key was first sent with (0: not sent yet, or sent before this was kept
-- with a revised content, which nobody can tell now). A revision after a
-- send goes out under a new provider key, never under one that a provider
-- remembers with other content (PRODUCT.md invariant 9).
ALTER TABLE operations ADD COLUMN provider_key_content_version integer NOT NULL DEFAULT 0;
UPDATE operations SET provider_key_content_version = 1
 WHERE provider_key_first_sent_at IS NOT NULL AND content_version = 1;

-- A registration looks for a twin: the same type and content under another
-- key whose outcome is still open (invariant 10). Only those states are
-- indexed, so the index stays as small as the desk.
CREATE INDEX operations_twins ON operations (namespace, fingerprint)
    WHERE state IN ('action_pending', 'unknown_outcome', 'failed_terminal');

-- A drill credential is an API token that acts as a person with a role
-- (operator or approver), issued by an admin with handoff token create
-- --drill-person, so a drill can revise and approve against a Handoff whose
-- people sign in without an OIDC provider that issues bearer tokens. ''
-- for a workflow token.
ALTER TABLE api_tokens ADD COLUMN person_role text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE api_tokens DROP COLUMN person_role;
DROP INDEX IF EXISTS operations_twins;
ALTER TABLE operations DROP COLUMN provider_key_content_version;
