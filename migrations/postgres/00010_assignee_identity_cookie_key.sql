-- +goose Up
-- An assignment follows the person, not the email claim: the operation
-- records its assignee as the identity provider names them, (issuer,
-- subject), beside the display identity in assignee. Existing assignments
-- take the person whose identity is theirs when exactly one decider has it;
-- the rest keep "" and are matched on the identity, as before.
ALTER TABLE operations ADD COLUMN assignee_issuer text NOT NULL DEFAULT '';
ALTER TABLE operations ADD COLUMN assignee_subject text NOT NULL DEFAULT '';

UPDATE operations SET
    assignee_issuer = (SELECT p.issuer FROM people p WHERE p.role IN ('operator', 'approver', 'admin')
        AND ((p.email <> '' AND LOWER(p.email) = LOWER(operations.assignee)) OR (p.email = '' AND p.subject = operations.assignee))),
    assignee_subject = (SELECT p.subject FROM people p WHERE p.role IN ('operator', 'approver', 'admin')
        AND ((p.email <> '' AND LOWER(p.email) = LOWER(operations.assignee)) OR (p.email = '' AND p.subject = operations.assignee)))
WHERE assignee <> '' AND (SELECT count(*) FROM people p WHERE p.role IN ('operator', 'approver', 'admin')
    AND ((p.email <> '' AND LOWER(p.email) = LOWER(operations.assignee)) OR (p.email = '' AND p.subject = operations.assignee))) = 1;

-- The key that signs the desk's short-lived cookies (the flash that
-- carries a refusal or a draft across a redirect or a sign-in): one per
-- database, made by the first server that needs it, so that every replica
-- verifies every other's cookies.
CREATE TABLE server_keys (
    name       text PRIMARY KEY,
    secret     text NOT NULL,
    created_at timestamptz NOT NULL
);

-- +goose Down
DROP TABLE server_keys;
ALTER TABLE operations DROP COLUMN assignee_subject;
ALTER TABLE operations DROP COLUMN assignee_issuer;
